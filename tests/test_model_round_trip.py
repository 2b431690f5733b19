"""The round trip at model size: samples/mlp_model (three dense layers, gelu, softmax, two
``rms_norm`` FFI calls of different shapes, weights both as arguments and as constants).

JAX runs ``mlp`` with the kernel library's FFI handlers; the rewritten module is compiled by
``rewriter.compile`` and loaded with the same library. Both get the same random inputs
(3 seeds). Run with ``-s`` to see the compile time, the differences and the bound.

The tolerance is derived from the op order, not tuned. XLA and the compiled path are two
float32 evaluations of one program (the exported StableHLO and the kernel's C++), free to
order each dot product and sum differently (blocking, vector width, FMA), and XLA picks its
code for the CPU it runs on. So neither is the reference: ``mlp`` below restates the export
op by op (gelu as ``x * (0.5 * (1 + tanh(c * (x + k * ((x * x) * x)))))``, rms_norm as
samples/kernels/rms_norm.cc computes it, softmax as jax.nn.softmax), and
tests/error_bounds.py evaluates it exactly with, per output, the first-order bound

    |y_float32 - y| <= U * (LAMBDA * sqrt(sum_k c_k^2) + sum_j |dy/dr_j| * 2 ELEMENTARY_ULPS |r_j|)

over every rounding k (c_k: the output's derivative by the rounded value times the rounding's
size; a dot of depth n counts as n roundings of at most sum |a_i b_i|, in any order) and
every tanh and exp j. Rounding errors are independent and mean zero (Higham and Mary 2019),
so with LAMBDA = 8 an output falls outside with probability below 2 exp(-32) (Hoeffding);
the library errors of tanh and exp count in the worst case. On these inputs the bound is
below 1e-4 relative, and each path uses a few percent of it (run with ``-s``; the two
differ by about 1e-6). A wrong weight, layer or layout is far outside.

ELEMENTARY_ULPS is what both paths' tanh and exp must keep to, checked over the arguments
the model gives them by ``test_tanh_and_exp_keep_the_assumed_accuracy``.
"""

from __future__ import annotations

import time
import types

import error_bounds as eb
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from kernel_library import SAMPLES, sample

from rewriter.compile import compile_module, load

pytestmark = [
    pytest.mark.toolchain,
    pytest.mark.toolchain("gcc", "g++"),
    pytest.mark.jax,
    pytest.mark.slow,
]

MODEL = SAMPLES / "mlp_model"
ELEMENTARY_ULPS = 8.0  # both measure 4.3 ulp for tanh, 1 for exp (test below)
LAMBDA = 8.0  # P(one output outside the bound) <= 2 exp(-32) = 2.5e-14


@pytest.fixture(scope="module")
def model() -> types.SimpleNamespace:
    return sample("mlp_model")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, kernel_library):
    output = tmp_path_factory.mktemp("mlp_model") / "libmlp_model.so"
    start = time.perf_counter()
    entries = compile_module(MODEL / "mlp_model.rewritten.mlir", output)
    print(f"\nmlp_model: compiled in {time.perf_counter() - start:.2f} s")
    assert [entry.name for entry in entries] == ["main"]
    return load(output, kernels=[kernel_library])


def random_arguments(shapes, seed: int) -> list[np.ndarray]:
    """x ~ N(0, 1); weights and biases scaled like the captured layers (1/sqrt(fan_in), 0.1)."""
    rng = np.random.default_rng(seed)
    x, w1, b1 = (rng.normal(size=shape).astype(np.float32) for shape in shapes)
    return [x, w1 / np.float32(np.sqrt(shapes[1][0])), b1 * np.float32(0.1)]


def dense(ops: eb.Ops, x, weights, bias):
    return ops.rounded(ops.dot(x, weights) + bias)


def gelu(ops: eb.Ops, x):
    """jax.nn.gelu (approximate), in the export's op order."""
    c, k = np.float32(np.sqrt(2 / np.pi)), np.float32(0.044715)
    cube = ops.rounded(ops.rounded(x * x) * x)
    inner = ops.rounded(x + ops.rounded(k * cube))
    t = ops.tanh(ops.rounded(c * inner), ELEMENTARY_ULPS)
    return ops.rounded(x * ops.rounded(0.5 * ops.rounded(1.0 + t)))


