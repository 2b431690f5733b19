"""The layouts rule (``rewriter/plan/layouts.py``) as before/after pairs: a call's
``operand_layouts`` and ``result_layouts`` in, the order of each tensor's dims from major
to minor and the row-major type its kernel sees out. A layout is minor-to-major, so
``[0, 1]`` of a 3x5 matrix is column-major: the kernel sees a 5x3 row-major buffer."""

from __future__ import annotations

import pytest
from planning_pairs import assert_pair, call_of, layouts_text

from rewriter.plan.layouts import LayoutError, permutations

LAPACK_LIKE = (
    "%0:2 = stablehlo.custom_call @k(%arg0) {mhlo.backend_config = {}, "
    "operand_layouts = [dense<[0, 1]> : tensor<2xindex>], "
    "result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} "
    ": (tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<i32>)"
)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "%0 = stablehlo.custom_call @k(%arg0) {mhlo.backend_config = {}} "
            ": (tensor<3x5xf32>) -> tensor<3x5xf32>",
            """
            operand 0: tensor<3x5xf32> [0, 1] -> tensor<3x5xf32>
            result 0: tensor<3x5xf32> [0, 1] -> tensor<3x5xf32>
            """,
            id="no layouts: row-major",
        ),
        pytest.param(
            LAPACK_LIKE,
            """
            operand 0: tensor<3x5xf32> [1, 0] -> tensor<5x3xf32>
            result 0: tensor<3x5xf32> [1, 0] -> tensor<5x3xf32>
            result 1: tensor<i32> [] -> tensor<i32>
            """,
            id="column-major, as LAPACK's kernels",
        ),
        pytest.param(
            "%0 = stablehlo.custom_call @k(%arg0) {mhlo.backend_config = {}, "
            "operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], "
            "result_layouts = [dense<[2, 1, 0]> : tensor<3xindex>]} "
            ": (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>",
            """
            operand 0: tensor<2x3x4xf32> [0, 2, 1] -> tensor<2x4x3xf32>
            result 0: tensor<2x3x4xf32> [0, 1, 2] -> tensor<2x3x4xf32>
            """,
            id="batched column-major: the batch stays outermost",
        ),
        pytest.param(
            "%0 = stablehlo.custom_call @k(%arg0) {mhlo.backend_config = {}, "
            "operand_layouts = [dense<0> : tensor<1xindex>], "
            "result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<7xf32>) -> tensor<7xf32>",
            """
            operand 0: tensor<7xf32> [0] -> tensor<7xf32>
            result 0: tensor<7xf32> [0] -> tensor<7xf32>
            """,
            id="a vector's splat layout",
        ),
    ],
)
def test_layouts_give_the_kernel_s_view(before: str, after: str):
    assert_pair(layouts_text, before, after)


@pytest.mark.parametrize(
    ("layouts", "message"),
    [
        ("[dense<[0, 0]> : tensor<2xindex>]", "operand_layouts entry 0 is not a permutation"),
        ("[dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>]", "malformed"),
    ],
)
def test_layouts_that_are_no_permutation_are_refused(layouts: str, message: str):
    call = call_of(
        f"%0 = stablehlo.custom_call @k(%arg0) {{operand_layouts = {layouts}}} "
        ": (tensor<3x5xf32>) -> tensor<3x5xf32>"
    )
    with pytest.raises(LayoutError, match=message):
        permutations(call)
