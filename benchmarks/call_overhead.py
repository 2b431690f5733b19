"""What a call costs from Python: jax.jit, rewriter.compile.load and rewriter.iree.load on
programs that do almost nothing, side by side in one process, on inputs 64-byte aligned
as ``jax.jit`` reads them in place (``report.aligned``).

Run from the repository root: ``python benchmarks/call_overhead.py [--calls N]``. Each
program (``x + 1`` on 10 floats, on 4 arguments of 10x10, and three results of 10 floats)
is exported with jax, compiled on both paths (IREE's module loaded on ``local-task``, on
``local-sync`` and on the driver ``load`` picks without one, ``iree-default``: what a user
gets) and called N
times per round, in turns, for 5 rounds; the least round's mean time per call is printed in
microseconds, with its ratio to jax.jit. Prints the load average first: the figures are
only as quiet as the machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import jax
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rewriter  # noqa: E402
from benchmarks.report import aligned, figures  # noqa: E402
from rewriter.compile import compile_module, load  # noqa: E402


def plus_one(x):
    return x + 1


def four_arguments(a, b, c, d):
    return a + b * c - d


def three_results(x):
    return x + 1, x * 2, x - 3


PROGRAMS = {
    "x + 1": (plus_one, [aligned(np.ones(10, np.float32))]),
    "4 arguments": (four_arguments, [aligned(np.ones((10, 10), np.float32))] * 4),
    "3 results": (three_results, [aligned(np.ones(10, np.float32))]),
}


def least_mean(functions: dict[str, object], arguments: list, calls: int) -> dict[str, float]:
    """Each function called ``calls`` times a round, the functions in turns, 5 rounds: the
    least round's mean seconds per call."""
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(5):
        for name, function in functions.items():
            start = time.perf_counter()
            for _ in range(calls):
                function(*arguments)
            best[name] = min(best[name], (time.perf_counter() - start) / calls)
    return best


def main(argv: list[str] | None = None) -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--calls", type=int, default=20000, help="calls a round (20000)")
    options.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    arguments = options.parse_args(argv)
    with figures("call_overhead", arguments.markdown):
        measure(arguments.calls)


def measure(calls: int) -> None:
    print(
        "| program | jax.jit us | rewriter.compile us | x jit | rewriter.iree us (local-task) "
        "| x jit | rewriter.iree us (local-sync) | x jit | rewriter.iree us (load's choice) "
        "| x jit |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    from rewriter.iree import load as iree_load

    for name, (function, inputs) in PROGRAMS.items():
        exported = jax.export.export(jax.jit(function), platforms=["cpu"])(*inputs)
        text = exported.mlir_module()
        with tempfile.TemporaryDirectory() as folder:
            library = Path(folder) / "libprogram.so"
            compile_module(rewriter.rewrite(text).text, library)
            compiled = load(library)
            iree_module = Path(folder) / "program.iree.mlir"
            iree_module.write_text(rewriter.rewrite(text, abi="iree").text)
            iree = iree_load(iree_module, imports={}, driver="local-task")
            iree_sync = iree_load(iree_module, imports={}, driver="local-sync")
            iree_default = iree_load(iree_module, imports={})
            jitted = jax.jit(function)
            jax.block_until_ready(jitted(*inputs))
            times = least_mean(
                {"jit": lambda *a, f=jitted: jax.block_until_ready(f(*a)), "compile": compiled.main,
                 "iree": iree.main, "iree-sync": iree_sync.main,
                 "iree-default": iree_default.main},
                inputs,
                calls,
            )  # fmt: skip
        jit, compile_time, iree_time, sync_time, default_time = (
            times[k] * 1e6 for k in ("jit", "compile", "iree", "iree-sync", "iree-default")
        )
        print(
            f"| {name} | {jit:.1f} | {compile_time:.1f} | {compile_time / jit:.2f} | "
            f"{iree_time:.1f} | {iree_time / jit:.2f} | {sync_time:.1f} | {sync_time / jit:.2f} | "
            f"{default_time:.1f} ({iree_default.driver}) | {default_time / jit:.2f} |"
        )


if __name__ == "__main__":
    main()