def rms_norm(ops: eb.Ops, x, eps: np.float32):
    """samples/kernels/rms_norm.cc: x * (1 / sqrt(sum(x * x) / n + eps)), row by row."""
    mean = ops.rounded(ops.sum(ops.rounded(x * x)) / x.shape[-1])
    root = ops.rounded(jnp.sqrt(ops.rounded(mean + eps)))
    return ops.rounded(x * ops.rounded(1.0 / root))


def softmax(ops: eb.Ops, z):
    """jax.nn.softmax over the last axis."""
    unnormalized = ops.exp(ops.rounded(z - ops.max(z)), ELEMENTARY_ULPS)
    return ops.rounded(unnormalized / ops.sum(unnormalized), roundings=2)


def mlp(ops: eb.Ops, x, w1, b1, w2, b2, w3, b3):
    """``mlp`` of samples/mlp_model/export.py, one rounding site per float32 operation."""
    eps = np.float32(1e-5)  # rms_norm's default in export.py, as the export holds it
    h = rms_norm(ops, gelu(ops, dense(ops, x, w1, b1)), eps)
    h = rms_norm(ops, gelu(ops, dense(ops, h, w2, b2)), eps)
    return softmax(ops, dense(ops, h, w3, b3))


def mlp_bound(model, arguments) -> eb.Bound:
    weights = [model.W2, model.B2, model.W3, model.B3]
    return eb.error_bound(mlp, [*arguments, *weights], lam=LAMBDA)


@pytest.mark.parametrize("seed", range(3))
def test_mlp_model_matches_jax(seed, model, compiled):
    arguments = random_arguments(model.argument_shapes(), seed)
    expected = np.asarray(jax.jit(model.mlp)(*arguments))
    got = compiled.main(*arguments)
    assert got.dtype == expected.dtype == np.float32
    assert got.shape == expected.shape == (model.BATCH, model.WIDTHS[-1])
    bound = mlp_bound(model, arguments)
    difference = np.abs(got.astype(np.float64) - expected)
    print(
        f"\nmlp_model seed {seed}: max abs difference {difference.max():.3g}, "
        f"max rel difference {(difference / np.abs(expected)).max():.3g}, "
        f"bound up to {(bound.error / bound.value).max():.3g} relative"
    )
    for name, result in [("JAX", expected), ("compiled", got)]:
        off = np.abs(result.astype(np.float64) - bound.value)
        print(f"{name}: at most {(off / bound.error).max():.1%} of the bound")
        worst = np.unravel_index(np.argmax(off / bound.error), off.shape)
        assert np.all(off <= bound.error), (
            f"{name} result {worst} is {off[worst]:.3g} off the exact value "
            f"{bound.value[worst]:.9g}; float32 rounding explains at most {bound.error[worst]:.3g}"
        )


ELEMENTARY = """module @elementary {
  func.func public @main(%x: tensor<Nxf32>) -> (tensor<Nxf32>, tensor<Nxf32>) {
    %t = stablehlo.tanh %x : tensor<Nxf32>
    %e = stablehlo.exponential %x : tensor<Nxf32>
    return %t, %e : tensor<Nxf32>, tensor<Nxf32>
  }
}
"""


def test_tanh_and_exp_keep_the_assumed_accuracy(tmp_path):
    """Over [-20, 8] (gelu's tanh arguments reach +-8, softmax's exp arguments are <= 0)."""
    x = np.linspace(-20, 8, 1 << 16, dtype=np.float32)
    source = tmp_path / "elementary.mlir"
    source.write_text(ELEMENTARY.replace("N", str(x.size)))
    compile_module(source, tmp_path / "libelementary.so")
    compiled = load(tmp_path / "libelementary.so").main(x)
    in_jax = jax.jit(lambda x: (jnp.tanh(x), jnp.exp(x)))(x)
    exact = np.tanh(x.astype(np.float64)), np.exp(x.astype(np.float64))
    for path, results in [("compiled", compiled), ("JAX", in_jax)]:
        for name, result, reference in zip(["tanh", "exp"], results, exact, strict=True):
            ulp = np.spacing(np.abs(reference).astype(np.float32)).astype(np.float64)
            ulps = np.abs(np.asarray(result, np.float64) - reference) / ulp
            assert ulps.max() <= ELEMENTARY_ULPS, f"{path} {name}: {ulps.max():.2f} ulp"
