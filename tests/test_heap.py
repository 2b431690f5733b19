"""A loaded model's calls reuse the memory the last call freed (``rewriter/compile/heap.py``).

Without it glibc gave a call's freed buffers back to the system and the next call faulted
them in again: 1,290 minor page faults a call on the conv block, which took 2.7x the CPU.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_CHILD = """
import resource, sys
import numpy as np
from rewriter.compile import load
from rewriter.compile.heap import keep_freed_memory
main = load(sys.argv[1]).main
a = np.full((256, 256), 0.01, np.float32)
for _ in range(3):
    main(a, a)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    main(a, a)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, keep_freed_memory())
"""


def _faults(library: Path, **environment: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, str(library)],
        cwd=ROOT,
        env={**env, **environment},
        capture_output=True,
        text=True,
        check=True,
    )
    faults, kept = run.stdout.split()
    return int(faults), kept


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
@pytest.mark.jax
def test_calls_after_the_first_fault_in_no_pages(tmp_path):
    """Three 256 x 256 products and a tanh: each call allocates and frees 256 KB buffers,
    each of them 64 pages."""
    import jax.numpy as jnp
    import numpy as np

    import rewriter
    from rewriter.compile import compile_module

    a = np.ones((256, 256), np.float32)
    text = rewriter.export(lambda a, b: jnp.tanh(jnp.tanh(a @ b) @ b) @ b, a, a).text
    library = tmp_path / "libmodel.so"
    compile_module(rewriter.rewrite(text).text, library)
    faults, kept = _faults(library)
    assert kept == "True"
    assert faults < 20  # a fault a call at most; glibc's own heap gave 64 a buffer
    # A setting of the user's stays: then glibc decides (and here gives the pages back).
    faults, kept = _faults(library, MALLOC_TRIM_THRESHOLD_="131072")
    assert kept == "False"
    assert faults >= 20 * 64
