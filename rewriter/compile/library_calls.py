"""Library calls for what compiled loops do badly: matrix products (BLAS), sorting (a stable
radix and merge sort) and f32 atan2 (libm).

After bufferization every product is an op on memrefs that adds ``A @ B`` into its output
buffer. When a BLAS is linked (``blas.py``), each product of f32, f64, complex<f32> or
complex<f64> operands (one element type for all three) becomes
``func.call @rw_blas_matmul_<t>(A, B, C, transpose_a, transpose_b, zero)`` (``batch_matmul``:
``@rw_blas_batch_matmul_<t>``), whose C side (``abi/blas_calls.c``) calls the BLAS's gemm
on the memref descriptors as they are, strides included. Operands are cast to fully
dynamic strided memrefs, so one declaration serves every shape; an operand that the op's
``indexing_maps`` read transposed is passed as stored, with its flag set. A
``linalg.generic`` that multiplies and adds with the maps of one of these products is one
too; so is the product of a batch of matrices by one shared matrix,
``@rw_blas_batch_matmul_shared_<t>``. A 2-D convolution (``linalg.conv_2d_nhwc_hwcf``, the
form IREE gives every 2-D convolution of jax, its padding already applied) becomes
``@rw_blas_conv2d_<t>(input, filter, output, stride_h, stride_w, dilation_h, dilation_w, zero)``,
which gathers the img2col rows a cache-sized chunk at a time and multiplies each chunk by
the filter with gemm. Anything else (integer or 16-bit floats, mixed element types, other
maps or bodies) stays for the loops. ``zero`` is 1 when the fill of zeros that wrote the
output just before is dropped (``_zero_fill``): the helper then writes the output, gemm's
beta 0, instead of adding to it.

A sort whose comparator ``sorts.recognise_sorts`` read into keys (its location says
``rw.sort:KEYS``) becomes ``func.call @rw_sort(table)`` (``@rw_sort1``, ... when the module
has a symbol ``@rw_sort``; ``-DRW_SORT=NAME`` names it in C): ``abi/sort_calls.c`` sorts its
operands in place along the sort dimension, with a stable radix sort (a merge sort under
256 entries) on the keys, from a table of i64 built on the stack (``_sort_table``: the
rank, the dimension, the keys, and each operand's element size, address, offset, sizes
and strides). The bubble sort the loops would make takes n^2 comparisons.

IREE's math transform, which the next stage runs, replaces f32 math functions by
polynomials; its ``atan2`` is up to about 10 units in the last place off (XLA's is within
2), so an f32 ``math.atan2`` is computed in f64 and rounded (libm's ``atan2``, which the
transform leaves alone), which is correctly rounded but for double-rounding ties.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from . import contexts
from .mlir_walk import operations_where

PREFIX = "rw_blas_"
ELEMENTS = {"f32": "f32", "f64": "f64", "complex<f32>": "c64", "complex<f64>": "c128"}

# indexing_maps of the products that BLAS computes: operand map -> stored transposed?
_MATMUL_MAPS = (
    {"(d0, d1, d2) -> (d0, d2)": 0, "(d0, d1, d2) -> (d2, d0)": 1},
    {"(d0, d1, d2) -> (d2, d1)": 0, "(d0, d1, d2) -> (d1, d2)": 1},
    {"(d0, d1, d2) -> (d0, d1)": 0},
)
_BATCH_MATMUL_MAPS = (
    {"(d0, d1, d2, d3) -> (d0, d1, d3)": 0, "(d0, d1, d2, d3) -> (d0, d3, d1)": 1},
    {"(d0, d1, d2, d3) -> (d0, d3, d2)": 0, "(d0, d1, d2, d3) -> (d0, d2, d3)": 1},
    {"(d0, d1, d2, d3) -> (d0, d1, d2)": 0},
)
_SHARED_MAPS = (
    {"(d0, d1, d2, d3) -> (d0, d1, d3)": 0},
    {"(d0, d1, d2, d3) -> (d3, d2)": 0},
    {"(d0, d1, d2, d3) -> (d0, d1, d2)": 0},
)
PRODUCTS = {
    "linalg.matmul": ("matmul", _MATMUL_MAPS),
    "linalg.batch_matmul": ("batch_matmul", _BATCH_MATMUL_MAPS),
}
# linalg.generic contractions: (iterator types, helper, maps)
GENERIC_PRODUCTS = (
    (("parallel", "parallel", "reduction"), "matmul", _MATMUL_MAPS),
    (("parallel", "parallel", "parallel", "reduction"), "batch_matmul", _BATCH_MATMUL_MAPS),
    (("parallel", "parallel", "parallel", "reduction"), "batch_matmul_shared", _SHARED_MAPS),
)


@dataclass
class LibraryCalls:
    """The rewritten module text and the helper functions it calls."""

    text: str
    called: set[str] = field(default_factory=set)
    # What the helpers' names start with: PREFIX, unless a symbol of the module does.
    prefix: str = PREFIX

    def compile_flags(self) -> list[str]:
        """clang's flag that names ``abi/blas_calls.c``'s helpers as the module calls them."""
        return [f"-DRW_BLAS_HELPERS={self.prefix}"]


def route_products_to_blas(text: str) -> LibraryCalls:
    """Replace every product that BLAS can compute by a call of its ``rw_blas_*`` helper."""
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(text, context)
    products: list[tuple[Any, str, tuple[tuple[int, int], ...]]] = []

    walked: list[Any] = []

    def visit(operation):
        walked.append(operation)
        found = _blas_product(ir, operation)
        if found:
            products.append((operation, *found))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if not products:
        return LibraryCalls(text)
    prefix = _free_prefix(ir, module)
    called: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    # Found before any op is erased: ``walked`` holds them all.
    fills = [_zero_fill(ir, operation, walked) for operation, _, _ in products]
    with context:
        for (operation, placeholder, found_scalars), fill in zip(products, fills, strict=True):
            helper = prefix + placeholder.removeprefix(PREFIX)
            scalars = (*found_scalars, (int(fill is not None), 32))
            if fill is not None:
                fill.erase()
            with ir.Location.unknown(), ir.InsertionPoint(operation):
                location = operation.location
                operands = [_dynamic_cast(ir, value, location) for value in operation.operands]
                flags = [_integer(ir, value, width, location) for value, width in scalars]
                ir.Operation.create(
                    "func.call",
                    operands=[*operands, *flags],
                    attributes={"callee": ir.FlatSymbolRefAttr.get(helper)},
                    loc=location,
                )
            ranks = tuple(len(value.type.shape) for value in operation.operands)
            called[helper] = (ranks, tuple(width for _, width in scalars))
            operation.erase()
        start = ir.InsertionPoint.at_block_begin(module.body)
        for helper in sorted(called):
            start.insert(ir.Operation.parse(_declaration(helper, *called[helper]), context=context))
    return LibraryCalls(module.operation.get_asm(enable_debug_info=True), set(called), prefix)


SORT_HELPER = "rw_sort"  # or rw_sort1, rw_sort2, ... when the module has a symbol of that name
# Bytes per element of a memref, as MLIR lays them out (i1 takes a byte).
_ELEMENT_BYTES = {
    "i1": 1, "i8": 1, "i16": 2, "f16": 2, "bf16": 2, "i32": 4, "f32": 4, "i64": 8, "f64": 8,
    "complex<f32>": 8, "complex<f64>": 16,
}  # fmt: skip


def route_sorts_to_c(text: str) -> LibraryCalls:
    """Replace every sort marked ``rw.sort:KEYS`` (``sorts.recognise_sorts``) by a call of
    the stable sort of ``abi/sort_calls.c``; a marked sort the helper cannot take (an
    element type it does not know) stays for the loops."""
    from iree.compiler import ir

    from .sorts import keys_of_location

    context = contexts.context()
    module = ir.Module.parse(text, context)
    found: list[tuple[Any, list[Any]]] = []

    def visit(operation):
        if operation.name == "iree_linalg_ext.sort":
            keys = keys_of_location(str(operation.location))
            if keys and _sortable(ir, operation, keys):
                found.append((operation, keys))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if not found:
        return LibraryCalls(text)
    helper = _free_name(ir, module, SORT_HELPER)
    with context:
        i64 = ir.IntegerType.get_signless(64)
        for operation, keys in found:
            location = operation.location
            with location, ir.InsertionPoint(operation):
                table = _sort_table(ir, operation, keys, i64)
                ir.Operation.create(
                    "func.call",
                    operands=[table],
                    attributes={"callee": ir.FlatSymbolRefAttr.get(helper)},
                )
            operation.erase()
        start = ir.InsertionPoint.at_block_begin(module.body)
        declaration = (
            f"func.func private @{helper}(memref<?xi64>) attributes {{llvm.emit_c_interface}}"
        )
        start.insert(ir.Operation.parse(declaration, context=context))
    return LibraryCalls(module.operation.get_asm(enable_debug_info=True), {helper})


def _sortable(ir, operation, keys) -> bool:
    """Every operand a memref of an element the helper knows, of one rank, with the keys'
    operands in range."""
    types = [value.type for value in operation.operands]
    if not types or not all(isinstance(t, ir.MemRefType) for t in types):
        return False
    memrefs = [ir.MemRefType(t) for t in types]
    if len({m.rank for m in memrefs}) != 1 or memrefs[0].rank == 0:
        return False
    if any(str(m.element_type) not in _ELEMENT_BYTES for m in memrefs):
        return False
    return all(0 <= key.operand < len(memrefs) for key in keys)


def _sort_table(ir, operation, keys, i64):
    """The ``memref<?xi64>`` table that ``rw_sort`` reads (abi/sort_calls.c)."""
    from .sorts import first_of_location

    index = ir.IndexType.get()
    operands = list(operation.operands)
    rank = ir.MemRefType(operands[0].type).rank
    dimension = ir.IntegerAttr(operation.attributes["dimension"]).value

    def constant(value: int, kind=i64):
        return ir.Operation.create(
            "arith.constant", results=[kind], attributes={"value": ir.IntegerAttr.get(kind, value)}
        ).result

    def as_i64(value):
        return ir.Operation.create("arith.index_cast", results=[i64], operands=[value]).result

    entries = [constant(rank), constant(dimension), constant(len(operands)), constant(len(keys))]
    for key in keys:
        entries += [constant(key.operand), constant(key.code)]
    for value in operands:
        memref = ir.MemRefType(value.type)
        entries.append(constant(_ELEMENT_BYTES[str(memref.element_type)]))
        pointer = ir.Operation.create(
            "memref.extract_aligned_pointer_as_index", results=[index], operands=[value]
        ).result
        entries.append(as_i64(pointer))
        base = ir.MemRefType.get([], memref.element_type)
        metadata = ir.Operation.create(
            "memref.extract_strided_metadata",
            results=[base, index, *[index] * (2 * rank)],
            operands=[value],
        )
        entries += [as_i64(result) for result in list(metadata.results)[1:]]
    # how many first positions the program reads (0: all; sorts.keep_marked_sorts_whole)
    entries.append(constant(first_of_location(str(operation.location)) or 0))
    table = ir.Operation.create(
        "memref.alloca",
        results=[ir.MemRefType.get([len(entries)], i64)],
        operands=[],
        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])},
    ).result
    for position, entry in enumerate(entries):
        ir.Operation.create(
            "memref.store", operands=[entry, table, constant(position, index)], results=[]
        )
    dynamic = ir.Type.parse("memref<?xi64>")
    return ir.Operation.create("memref.cast", results=[dynamic], operands=[table]).result


def widen_f32_atan2(text: str) -> str:
    """Every f32 ``math.atan2`` computed as ``truncf(atan2(extf(y), extf(x)))`` in f64."""
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(text, context)
    found = operations_where(
        module, lambda op: op.name == "math.atan2" and str(op.results[0].type) == "f32"
    )
    if not found:
        return text
    with context:
        f32, f64 = ir.F32Type.get(), ir.F64Type.get()
        for operation in found:
            location = operation.location
            with ir.InsertionPoint(operation):
                wide = [
                    ir.Operation.create("arith.extf", results=[f64], operands=[v], loc=location)
                    for v in operation.operands
                ]
                angle = ir.Operation.create(
                    "math.atan2",
                    results=[f64],
                    operands=[w.result for w in wide],
                    attributes=dict(_named(operation.attributes)),
                    loc=location,
                )
                narrow = ir.Operation.create(
                    "arith.truncf", results=[f32], operands=[angle.result], loc=location
                )
            operation.results[0].replace_all_uses_with(narrow.result)
            operation.erase()
    return module.operation.get_asm(enable_debug_info=True)


def _named(attributes):
    return ((name, attributes[name]) for name in attributes)


def _blas_product(ir, operation) -> tuple[str, tuple[tuple[int, int], ...]] | None:
    """(helper, its scalar arguments as (value, bit width)) when BLAS computes
    ``operation``, else None. A product's scalars are its (transpose_a, transpose_b)
    flags (i32), a convolution's its strides and dilations (i64)."""
    if len(operation.operands) != 3:
        return None
    types = [value.type for value in operation.operands]
    if not all(isinstance(t, ir.MemRefType) for t in types):
        return None
    elements = {str(t.element_type) for t in types}
    if len(elements) != 1 or next(iter(elements)) not in ELEMENTS:
        return None
    suffix = ELEMENTS[next(iter(elements))]
    if operation.name == "linalg.conv_2d_nhwc_hwcf":
        steps = [_pair(ir, operation, name) for name in ("strides", "dilations")]
        return f"{PREFIX}conv2d_{suffix}", tuple((v, 64) for pair in steps for v in pair)
    if "indexing_maps" not in operation.attributes:
        return None
    written = [
        str(ir.AffineMapAttr(a).value) for a in ir.ArrayAttr(operation.attributes["indexing_maps"])
    ]
    if operation.name in PRODUCTS:
        candidates = [PRODUCTS[operation.name]]
    elif operation.name == "linalg.generic" and _multiplies_and_adds(ir, operation):
        iterators = tuple(iterator_types(operation))
        candidates = [(name, maps) for kinds, name, maps in GENERIC_PRODUCTS if kinds == iterators]
    else:
        return None
    for name, maps in candidates:
        flags = [choices.get(text) for choices, text in zip(maps, written, strict=True)]
        if flags[0] is not None and flags[1] is not None and flags[2] is not None:
            return f"{PREFIX}{name}_{suffix}", ((flags[0], 32), (flags[1], 32))
    return None


