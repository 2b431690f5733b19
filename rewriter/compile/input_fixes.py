"""What both paths change in a module before IREE's StableHLO input pipeline sees it.

Each fix is a module of its own, with why it is needed and why it keeps the program's
meaning; here they run one after the other on one parse of the module.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from . import contexts
from .bool_converts import CONVERT as BOOL_CONVERT
from .bool_converts import bool_converts
from .broadcast_divisors import DYNAMIC_BROADCAST as DIVISOR_BROADCAST
from .broadcast_divisors import multiply_by_dynamic_reciprocals, multiply_by_reciprocals
from .broadcast_sums import broadcast_sums
from .cbrt import CBRT, f32_cbrt
from .column_stacks import CONCATENATE, column_stacks
from .complex_abs import ABS, complex_abs
from .complex_divide import DIVIDE, complex_divide
from .complex_expm1 import complex_expm1
from .complex_splats import complex_splats
from .complex_tanh import TAN, TANH, complex_tanh
from .composites import inline_calls
from .constant_chains import MULTIPLY, constant_chains
from .dynamic_broadcasts import DYNAMIC_BROADCAST, jax_dynamic_broadcasts
from .dynamic_convolutions import CONVOLUTION, DYNAMIC_CONVOLUTION, dynamic_convolutions
from .dynamic_gathers import DYNAMIC_GATHER, batched_dynamic_gathers
from .dynamic_index_gathers import GATHER, dynamic_index_gathers
from .dynamic_pads import DYNAMIC_PAD, PAD, dynamic_pads
from .dynamic_reshapes import DOT_GENERAL, DYNAMIC_RESHAPE, symbolic_reshapes
from .dynamic_scans import dynamic_scans
from .dynamic_scatters import SCATTER, dynamic_scatters
from .dynamic_slices import one_slice_dynamic_gathers
from .dynamic_update_slices import DYNAMIC_UPDATE_SLICE, dynamic_update_slices
from .dynamic_window_scans import DYNAMIC_REDUCE_WINDOW, dynamic_window_scans
from .empty_pieces import empty_pieces
from .exp_log_folds import EXP, ROOTS, exp_log_folds
from .expm1_log1p import EXPM1, LOG1P, accurate_expm1_log1p
from .f32_in_f64 import WIDENED, f32_math_in_f64
from .fft_forms import fft_forms
from .gather_bounds import clamp_gather_indices
from .host_converts import CONVERT, host_converts
from .identity_folds import ADD, REDUCE, SUBTRACT, identity_folds
from .narrow_float_converts import narrow_float_converts
from .padded_windows import REDUCE_WINDOW, explicit_window_padding
from .power import POWER, accurate_power
from .quotient_folds import DIVIDE as QUOTIENT
from .quotient_folds import quotient_folds
from .reversed_slices import REVERSE, slices_of_reverses
from .saturating_converts import saturating_converts
from .scatter_bounds import drop_out_of_range_updates
from .scatter_forms import canonical_scatters
from .shape_assertions import SHAPE_ASSERTION, checked_shape_assertions
from .started_scans import started_scans
from .tokens import TOKEN_TYPES, erase_tokens
from .two_level_sums import across_rows, expanded_whole_and_trailing
from .unrolled_windows import unrolled_windows
from .unsigned_moves import GATHER as UNSIGNED_GATHER
from .unsigned_moves import unsigned_moves
from .unsigned_reverse import reverse_signless
from .unsigned_sizes import DIMENSION_SIZE, TENSOR_DIM, unsigned_dims, unsigned_sizes
from .unsigned_windows import WINDOW, unsigned_windows
from .wide_accumulation import OPS as ACCUMULATIONS
from .wide_accumulation import wide_accumulation
from .window_scatters import SELECT_AND_SCATTER, window_scatters
from .xla_math import ERF, LOG, xla_math
from .xla_scans import xla_scans

COMPOSITE, CALL = "stablehlo.composite", "call @"

# (a fix, text whose absence from the module means it has nothing to do)
FIXES: tuple[tuple[Callable[[Any], int], tuple[str, ...]], ...] = (
    (inline_calls, (COMPOSITE, CALL)),  # as XLA: calls and composites inlined (first)
    (checked_shape_assertions, (SHAPE_ASSERTION,)),  # IREE drops them: wrong sizes read on
    (identity_folds, (ADD, SUBTRACT, REDUCE)),  # as XLA: x + 0 is x (-0.0, denormals)
    (xla_scans, (REDUCE_WINDOW,)),  # as XLA: a cumsum in blocks of 16 (after the above)
    (started_scans, (REDUCE_WINDOW,)),  # as XLA: a cumsum from 0 + x[0] (after the above)
    (exp_log_folds, (EXP, POWER, *ROOTS)),  # as XLA: exp(a) * exp(b) is exp(a + b), and more
    (broadcast_sums, (REDUCE,)),  # as XLA: a sum of a broadcast's copies is a multiply
    (fft_forms, ("stablehlo.fft",)),  # IREE lowers only 1-D ffts of a power-of-two length
    (slices_of_reverses, (REVERSE,)),  # IREE fails on the reverse of a strided slice
    (reverse_signless, ("stablehlo.reverse",)),  # IREE cannot reverse unsigned elements
    (unsigned_windows, (WINDOW,)),  # IREE: no cumulative op of unsigned elements
    (saturating_converts, ("stablehlo.convert",)),  # float to integer clamps, NaN to 0
    (host_converts, (CONVERT,)),  # IREE's VM: no i32 -> f64 (a symbolic size's median)
    (bool_converts, (BOOL_CONVERT,)),  # IREE folds them into products, true as -1
    (narrow_float_converts, (CONVERT,)),  # IREE: f8 and f4 to and from f32 only
    (dynamic_scans, (REDUCE_WINDOW,)),  # IREE: no cumsum of dynamic shape (before the next)
    (dynamic_window_scans, (DYNAMIC_REDUCE_WINDOW,)),  # cumsum along a symbolic dimension
    (explicit_window_padding, (REDUCE_WINDOW,)),  # IREE: dynamic windows only unpadded
    (unrolled_windows, (REDUCE_WINDOW, DYNAMIC_REDUCE_WINDOW)),  # IREE: wrong or none
    (wide_accumulation, ACCUMULATIONS),  # f16 and bf16 products and sums in f32, as XLA
    (across_rows, ("stablehlo.reduce",)),  # long sums down columns in blocks (after the above)
    (expanded_whole_and_trailing, ("stablehlo.reduce",)),  # whole, rows, adjacent dimensions
    (unsigned_moves, (UNSIGNED_GATHER, SCATTER)),  # of unsigned elements, dynamic shape
    (batched_dynamic_gathers, (DYNAMIC_GATHER,)),  # IREE lowers no dynamic_gather
    (one_slice_dynamic_gathers, (DYNAMIC_GATHER,)),  # x[1:] along a symbolic dimension
    (dynamic_index_gathers, (GATHER, DYNAMIC_GATHER)),  # IREE: none at indices of dynamic shape
    (multiply_by_dynamic_reciprocals, (DIVISOR_BROADCAST,)),  # as XLA (before the next)
    (constant_chains, (ADD, SUBTRACT, MULTIPLY)),  # of a symbolic shape (before the next)
    (empty_pieces, (CONCATENATE,)),  # IREE: an empty piece of a concatenation on the stack
    (column_stacks, (CONCATENATE,)),  # IREE: a stack of index columns (before the next)
    # IREE: no convolution over symbolic spatial sizes (before the next three: it writes
    # jax's broadcasts, dynamic_pads and reshapes)
    (dynamic_convolutions, (CONVOLUTION, DYNAMIC_CONVOLUTION)),
    (dynamic_pads, (DYNAMIC_PAD, PAD)),  # IREE: no dynamic_pad, no cut of dynamic shape
    (jax_dynamic_broadcasts, (DYNAMIC_BROADCAST,)),  # IREE: none whose expansion is unknown
    (symbolic_reshapes, (DYNAMIC_RESHAPE, DOT_GENERAL)),  # IREE lowers no dynamic_reshape
    (dynamic_update_slices, (DYNAMIC_UPDATE_SLICE,)),  # IREE: static shapes only
    (clamp_gather_indices, ("stablehlo.gather",)),  # StableHLO clamps them, IREE does not
    (dynamic_scatters, (SCATTER,)),  # IREE: no scatter of dynamic shape with batching dims
    (drop_out_of_range_updates, ("stablehlo.scatter",)),  # XLA drops them, IREE writes them
    (canonical_scatters, ("stablehlo.scatter",)),  # the one form IREE lowers (after the above)
    (window_scatters, (SELECT_AND_SCATTER,)),  # IREE: windows apart only, the last tie
    (erase_tokens, TOKEN_TYPES),  # IREE cannot lower create_token, after_all
    (multiply_by_reciprocals, ("stablehlo.divide",)),  # as XLA: a * (1 / b) for a / b
    (quotient_folds, (QUOTIENT,)),  # as XLA: (a / b) / c is a / (b * c) (after the above)
    (constant_chains, (ADD, SUBTRACT, MULTIPLY)),  # as XLA: x * c1 * c2 is x * (c1 * c2)
    (complex_tanh, (TANH, TAN)),  # IREE's lose a part near 0 (before the real expm1, sin, cos)
    (complex_expm1, (EXPM1,)),  # IREE's: exp(z) - 1 (before the real expm1, sin and cos)
    (accurate_expm1_log1p, (EXPM1, LOG1P)),  # IREE's f64 ones: exp(x) - 1, log(1 + x)
    (f32_math_in_f64, WIDENED),  # IREE's f32 sin, cos, tan reduce in f32
    (f32_cbrt, (CBRT,)),  # IREE's f32 cbrt 12 ulp off (pow after)
    (accurate_power, (POWER,)),  # IREE's: exp(y * log(x)), 1000 ulp off, pow(x, 0) NaN
    (complex_abs, (ABS,)),  # IREE's: sqrt(a^2 + b^2), inf from 1.9e19 (f32) on (a divide)
    (complex_divide, (DIVIDE,)),  # IREE's: by c^2 + d^2, 0 or inf (after the reciprocals)
    (xla_math, (LOG, LOG1P, EXPM1, ERF)),  # f32 log, log1p, expm1, erf as XLA (after others)
    (complex_splats, ("complex<f64>",)),  # IREE: no fill of a 128-bit value
    (unsigned_sizes, (DIMENSION_SIZE,)),  # IREE: a size of an unsigned tensor, which
    (unsigned_dims, (TENSOR_DIM,)),  # the fixes read too (after them)
)


def fix_module(module: Any, skip: Collection[Callable[[Any], int]] = ()) -> int:
    """Apply every fix but those of ``skip`` to the ``iree.compiler.ir`` module in place (in
    its context); return how many ops they changed."""
    return sum(fix(module) for fix, _ in FIXES if fix not in skip)


def fixed_text(text: str) -> str:
    """``text`` with every fix applied; ``text`` itself when none has anything to do."""
    if not any(marker in text for _, markers in FIXES for marker in markers):
        return text
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(text, context)
    with context:
        if not fix_module(module):
            return text
    return module.operation.get_asm(enable_debug_info=True)
