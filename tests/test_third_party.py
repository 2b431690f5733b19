"""Third-party JAX libraries whose CPU kernels are XLA FFI handlers, from the package index
(klujax: KLU sparse solves; sparsax: SuiteSparse's CHOLMOD and UMFPACK; jax-finufft:
FINUFFT's non-uniform FFTs; mpi4jax: MPI collectives), exported, rewritten and run on both
paths against ``jax.jit``: solves, log-determinants, transforms, collectives and their
gradients.

mpi4jax's calls thread a token (an ordered effect: ``main`` takes and returns one) and
carry the addresses of MPI's communicator, datatype and op handles as attributes, valid in
the process that exported the program only: each program is exported and run in this one,
a singleton MPI world (no mpirun), where every collective is its one rank's.

The handlers are the ones the libraries register with JAX at import, read back from JAX's
registry (``registered_handlers``): the same capsules ``jax.jit`` calls.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.jax, pytest.mark.iree, pytest.mark.toolchain, pytest.mark.slow]

LIBRARIES = {
    "klujax": "klujax==0.5.2 jaxtyping",
    "sparsax": "sparsax==0.9.0",
    "jax_finufft": "jax-finufft==1.3.1",
    # the mpi extra: built from source against an MPI (scripts/install.sh installs both)
    "mpi4jax": "mpi4jax==0.9.1.post2 mpi4py (after apt-get install libopenmpi-dev openmpi-bin)",
}


def library(name: str):
    """The library ``name``, imported; skipped with its install command when it is missing
    (failed under CI=true: CI runs scripts/install.sh, which installs the test extra, which
    names it, and mpi4jax's mpi extra)."""
    if name == "mpi4jax":
        # Open MPI refuses to start as root without these (containers, CI); MPI starts on
        # the import of mpi4py, as a singleton world.
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    import jax

    x64 = jax.config.jax_enable_x64  # called outside any jax.enable_x64: the global mode
    try:
        return importlib.import_module(name)
    except ImportError:
        message = f"{name} is not installed: pip install {LIBRARIES[name]}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message} (CI=true: a missing package is a failure)")
        pytest.skip(message)
    finally:  # klujax turns the mode on as it is imported, for every test after this one
        jax.config.update("jax_enable_x64", x64)


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


def sparse_inputs() -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.uniform(4, 5, 5), rng.uniform(-1, 1, 4)])
    return values, rng.normal(size=5)