def _zero_fill(ir, operation, walked: list[Any]):
    """The ``linalg.fill`` of +0 that fills the output of the product ``operation``, a buffer
    of its own (``memref.alloc``) that no other op uses before the product, in the product's
    block; else None. The helper then writes the output instead of adding to it (gemm's
    beta 0: the same bits) and the fill goes: a pass over the output fewer, and the
    zeroing done a chunk at a time, on the product's threads. ``walked`` is every op of the
    module in post-order (ops are compared by identity and read as plain operations: a
    Python view of a linalg op would load the bindings' linalg module, ``iterator_types``)."""
    out = operation.operands[2]
    if any(value == out for value in list(operation.operands)[:2]):
        return None
    at = {hash(op): position for position, op in enumerate(walked)}
    product_at = at[hash(operation)]
    fill = None
    for op in walked:
        if op.name == "memref.alloc" and any(r == out for r in op.results):
            break
    else:
        return None
    for op in walked:
        if not any(value == out for value in op.operands) or hash(op) == hash(operation):
            continue
        filled = op.name == "linalg.fill" and op.operands[1] == out and fill is None
        if filled and at[hash(op)] < product_at and op.block == operation.block:
            fill = op
        elif at[hash(op)] < product_at:
            return None
    if fill is None:
        return None
    constant = _ZERO.fullmatch(str(fill.operands[0]))
    return fill if constant else None


