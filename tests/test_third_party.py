"""Third-party JAX libraries whose CPU kernels are XLA FFI handlers, from the package index
(klujax: KLU sparse solves; sparsax: SuiteSparse's CHOLMOD and UMFPACK), exported, rewritten
and run on both paths against ``jax.jit``: solves, log-determinants and their gradients.

The handlers are the ones the libraries register with JAX at import, read back from JAX's
registry (``registered_handlers``): the same capsules ``jax.jit`` calls.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.jax, pytest.mark.iree, pytest.mark.toolchain, pytest.mark.slow]

LIBRARIES = {"klujax": "klujax==0.5.2 jaxtyping", "sparsax": "sparsax==0.9.0"}


def library(name: str):
    """The library ``name``, imported; skipped with its install command when it is missing
    (failed under CI=true: CI installs the test extra, which names it)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        message = f"{name} is not installed: pip install {LIBRARIES[name]}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message} (CI=true: a missing package is a failure)")
        pytest.skip(message)


def registered_handlers() -> dict[str, object]:
    """Every XLA FFI handler registered with JAX for the CPU in this process, by target, as
    ``{"execute": capsule}`` bundles (registrations made before the CPU backend existed
    reach the registry when it starts)."""
    import jax
    from jax._src.lib import xla_client

    jax.devices("cpu")
    return dict(xla_client.custom_call_targets("cpu"))


# A 5x5 symmetric positive definite matrix in COO form (upper triangle and diagonal) and
# a right-hand side; f64, as both libraries are.
ROWS = np.array([0, 1, 2, 3, 4, 0, 1, 2, 3], np.int32)
COLUMNS = np.array([0, 1, 2, 3, 4, 1, 2, 3, 4], np.int32)


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.uniform(4, 5, 5), rng.uniform(-1, 1, 4)])
    return values, rng.normal(size=5)


def programs() -> dict[str, tuple[str, Callable[..., Callable]]]:
    """name -> (library, function of the library module giving the program)."""

    def summed_gradient(solve):
        import jax

        return jax.grad(lambda a, b: solve(a, b).sum(), argnums=(0, 1))

    return {
        "klujax_solve": ("klujax", lambda k: lambda a, b: k.solve(ROWS, COLUMNS, a, b)),
        "klujax_solve_gradient": (
            "klujax",
            lambda k: summed_gradient(lambda a, b: k.solve(ROWS, COLUMNS, a, b)),
        ),
        "sparsax_cholesky_solve": ("sparsax", lambda s: lambda a, b: s.solve(ROWS, COLUMNS, a, b)),
        "sparsax_cholesky_solve_gradient": (
            "sparsax",
            lambda s: summed_gradient(lambda a, b: s.solve(ROWS, COLUMNS, a, b)),
        ),
        "sparsax_lu_solve": ("sparsax", lambda s: lambda a, b: s.lu_solve(ROWS, COLUMNS, a, b)),
        "sparsax_logdet": ("sparsax", lambda s: lambda a, b: s.logdet(ROWS, COLUMNS, a, 5) * b),
    }


PROGRAMS = programs()


@pytest.mark.parametrize("path", ["compile", "iree"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_third_party_program_gives_jax_jit_numbers(name: str, path: str, tmp_path: Path):
    import jax

    import rewriter

    with jax.enable_x64(True):
        library_name, make = PROGRAMS[name]
        program = make(library(library_name))
        handlers = registered_handlers()
        values, rhs = inputs()
        exported = jax.export.export(
            jax.jit(program),
            platforms=["cpu"],
            disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(t) for t in handlers],
        )(values, rhs)
        text = exported.mlir_module()
        targets = {call.target for call in rewriter.analyze(text).calls}
        assert targets and all(t.startswith(("sparsax_", "solve", "dot", "tsolve")) or
                               t in handlers for t in targets)  # fmt: skip
        want = jax.tree.leaves(jax.jit(program)(values, rhs))
        if path == "compile":
            from rewriter.compile import compile_module, load

            module = tmp_path / "rewritten.mlir"
            module.write_text(rewriter.rewrite(text).text)
            compile_module(module, tmp_path / "libprogram.so", ffi_bridge=True)
            got = load(tmp_path / "libprogram.so", ffi_handlers=handlers).main(values, rhs)
        else:
            from rewriter.iree import load as iree_load

            module = tmp_path / "program.iree.mlir"
            module.write_text(rewriter.rewrite(text, abi="iree").text)
            got = iree_load(module, imports=handlers).main(values, rhs)
    got = jax.tree.leaves(got)
    assert len(got) == len(want)
    for value, expected in zip(got, want, strict=True):
        if name.endswith("_gradient"):
            # The handlers' numbers are the same; the code around the calls (the gradient's
            # products of the solve with the right-hand side) may sum in another order:
            # a few f64 roundings, far below rtol 1e-12 (seen: 3e-16).
            np.testing.assert_allclose(value, np.asarray(expected), rtol=1e-12, atol=0)
        else:  # the handler's result itself: bit for bit
            np.testing.assert_array_equal(value, np.asarray(expected))
