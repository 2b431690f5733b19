"""Make the helper modules in tests/ importable, the checkout's package take precedence, and
share the session-wide kernel library."""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS.parent))


@pytest.fixture(scope="session")
def kernel_library(tmp_path_factory) -> Path:
    """samples/kernels built once per session with cffi, its handlers registered with JAX."""
    from kernel_library import build_kernel_library, register_with_jax

    path = build_kernel_library(tmp_path_factory.mktemp("kernels"))
    register_with_jax(path)
    return path