# The value a fill of zeros writes, as it prints: +0 (-0 plus a product of -0 gives -0,
# where a gemm writing its output gives +0 plus it, +0).
_ZERO = re.compile(r"OpResult\(%\S+ = arith\.constant 0\.0+e\+00 : f(?:32|64)( loc\(.*\))?\)", re.S)


# The iterator types of a linalg op, as its attribute prints them.
_ITERATOR = re.compile(r"iterator_type<(\w+)>")


def iterator_types(operation) -> list[str]:
    """The iterator types of the linalg op ``operation`` (``parallel``, ``reduction``), read
    from the attribute's text. An element taken as a Python object, or an op of the body
    taken from its block, would load the bindings' linalg dialect module (0.09 s a process,
    for its op DSL); so the attribute is read as text and a body by a walk
    (``body_operations``)."""
    return _ITERATOR.findall(str(operation.attributes["iterator_types"]))


def body_operations(ir, operation) -> list[Any]:
    """The ops inside ``operation``'s regions, in order, as plain operations (a pre-order
    walk: ``operation`` itself is the first one visited, and left out)."""
    found: list[Any] = []

    def visit(op):
        found.append(op)
        return ir.WalkResult.ADVANCE

    operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found[1:]


def _pair(ir, operation, name: str) -> tuple[int, int]:
    """A convolution's (height, width) ``strides`` or ``dilations``; 1 when not given."""
    if name not in operation.attributes:
        return 1, 1
    height, width = (int(v) for v in ir.DenseIntElementsAttr(operation.attributes[name]))
    return height, width


