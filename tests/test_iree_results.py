"""How ``rewriter.iree`` hands a call's results over (rewriter/iree/results.py): a result
of ``HANDED_OVER_BYTES`` or more in the memory IREE wrote, a smaller one copied; a result
whose memory is not the call's alone (an argument read in place, a result handed over
before) copied too. Every result is writable and none shares memory with an argument or
another result."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from test_iree_calls import aligned_copy

from rewriter.iree import compile_module, load
from rewriter.iree.results import HANDED_OVER_BYTES

pytestmark = [pytest.mark.iree]

LARGE = HANDED_OVER_BYTES // 4  # f32 elements of a result handed over
SMALL = LARGE - 1


def loaded(tmp_path, text: str, driver: str = "local-sync"):
    source = tmp_path / "results.mlir"
    source.write_text(text)
    compile_module(source, tmp_path / "results.vmfb")
    return load(tmp_path / "results.vmfb", imports={}, driver=driver)


def doubled(size: int) -> str:
    return f"""module {{
  func.func public @main(%x: tensor<{size}xf32>) -> tensor<{size}xf32> {{
    %0 = stablehlo.add %x, %x : tensor<{size}xf32>
    return %0 : tensor<{size}xf32>
  }}
}}
"""


@pytest.mark.parametrize("driver", ["local-sync", "local-task"])
def test_a_large_result_is_the_memory_iree_wrote_and_outlives_the_module(tmp_path, driver):
    model = loaded(tmp_path, doubled(LARGE), driver)
    x = np.arange(LARGE, dtype=np.float32)
    result = model.main(x)
    assert not result.flags.owndata and result.base is not None  # not a copy
    assert result.flags.writeable
    np.testing.assert_array_equal(result, 2 * x)
    model.close()
    del model
    gc.collect()
    later = np.full(LARGE, 5.0, np.float32)  # memory freed by then would be reused
    np.testing.assert_array_equal(result, 2 * x)
    result[:] = later
    np.testing.assert_array_equal(result, later)


def test_a_small_result_is_copied(tmp_path):
    model = loaded(tmp_path, doubled(SMALL))
    x = np.arange(SMALL, dtype=np.float32)
    result = model.main(x)
    assert result.flags.owndata and result.flags.writeable
    np.testing.assert_array_equal(result, 2 * x)


def test_a_dynamic_result_is_handed_over_by_its_size(tmp_path):
    text = doubled(LARGE).replace(f"tensor<{LARGE}xf32>", "tensor<?xf32>")
    model = loaded(tmp_path, text)
    large, small = np.arange(LARGE, dtype=np.float32), np.arange(SMALL, dtype=np.float32)
    assert not model.main(large).flags.owndata
    assert model.main(small).flags.owndata
    np.testing.assert_array_equal(model.main(large), 2 * large)


SHARED = f"""module {{
  func.func public @main(%x: tensor<{LARGE}xf32>) -> (tensor<{LARGE}xf32>, tensor<{LARGE}xf32>,
      tensor<{LARGE}xf32>, tensor<{LARGE}xf32>) {{
    %c = stablehlo.constant dense<3.0> : tensor<{LARGE}xf32>
    %y = stablehlo.add %x, %x : tensor<{LARGE}xf32>
    return %y, %x, %c, %y : tensor<{LARGE}xf32>, tensor<{LARGE}xf32>, tensor<{LARGE}xf32>,
      tensor<{LARGE}xf32>
  }}
}}
"""


def test_results_share_no_memory_with_the_arguments_or_each_other(tmp_path):
    """IREE returns the argument it read in place as its own buffer, and one value
    returned twice as one buffer: those are copied. A returned constant is the call's
    own: writing into it changes no later call's result."""
    model = loaded(tmp_path, SHARED)
    x = aligned_copy(np.arange(LARGE, dtype=np.float32))  # read in place
    doubled_x, same_x, constant, doubled_again = model.main(x)
    assert not np.shares_memory(same_x, x)
    assert not np.shares_memory(doubled_x, doubled_again)
    assert not doubled_x.flags.owndata and not constant.flags.owndata  # handed over
    for result in (doubled_x, same_x, constant, doubled_again):
        assert result.flags.writeable
    same_x[:] = -1
    doubled_x[:] = -2
    constant[:] = -3
    np.testing.assert_array_equal(x, np.arange(LARGE, dtype=np.float32))
    np.testing.assert_array_equal(doubled_again, 2 * x)
    again = model.main(x)
    np.testing.assert_array_equal(again[2], np.full(LARGE, 3.0, np.float32))
    np.testing.assert_array_equal(again[0], 2 * x)
