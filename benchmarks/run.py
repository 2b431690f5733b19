"""Speed and memory figures of the rewrite against jaxlib's C++ parser, in one process.

``python benchmarks/make_corpus.py`` first, then ``python benchmarks/run.py [CORPUS_DIR]``.
For every corpus file: the median of REPEATS runs of (a) ``rewriter.rewrite(text).text``
(the rewritten text is joined when first read) and (b) jaxlib's ``ir.Module.parse`` plus
``get_asm(enable_debug_info=True)``, their MB/s and ratio (b's time over a's: above 1.0 the
rewrite is faster), and the rewrite's peak Python memory. Then the growth from 6 to 48
layers, the CLI start-up time, and the median time of the full validating parse through the
grammar (``rewriter.validate``) of the largest stack and of the weights, against jaxlib's
parse+print of the same file.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rewriter  # noqa: E402
from benchmarks.report import figures, header, row  # noqa: E402

REPEATS = 5


def median_seconds(action, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def jaxlib_parse_and_print(text: str):
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    context = mlir.make_ir_context()

    def run() -> None:
        module = ir.Module.parse(text, context=context)
        module.operation.get_asm(enable_debug_info=True)

    return run


def peak_memory(action) -> int:
    gc.collect()
    tracemalloc.start()
    action()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=ROOT / "benchmarks" / "corpus")
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    options = parser.parse_args()
    with figures("run", options.markdown):
        measure(options.corpus)


def measure(corpus: Path) -> None:
    files = sorted(corpus.glob("layers_*.mlir"), key=lambda p: int(p.stem.split("_")[1]))
    files += [corpus / "weights.mlir"]
    rewriter.rewrite(files[0].read_text())  # build (or load) the grammar once
    print(
        header(
            "file", "MB", "rewrite s", "MB/s", "jaxlib s", "MB/s", "ratio", "peak MB", "limit MB"
        )
    )
    times, jaxlib_times = {}, {}
    for path in files:
        text = path.read_text()
        megabytes = len(text.encode()) / 1e6
        ours = median_seconds(lambda text=text: rewriter.rewrite(text).text)
        theirs = median_seconds(jaxlib_parse_and_print(text))
        peak = peak_memory(lambda text=text: rewriter.rewrite(text).text) / 1e6
        times[path.stem], jaxlib_times[path.stem] = ours, theirs
        print(
            row(
                path.stem,
                f"{megabytes:.1f}",
                f"{ours:.3f}",
                f"{megabytes / ours:.1f}",
                f"{theirs:.3f}",
                f"{megabytes / theirs:.1f}",
                f"{theirs / ours:.2f}",
                f"{peak:.0f}",
                f"{3 * megabytes + 100:.0f}",
            ),
            flush=True,
        )
    if "layers_6" in times and "layers_48" in times:
        print(f"growth: 48 layers / 6 layers = {times['layers_48'] / times['layers_6']:.1f}x time")
    startup = median_seconds(
        lambda: subprocess.run(
            [sys.executable, "-m", "rewriter", "--version"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
    )
    print(f"CLI start-up (python -m rewriter --version): {startup:.3f} s")
    for path in files[-2:]:  # the largest stack, and the weights
        text = path.read_text()
        full = median_seconds(lambda text=text: rewriter.validate(text))
        print(
            f"full validating parse of {path.name}: {full:.3f} s = "
            f"{full / jaxlib_times[path.stem]:.2f}x jaxlib parse+print"
        )


if __name__ == "__main__":
    main()