def _multiplies_and_adds(ir, operation) -> bool:
    """The body is ``out + in0 * in1`` (either order of each), on floats."""
    block = operation.regions[0].blocks[0]
    body = body_operations(ir, operation)
    if [op.name for op in body] != ["arith.mulf", "arith.addf", "linalg.yield"]:
        return False
    multiply, add, done = body
    first, second, out = block.arguments
    factors, terms = list(multiply.operands), list(add.operands)
    return (
        factors in ([first, second], [second, first])
        and terms in ([out, multiply.results[0]], [multiply.results[0], out])
        and done.operands[0] == add.results[0]
    )


def _dynamic_cast(ir, value, location):
    """``memref.cast`` of ``value`` to the same rank and element, every size and stride dynamic."""
    source = ir.MemRefType(value.type)
    target = ir.Type.parse(_dynamic_memref(source.rank, str(source.element_type)))
    return ir.Operation.create(
        "memref.cast", results=[target], operands=[value], loc=location
    ).result


def _integer(ir, value: int, width: int, location):
    kind = ir.IntegerType.get_signless(width)
    return ir.Operation.create(
        "arith.constant",
        results=[kind],
        attributes={"value": ir.IntegerAttr.get(kind, value)},
        loc=location,
    ).result


def _dynamic_memref(rank: int, element: str) -> str:
    sizes = "?x" * rank
    strides = ", ".join("?" for _ in range(rank))
    return f"memref<{sizes}{element}, strided<[{strides}], offset: ?>>"


