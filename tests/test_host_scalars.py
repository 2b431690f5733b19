"""jax's size arithmetic as scalar ops (rewriter/compile/host_scalars.py): the shape
assertions' predicates and values computed on IREE's host, with no dispatch, and with the
numbers StableHLO's tensor ops give."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import main_on, on_both_paths
from jax import export

import rewriter
from rewriter.compile import host_scalars

# An assertion that always fails, its message every value below: the check computes them
# from the argument's size n and ValueError shows them. Every op host_scalars writes.
_TEMPLATE = """\
module @jit_sizes attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<?xf32>) -> tensor<?xf32> {
    %n = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?xf32>) -> tensor<i32>
    %c3 = stablehlo.constant dense<3> : tensor<i32>
    %cm2 = stablehlo.constant dense<-2> : tensor<i32>
    %false = stablehlo.constant dense<false> : tensor<i1>
    %a = stablehlo.multiply %n, %cm2 : tensor<i32>
    %q = stablehlo.divide %a, %c3 : tensor<i32>
    %r = stablehlo.remainder %a, %c3 : tensor<i32>
    %s = stablehlo.add %q, %r : tensor<i32>
    %d = stablehlo.subtract %n, %c3 : tensor<i32>
    %mx = stablehlo.maximum %a, %c3 : tensor<i32>
    %mn = stablehlo.minimum %n, %c3 : tensor<i32>
    %ng = stablehlo.negate %n : tensor<i32>
    %nt = stablehlo.not %n : tensor<i32>
    %an = stablehlo.and %n, %c3 : tensor<i32>
    %o = stablehlo.or %n, %c3 : tensor<i32>
    %x = stablehlo.xor %n, %c3 : tensor<i32>
    %lt = stablehlo.compare LT, %a, %c3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %ge = stablehlo.compare GE, %n, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %both = stablehlo.and %lt, %ge : tensor<i1>
    %sel = stablehlo.select %both, %ng, %c3 : tensor<i1>, tensor<i32>
    %one = stablehlo.convert %lt : (tensor<i1>) -> tensor<i32>
    %wide = stablehlo.convert %a : (tensor<i32>) -> tensor<i64>
    %never = stablehlo.not %false : tensor<i1>
    %fails = stablehlo.xor %never, %never : tensor<i1>
    {assertion}
    return %arg0 : tensor<?xf32>
  }
}
"""
_VALUES = "%a %q %r %s %d %mx %mn %ng %nt %an %o %x %sel %one %wide".split()
_NUMBERS = " ".join("{" + str(i) + "}" for i in range(len(_VALUES)))
_ASSERTION = (
    f"stablehlo.custom_call @shape_assertion(%fails, {', '.join(_VALUES)}) "
    f'{{error_message = "sizes {_NUMBERS}", has_side_effect = true}} : '
    f"(tensor<i1>, {'tensor<i32>, ' * (len(_VALUES) - 1)}tensor<i64>) -> ()"
)
ARITHMETIC = _TEMPLATE.replace("{assertion}", _ASSERTION)


def expected_sizes(n: int) -> list[int]:
    """The values of ARITHMETIC, derived by hand from StableHLO's definitions: integer
    division truncates toward zero and the remainder takes the dividend's sign; ``not`` of
    an integer is its bitwise complement; ``convert`` of ``true`` to i32 is 1."""
    a = -2 * n
    q = -(abs(a) // 3) if a < 0 else a // 3
    r = a - 3 * q
    lt, ge = a < 3, n >= 3
    return [a, q, r, q + r, n - 3, max(a, 3), min(n, 3), -n, ~n, n & 3, n | 3, n ^ 3,
            -n if lt and ge else 3, int(lt), a]  # fmt: skip


@on_both_paths
@pytest.mark.parametrize("scalars", [True, False], ids=["host_scalars", "tensor_ops"])
def test_the_scalars_give_what_the_tensor_ops_give(scalars, path, tmp_path, monkeypatch):
    """Every value of the failing assertion, at sizes 7 and 2, as scalar ops and (with
    ``scalar_of`` switched off) as StableHLO's tensor ops: the same numbers, which are the
    hand-derived ones."""
    if not scalars:
        monkeypatch.setattr(host_scalars.HostScalars, "scalar_of", lambda self, value: None)
    main = main_on(path, ARITHMETIC, tmp_path)
    for n in (7, 2):
        with pytest.raises(ValueError) as raised:
            main(np.zeros(n, np.float32))
        expected = " ".join(str(v) for v in expected_sizes(n))
        assert str(raised.value) == f"main: sizes {expected}"


@on_both_paths
def test_a_size_of_an_intermediate_tensor_is_read_from_the_tensor(path, tmp_path):
    """A size read from a tensor the function computes has no scalar form (the check, a
    function of its own, sees only the arguments): the assertion keeps its tensor ops and
    still stops the call with its numbers."""
    text = ARITHMETIC.replace(
        "%n = stablehlo.get_dimension_size %arg0,",
        "%neg = stablehlo.negate %arg0 : tensor<?xf32>\n"
        "    %n = stablehlo.get_dimension_size %neg,",
    )
    main = main_on(path, text, tmp_path)
    with pytest.raises(ValueError) as raised:
        main(np.zeros(5, np.float32))
    assert str(raised.value) == f"main: sizes {' '.join(str(v) for v in expected_sizes(5))}"


def elementwise(x):
    return jnp.tanh(x) * 2 + jnp.exp(-x * x)


@pytest.mark.slow
@pytest.mark.iree
def test_a_symbolic_batch_on_iree_has_no_dispatch_but_its_program(tmp_path):
    """jax's assertion that b >= 1 and the check's numbers are computed on the host: the
    module's only executable is the elementwise program's (before, a dispatch computed the
    comparison and a fill wrote the check's numbers, each waited for on every call)."""
    from rewriter.iree import compile_module

    spec = jax.ShapeDtypeStruct(export.symbolic_shape("b, 1024"), np.float32)
    source = tmp_path / "program.iree.mlir"
    source.write_text(rewriter.rewrite(rewriter.export(elementwise, spec).text, abi="iree").text)
    dump = tmp_path / "dump"
    extra = (f"--iree-hal-dump-executable-sources-to={dump}",)
    compile_module(source, tmp_path / "program.vmfb", extra_args=extra, cache=False)
    executables = sorted(p.name for p in dump.glob("*.mlir"))
    assert len(executables) == 1 and "elementwise" in (dump / executables[0]).read_text()


def counted_checks(monkeypatch) -> list[int]:
    """How many times each loaded function's shape check runs: a list with one count a
    check, in the order load made them."""
    from rewriter.iree import runtime

    counts: list[int] = []
    made = runtime._checked

    def counting(name, function, check, messages, sizes_only=False):
        counts.append(0)
        at = len(counts) - 1

        def counted(*arrays):
            counts[at] += 1
            return check(*arrays)

        return made(name, function, counted, messages, sizes_only)

    monkeypatch.setattr(runtime, "_checked", counting)
    return counts


@pytest.mark.slow
@pytest.mark.iree
@pytest.mark.parametrize("scalars", [True, False], ids=["host_scalars", "tensor_ops"])
def test_a_check_of_sizes_alone_runs_once_a_shape(scalars, tmp_path, monkeypatch):
    """A check written by scalar ops reads nothing but sizes: load runs it once for each
    shape that passes (it is a call into IREE of its own, as long as a small program), and
    on every call that breaks an assertion. A check of copied tensor ops runs every call."""
    from rewriter.iree import load

    if not scalars:
        monkeypatch.setattr(host_scalars.HostScalars, "scalar_of", lambda self, value: None)
    counts = counted_checks(monkeypatch)
    spec = jax.ShapeDtypeStruct(export.symbolic_shape("b, 8"), np.float32)
    source = tmp_path / "program.iree.mlir"
    source.write_text(rewriter.rewrite(rewriter.export(elementwise, spec).text, abi="iree").text)
    main = load(source, imports={}, driver="local-sync").main
    rng = np.random.default_rng(3)
    for rows in (3, 3, 5, 3, 5):
        x = rng.standard_normal((rows, 8)).astype(np.float32)
        np.testing.assert_allclose(main(x), elementwise(x), rtol=2e-6, atol=2e-6)
    for _ in range(2):
        with pytest.raises(ValueError, match="Expected value >= 1 for dimension variable 'b'"):
            main(np.zeros((0, 8), np.float32))
    assert counts == ([2 + 2] if scalars else [5 + 2])
