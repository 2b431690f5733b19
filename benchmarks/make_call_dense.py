"""Generate call-dense exports: thousands of FFI calls, in the shapes users have.

``python benchmarks/make_call_dense.py [OUT_DIR] [--calls N,N,...] [--shapes A,B,...]``
(default ``benchmarks/corpus/calls``, not committed) writes ``SHAPE_N.mlir`` for every shape
and call count, exported with jax like a user's program:

- ``many_targets``: an unrolled loop over 40 kernels, 5 attributes a call (an f32 that
  changes every call, an i64 of 3 values, a bool, a string, a constant f32);
- ``signatures``: one kernel called on 24 tensor shapes (one extern per signature);
- ``long_attributes``: 12 attributes a call: scalars of many types, a string, arrays;
- ``regions``: calls inside ``lax.fori_loop`` bodies and ``lax.switch`` branches
  (``stablehlo.while`` and ``stablehlo.case`` regions), 8 calls a region;
- ``layouts``: column-major operands (``input_layouts``), so every call goes through a
  layout wrapper.

``--large``: ``large.mlir``, 70,000 calls of ``many_targets`` with ops between them (52 MB), an
export of the size users have (tens of MB).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

KERNELS = 40
SHAPES = 24


def ffi(target, x, **attributes):
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.ffi.ffi_call(target, out)(x, **attributes)


def kernel_call(x, i: int):
    """Call ``i`` of ``many_targets``: one of 40 kernels, one float new in every call."""
    return ffi(
        f"kernel_{i % KERNELS}",
        x,
        scale=np.float32(0.5 + i * 1e-3),
        axis=np.int64(i % 3),
        flag=bool(i % 2),
        mode="fast",
        eps=np.float32(1e-5),
    )


def many_targets(calls: int):
    def model(x):
        for i in range(calls):
            x = kernel_call(x, i)
        return x

    kernels = [f"kernel_{k}" for k in range(KERNELS)]
    return model, [jax.ShapeDtypeStruct((16, 16), jnp.float32)], kernels


def large(calls: int):
    """``many_targets`` with ops between the calls, as in a model: about 740 bytes a call,
    so 70,000 calls make an export of 52 MB, the size of a large model's export."""

    def model(x):
        for i in range(calls):
            x = jnp.abs(jnp.tanh(kernel_call(x, i))) * 0.5 + x
        return x

    kernels = [f"kernel_{k}" for k in range(KERNELS)]
    return model, [jax.ShapeDtypeStruct((16, 16), jnp.float32)], kernels


def signatures(calls: int):
    def model(*xs):
        xs = list(xs)
        for i in range(calls):
            k = i % SHAPES
            xs[k] = ffi("kernel", xs[k], eps=np.float32(1e-5))
        return xs

    return model, [jax.ShapeDtypeStruct((4, 1 + k), jnp.float32) for k in range(SHAPES)], ["kernel"]


def long_attributes(calls: int):
    def model(x):
        for i in range(calls):
            x = ffi(
                f"solver_step_{i % 8}",
                x,
                step=np.float64(1e-3 * (i + 1)),
                damping=np.float32(0.9),
                tolerance=np.float32(1e-6),
                iteration=np.int32(i % 4),
                size=np.int64(64),
                small=np.int8(-3),
                count=np.uint16(7),
                verbose=False,
                method="newton",
                weights=np.array([0.25, 0.5, 0.25], np.float32),
                window=np.array([1, 2, 3, 4], np.int64),
                half=np.float16(1.5),
            )
        return x

    return (
        model,
        [jax.ShapeDtypeStruct((8, 8), jnp.float32)],
        [f"solver_step_{k}" for k in range(8)],
    )


def regions(calls: int):
    per_region = 8

    def body(_, x):
        for j in range(per_region):
            x = ffi(f"loop_kernel_{j}", x, scale=np.float32(0.5 + j))
        return x

    def branch(j):
        def run(x):
            for k in range(per_region):
                x = ffi(f"branch_{j}_{k}", x, eps=np.float32(1e-5))
            return x

        return run

    def model(x, index):
        for i in range(calls // (2 * per_region)):
            x = jax.lax.fori_loop(0, 3, body, x)
            x = jax.lax.switch((index + i) % 2, [branch(0), branch(1)], x)
        return x

    names = [f"loop_kernel_{j}" for j in range(per_region)]
    names += [f"branch_{j}_{k}" for j in range(2) for k in range(per_region)]
    return (
        model,
        [
            jax.ShapeDtypeStruct((16, 16), jnp.float32),
            jax.ShapeDtypeStruct((), jnp.int32),
        ],
        names,
    )


def layouts(calls: int):
    def model(x):
        for i in range(calls):
            out = jax.ShapeDtypeStruct(x.shape, x.dtype)
            x = jax.ffi.ffi_call(
                f"col_kernel_{i % 4}", (out,), input_layouts=[(1, 0)], output_layouts=[(1, 0)]
            )(x, eps=np.float32(1e-5), scale=np.float32(i * 0.25))[0]
        return x

    return (
        model,
        [jax.ShapeDtypeStruct((8, 16), jnp.float32)],
        [f"col_kernel_{k}" for k in range(4)],
    )


SHAPE_MAKERS = {
    "many_targets": many_targets,
    "signatures": signatures,
    "long_attributes": long_attributes,
    "regions": regions,
    "layouts": layouts,
    "large": large,
}


def export_text(model, arguments, targets) -> str:
    allowed = [jax.export.DisabledSafetyCheck.custom_call(target) for target in targets]
    exported = jax.export.export(jax.jit(model), platforms=["cpu"], disabled_checks=allowed)
    return exported(*arguments).mlir_module()


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("out", nargs="?", default=str(Path(__file__).parent / "corpus" / "calls"))
    options.add_argument("--calls", default="1000,4000,16000,64000")
    options.add_argument("--shapes", default=",".join(s for s in SHAPE_MAKERS if s != "large"))
    options.add_argument("--large", action="store_true", help="also the 70k-call export")
    arguments = options.parse_args()
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = [
        (shape, int(count))
        for shape in arguments.shapes.split(",")
        for count in arguments.calls.split(",")
    ]
    if arguments.large:
        jobs.append(("large", 70_000))
    for shape, count in jobs:
        name = "large" if shape == "large" else f"{shape}_{count}"
        started = time.perf_counter()
        text = export_text(*SHAPE_MAKERS[shape](count))
        (out / f"{name}.mlir").write_text(text)
        print(
            f"{name}.mlir: {len(text) / 1e6:.1f} MB, {text.count('stablehlo.custom_call')} calls "
            f"({time.perf_counter() - started:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