def nonuniform_inputs(kind: str, dims: int, precision: int) -> tuple[np.ndarray, ...]:
    """Arguments of a NUFFT program: for type 1, strengths at 200 non-uniform points and the
    points' coordinates (one array per dimension, in [-pi, pi)); for type 2, a grid of
    Fourier modes (12 per dimension) and the points. ``precision`` 32: f32 and complex64,
    64: f64 and complex128."""
    rng = np.random.default_rng(1)
    real = np.float32 if precision == 32 else np.float64
    complex_ = np.complex64 if precision == 32 else np.complex128
    points = [rng.uniform(-np.pi, np.pi, 200).astype(real) for _ in range(dims)]
    shape = (200,) if kind == "type1" else (12,) * dims
    source = (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(complex_)
    return (source, *points)


@dataclass(frozen=True)
class Program:
    library: str
    make: Callable[..., Callable]  # the library module -> the program
    arguments: Callable[[], tuple[np.ndarray, ...]]
    x64: bool = True  # run under jax.enable_x64
    # bit for bit: the handler's results, and code around the calls that computes as XLA
    # does (the NUFFT gradients: exact scalings, and complex products fused as XLA fuses
    # them); False: rtol 1e-12 (the solves' gradients, which sum in another order)
    exact: bool = True


def programs() -> dict[str, Program]:
    def summed_gradient(solve):
        import jax

        return jax.grad(lambda a, b: solve(a, b).sum(), argnums=(0, 1))

    def nufft(kind: str, dims: int, precision: int, *, gradient: bool = False) -> Program:
        """A NUFFT of ``kind`` in ``dims`` dimensions (eps 1e-6 in f32, 1e-12 in f64), or
        the gradient of a loss through it (the squared norm of the transform) with respect
        to every argument, the points' coordinates included. The loss sums the squares of
        the real and imaginary parts, whose cotangent (twice each part) is exact; the
        gradients are then the handlers' results, and for the points the real part of a
        complex product, which both paths fuse into an FMA as XLA does: bit for bit.

        A program that runs a type-1 transform (a type-1 program, or any gradient: type 2's
        transpose is type 1) asks FINUFFT for one thread: with several, the threads add
        their spread subgrids into the fine grid in the order they finish, and ``jax.jit``
        itself gives other last bits from one call to the next (seen: 1.4e-14 on the 2-D
        f64 type 1, on 2 cores). Type 2 (interpolation, each point on its own) keeps
        FINUFFT's default threads: its bits do not depend on them."""
        eps = 1e-6 if precision == 32 else 1e-12
        one_thread = kind == "type1" or gradient

        def make(finufft):
            from jax_finufft.options import Opts

            opts = Opts(nthreads=1) if one_thread else None

            def transform(source, *points):
                if kind == "type1":
                    return finufft.nufft1((16,) * dims, source, *points, eps=eps, opts=opts)
                return finufft.nufft2(source, *points, eps=eps, opts=opts)

            if not gradient:
                return transform
            import jax
            import jax.numpy as jnp

            def loss(source, *points):
                transformed = transform(source, *points)
                return jnp.sum(transformed.real**2 + transformed.imag**2)

            return jax.grad(loss, argnums=tuple(range(dims + 1)))

        return Program(
            "jax_finufft",
            make,
            lambda: nonuniform_inputs(kind, dims, precision),
            x64=precision == 64,
        )

    def mpi(make) -> Program:
        """A program of mpi4jax's collectives (f64), ``make(mpi4jax, MPI)``; bit for bit:
        on one rank each collective gives its input back (or its rank's part)."""

        def program(mpi4jax):
            from mpi4py import MPI

            return make(mpi4jax, MPI)

        return Program("mpi4jax", program, lambda: (np.linspace(-1.0, 2.0, 6),))

    def collectives(m, MPI):
        def run(x):
            total = m.allreduce(x, op=MPI.SUM)
            shared = m.bcast(total * 2, root=0)
            return m.sendrecv(shared, shared + 1, source=0, dest=0)

        return run

    def gathers(m, MPI):
        def run(x):
            m.barrier()
            gathered = m.allgather(x)
            largest = m.reduce(x * 3, op=MPI.MAX, root=0)
            running = m.scan(x, op=MPI.PROD)
            back = m.scatter(m.gather(x - 1, root=0), root=0)
            return gathered, largest, running, back, m.alltoall(x[None] * 2)

        return run

    def allreduce_gradient(m, MPI):
        import jax
        import jax.numpy as jnp

        return jax.grad(lambda x: (m.allreduce(jnp.sin(x), op=MPI.SUM) ** 2).sum())

    return {
        "mpi4jax_allreduce_bcast_sendrecv": mpi(collectives),
        "mpi4jax_gathers_reduce_scan_alltoall_barrier": mpi(gathers),
        "mpi4jax_allreduce_gradient": mpi(allreduce_gradient),
        "klujax_solve": Program(
            "klujax", lambda k: lambda a, b: k.solve(ROWS, COLUMNS, a, b), sparse_inputs
        ),
        "klujax_solve_gradient": Program(
            "klujax",
            lambda k: summed_gradient(lambda a, b: k.solve(ROWS, COLUMNS, a, b)),
            sparse_inputs,
            exact=False,
        ),
        "sparsax_cholesky_solve": Program(
            "sparsax", lambda s: lambda a, b: s.solve(ROWS, COLUMNS, a, b), sparse_inputs
        ),
        "sparsax_cholesky_solve_gradient": Program(
            "sparsax",
            lambda s: summed_gradient(lambda a, b: s.solve(ROWS, COLUMNS, a, b)),
            sparse_inputs,
            exact=False,
        ),
        "sparsax_lu_solve": Program(
            "sparsax", lambda s: lambda a, b: s.lu_solve(ROWS, COLUMNS, a, b), sparse_inputs
        ),
        "sparsax_logdet": Program(
            "sparsax", lambda s: lambda a, b: s.logdet(ROWS, COLUMNS, a, 5) * b, sparse_inputs
        ),
        "finufft_type1_1d_f32": nufft("type1", 1, 32),
        "finufft_type1_1d_f64": nufft("type1", 1, 64),
        "finufft_type1_2d_f32": nufft("type1", 2, 32),
        "finufft_type1_2d_f64": nufft("type1", 2, 64),
        "finufft_type2_1d_f32": nufft("type2", 1, 32),
        "finufft_type2_1d_f64": nufft("type2", 1, 64),
        "finufft_type2_2d_f32": nufft("type2", 2, 32),
        "finufft_type2_2d_f64": nufft("type2", 2, 64),
        "finufft_type1_1d_f64_gradient": nufft("type1", 1, 64, gradient=True),
        "finufft_type2_2d_f32_gradient": nufft("type2", 2, 32, gradient=True),
    }


PROGRAMS = programs()


@pytest.mark.parametrize("path", ["compile", "iree"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_third_party_program_gives_jax_jit_numbers(name: str, path: str, tmp_path: Path):
    import jax

    import rewriter

    case = PROGRAMS[name]
    imported = library(case.library)
    with jax.enable_x64(case.x64):
        program = case.make(imported)
        handlers = registered_handlers()
        arguments = case.arguments()
        exported = jax.export.export(
            jax.jit(program),
            platforms=["cpu"],
            disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(t) for t in handlers],
        )(*arguments)
        text = exported.mlir_module()
        targets = {call.target for call in rewriter.analyze(text).calls}
        assert targets and all(t.startswith(("sparsax_", "solve", "dot", "tsolve")) or
                               t in handlers for t in targets)  # fmt: skip
        want = jax.tree.leaves(jax.jit(program)(*arguments))
        if path == "compile":
            from rewriter.compile import compile_module, load

            module = tmp_path / "rewritten.mlir"
            module.write_text(rewriter.rewrite(text).text)
            compile_module(module, tmp_path / "libprogram.so", ffi_bridge=True)
            got = load(tmp_path / "libprogram.so", ffi_handlers=handlers).main(*arguments)
        else:
            from rewriter.iree import load as iree_load

            module = tmp_path / "program.iree.mlir"
            module.write_text(rewriter.rewrite(text, abi="iree").text)
            got = iree_load(module, imports=handlers).main(*arguments)
    got = jax.tree.leaves(got)
    assert len(got) == len(want)
    for value, expected in zip(got, want, strict=True):
        assert np.asarray(value).dtype == np.asarray(expected).dtype
        if case.exact:
            np.testing.assert_array_equal(value, np.asarray(expected))
        else:
            # The handlers' numbers are the same; the code around the calls (the gradient's
            # products of the solve with the right-hand side) may sum in another order:
            # a few f64 roundings, far below rtol 1e-12 (seen: 3e-16).
            np.testing.assert_allclose(value, np.asarray(expected), rtol=1e-12, atol=0)