def _declaration(helper: str, ranks: tuple[int, ...], widths: tuple[int, ...]) -> str:
    element = next(e for e, short in ELEMENTS.items() if helper.endswith(f"_{short}"))
    parameters = [_dynamic_memref(rank, element) for rank in ranks]
    parameters += [f"i{width}" for width in widths]
    return (
        f"func.func private @{helper}({', '.join(parameters)}) attributes {{llvm.emit_c_interface}}"
    )


def _free_name(ir, module, name: str) -> str:
    """``name``, or ``name1``, ``name2``, ...: the first that no symbol of the module is (nor
    ``_mlir_ciface_`` and it)."""
    names = set()
    for operation in module.body.operations:
        op = operation.operation
        if "sym_name" in op.attributes:
            names.add(ir.StringAttr(op.attributes["sym_name"]).value.removeprefix("_mlir_ciface_"))
    chosen, counter = name, 0
    while chosen in names:
        counter += 1
        chosen = f"{name}{counter}"
    return chosen


def _free_prefix(ir, module) -> str:
    """``rw_blas_``, or ``rw_blas1_``, ``rw_blas2_``, ...: the first that no symbol of the
    module starts with (nor ``_mlir_ciface_`` and it), so that no helper's name, nor its C
    name, is a name the module has (an extern ``@rw_blas_matmul_f32`` of the user's)."""
    names = []
    for operation in module.body.operations:
        op = operation.operation
        if "sym_name" in op.attributes:
            names.append(
                ir.StringAttr(op.attributes["sym_name"]).value.removeprefix("_mlir_ciface_")
            )
    prefix, counter = PREFIX, 0
    while any(name.startswith(prefix) for name in names):
        counter += 1
        prefix = f"{PREFIX.removesuffix('_')}{counter}_"
    return prefix
