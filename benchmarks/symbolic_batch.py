"""Programs exported with a symbolic batch, called at several batch sizes on every path.

Run from the repository root: ``python benchmarks/symbolic_batch.py [--markdown]``. Each
program is exported once with ``symbolic_shape("b, ...")`` and run by ``jax.jit``,
``rewriter.compile`` and ``rewriter.iree`` (``load`` without a driver: each call on the
driver its sizes choose, ``rewriter/iree/drivers.py``) at batches of 1 to 1024 (an
attention of 128 tokens, ``blocks.attention``'s program, at batches of 1 to 64), the paths in
turns: the least of 5 medians of a call's wall time in ms, and its ratio to ``jax.jit``'s,
with the driver the IREE call ran on. Inputs are 64-byte aligned (``report.aligned``). One
OpenBLAS thread, as ``speed.py``, unless ``OPENBLAS_NUM_THREADS`` is set.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rewriter  # noqa: E402
from benchmarks.blocks import attention, block  # noqa: E402
from benchmarks.report import aligned, figures, header, row  # noqa: E402
from benchmarks.sort_speed import median_ms  # noqa: E402
from rewriter.compile import compile_module, load  # noqa: E402
from rewriter.iree import load as load_iree  # noqa: E402
from rewriter.iree.drivers import work_by_size  # noqa: E402

BATCHES = (1, 8, 128, 1024)
ATTENTION_BATCHES = (1, 4, 16, 64)  # of 128 tokens each


def attention_of_any_batch(tokens: int, width: int, heads: int) -> Callable[..., object]:
    """``blocks.attention``'s program, its batch read from its input (a reshape of -1)."""
    scale = np.float32(1 / np.sqrt(width // heads))

    def attention_of(x, wq, wk, wv, wo):
        def split(t):
            return t.reshape(-1, tokens, heads, width // heads)

        q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) * scale
        mixed = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, axis=-1), v)
        return x + mixed.reshape(-1, tokens, width) @ wo

    return attention_of


def programs() -> dict[str, tuple[Callable[..., object], list[np.ndarray], tuple[int, ...]]]:
    """name: (function, its inputs after the batch, the shape of an item of the batch)."""
    made = block("f32", 1, 256)
    heads = attention("f32", 1, 128, 256, 8)
    return {
        "block, width 256": (made.function, made.inputs[1:], (256,)),
        "tanh(x) * 2 + exp(-x * x), width 1024": (
            lambda x: jnp.tanh(x) * 2 + jnp.exp(-x * x),
            [],
            (1024,),
        ),
        "softmax, width 1024": (lambda x: jax.nn.softmax(x, axis=-1), [], (1024,)),
        "attention, 128 tokens, width 256, 8 heads": (
            attention_of_any_batch(128, 256, 8),
            heads.inputs[1:],
            (128, 256),
        ),
    }


def main() -> None:
    print(header("program", "batch", "jax.jit ms", "compile ms (x jit)", "iree ms (x jit)",
                 "iree driver"))  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="symbolic-batch-"))
    for number, (name, (function, rest, item)) in enumerate(programs().items()):
        dimensions = ", ".join(str(size) for size in item)
        spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape(f"b, {dimensions}"), np.float32)
        text = rewriter.export(function, spec, *rest).text
        library = work / f"{number}.so"
        compile_module(rewriter.rewrite(text).text, library)
        module = work / f"{number}.iree.mlir"
        iree_text = rewriter.rewrite(text, abi="iree").text
        module.write_text(iree_text)
        sized = work_by_size(iree_text)
        runs = {
            "jit": jax.jit(function),
            "compile": load(library).main,
            "iree": load_iree(module, imports={}).main,
        }
        for batch in ATTENTION_BATCHES if len(item) > 1 else BATCHES:
            rng = np.random.default_rng(batch)
            x = aligned(rng.standard_normal((batch, *item)).astype(np.float32))
            arguments = [x, *rest]
            best = dict.fromkeys(runs, float("inf"))
            for _ in range(5):
                for path, run in runs.items():
                    best[path] = min(best[path], median_ms(run, arguments, 0.2))
            jit = best["jit"]
            cells = [f"{best[p]:.3f} ({best[p] / jit:.2f}x)" for p in ("compile", "iree")]
            driver = sized.driver(batch) if sized is not None else "?"  # as load chooses
            print(row(name, batch, f"{jit:.3f}", *cells, driver), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    chosen = parser.parse_args()
    with figures("symbolic_batch", chosen.markdown):
        main()
