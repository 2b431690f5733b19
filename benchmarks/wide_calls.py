"""One FFI call of many operands: the rewrite's time grows linearly with them.

Run from the repository root: ``python benchmarks/wide_calls.py [--operands N,...]
[--rounds R] [--markdown]``. For each count (default 1,000, 4,000 and 16,000), jax exports
a program whose one ``jax.ffi.ffi_call`` takes that many operands (a pytree of parameters
handed to one kernel). Then, the least of ``--rounds`` runs (default 3) each: the CPU time
of one rewrite in a new process, as the command line runs it (``call_dense.py --one``);
of a rewrite in this process after the first (which finds the statement's parse kept from
the first); of jaxlib's parse+print; the ratio of jaxlib's time to the new process's
(above 1: the rewrite is faster); and the growth of the new process's time and of
jaxlib's from one count to the next, 4x as many operands (at most 4.4x is linear).

Such a call is one statement of one shape, seen once: its lark parse, in Python, is what
the rewrite in a new process costs, and shares nothing with another call.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rewriter  # noqa: E402
from benchmarks.call_dense import (  # noqa: E402
    fresh_process_seconds,
    jaxlib_parse_and_print,
    least_in_turns,
    least_reported,
)
from benchmarks.report import figures, header, row, sizes  # noqa: E402

OPERANDS = (1_000, 4_000, 16_000)


def wide_export(operands: int) -> str:
    """The text of a jax export of one FFI call taking ``operands`` arrays of 4 floats."""

    def model(*xs):
        out = jax.ShapeDtypeStruct((4,), jnp.float32)
        return jax.ffi.ffi_call("wide_kernel", out)(*xs, eps=np.float32(1e-5))

    arguments = [jax.ShapeDtypeStruct((4,), jnp.float32)] * operands
    return rewriter.export(model, *arguments).exported.mlir_module()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--operands",
        type=sizes,
        default=",".join(map(str, OPERANDS)),
        help="comma-separated operand counts (default: %(default)s)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="runs of each (default: 3)")
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for count in arguments.operands:
            paths[count] = Path(folder) / f"wide_{count}.mlir"
            paths[count].write_text(wide_export(count))
        with figures("wide_calls", arguments.markdown):
            measure(paths, arguments.rounds)


def measure(paths: dict[int, Path], rounds: int) -> None:
    print(
        header(
            "operands", "MB", "new process s", "again s", "jaxlib s", "ratio", "growth",
            "jaxlib's",
        )
    )  # fmt: skip
    previous: tuple[float, float] | None = None
    for count, path in paths.items():
        text = path.read_text()
        fresh = least_reported({"fresh": lambda path=path: fresh_process_seconds(path)}, rounds)
        rewriter.rewrite(text)  # the first in this process
        least = least_in_turns(
            {
                "again": lambda text=text: rewriter.rewrite(text).text,
                "jaxlib": jaxlib_parse_and_print(text),
            },
            rounds,
            0.0,
        )
        ours, theirs = fresh["fresh"], least["jaxlib"]
        growth = ["", ""]
        if previous is not None:
            growth = [f"{ours / previous[0]:.2f}x", f"{theirs / previous[1]:.2f}x"]
        megabytes = len(text.encode()) / 1e6
        print(
            row(count, f"{megabytes:.2f}", f"{ours:.3f}", f"{least['again']:.3f}",
                f"{theirs:.3f}", f"{theirs / ours:.2f}", *growth)
        )  # fmt: skip
        previous = (ours, theirs)


if __name__ == "__main__":
    main()
