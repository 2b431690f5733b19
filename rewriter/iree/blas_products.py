"""Matrix products of the IREE path computed by a BLAS's gemm inside IREE dispatches.

IREE has no f64 kernel for its matrix products (no f64 ``mmt4d`` ukernel): a 512 x 512
f64 ``stablehlo.dot_general`` takes 20 ms of its code against 2.9 ms of OpenBLAS's
``dgemm``; its f32 512 x 512 product takes 2.3-2.9 ms against 1.3-1.5 of ``sgemm``. So,
when ``load`` can serve them (a BLAS found, and a HAL driver with the executable plugin),
``route_products_to_blas`` replaces each static ``stablehlo.dot_general`` of the chosen
element types, and each of a symbolic batch (``rows_at_run_time``: rows read at run time;
``batch_at_run_time``: a leading batch dimension read at run time, as an attention's), by a
call of a private function holding one ``flow.dispatch`` of a
hand-written executable (``@rw_blas_product_N``), as ``dispatches.py`` does for FFI calls:
its code passes the bindings' base pointers and offsets, its workgroup's id and the
product's layout to the executable import ``rw_iree_blas_gemm_f64`` (``_f32``), which the
plugin resolves to ``abi/iree_blas_products.c`` (``blas_gemm.py``). IREE schedules the
dispatch as its own and keeps the other ops' fusions; only the product leaves its code.

The layout comes from the dimension numbers (``layout_of``): each operand's batch, free and
contracting dimensions must each collapse into one strided dimension of the stored
row-major tensor (size-1 dimensions aside), one of a matrix's two unit-strided, and at most
three batch dimensions remain after merging those that follow each other in all three
tensors; the result's free dimensions are rows then columns, contiguous. A product that
does not fit (or has no elements, or sizes beyond 32-bit BLAS integers), and one whose
items are under 4096 multiply-adds, keeps IREE's code.
A batch item is one workgroup. A single large product is split into blocks (``_block``)
so that ``local-task``'s workers share it, only for that driver (a product of a symbolic
batch: its rows, read at run time, in as many blocks as ``_rows_lines`` counts, at least
64 rows each): each block's gemm packs the
whole of the other operand again (the f32 block of ``shape_sweep.py`` at batch 300 and
width 768 took 25.6 ms of CPU split in four row blocks on ``local-sync``, 18.3 ms whole),
so ``local-sync``, where the blocks run one after the other, gets the product whole, and
``local-task`` gets it cut along the dimension whose cut packs less again.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from math import prod
from typing import Any, cast

from ..compile.parallel_loops import default_threads
from .dispatches import binding_base, executable_lines

EXECUTABLE_PREFIX = "rw_blas_product_"
IMPORT_PREFIX = "rw_iree_blas_gemm_"  # the executable import: rw_iree_blas_gemm_f64
ELEMENTS = ("f32", "f64")
# The element types whose products ``load`` gives the BLAS, where IREE's code loses: f64
# by far; f32 by less (a 512 x 512 product 2.3-2.9 ms against sgemm's 1.3-1.5), and the
# shape_sweep blocks and attentions ran 0 to 30% faster with it despite the fusions lost.
ROUTED_ELEMENTS = ("f32", "f64")
MAX_BATCH = 3  # as abi/iree_blas_products.c
_FIRST_BATCH = 11  # the place of the first batch size in ``Layout.constants``
_BLAS_INT_MAX = 2**31 - 1
# A product whose items have fewer multiply-adds stays IREE's: gemm's call and a dispatch of
# its own cost more than IREE's code for it, fused with its neighbours, takes.
MIN_ITEM_WORK = 1 << 12
# A product of one item with at least this many multiply-adds is split into blocks.
_SPLIT_WORK = 1 << 21
_MAX_BLOCKS = 4
_MIN_BLOCK_SIDE = 64  # rows or columns


def most_blocks() -> int:
    """The most blocks a large product is cut in for ``local-task``: one a CPU this process
    may run on (IREE's ``local-task`` has a worker a core), at most ``_MAX_BLOCKS``. Each
    block packs the other operand again, so blocks beyond the workers cost CPU time and win
    none: on 2 cores the f64 product of 300 x 512 by 512 x 512 took 1.64 ms (2.96 ms of CPU)
    in four column blocks, 1.39-1.47 ms (2.55-2.66) in two; jax.jit 1.15 (2.15)."""
    return max(1, min(_MAX_BLOCKS, default_threads()))


_DIMENSIONS = re.compile(r"(\w+_dimensions) = \[([\d, ]*)\]")


@dataclass(frozen=True)
class DotDimensions:
    """The dimension numbers of a ``stablehlo.dot_general``."""

    lhs_batch: tuple[int, ...] = ()
    rhs_batch: tuple[int, ...] = ()
    lhs_contracting: tuple[int, ...] = ()
    rhs_contracting: tuple[int, ...] = ()

    @classmethod
    def parse(cls, text: str) -> DotDimensions:
        """From the attribute's text, ``#stablehlo.dot<lhs_batching_dimensions = [0], ...>``."""
        found = {
            name: tuple(int(v) for v in values.split(",") if v.strip())
            for name, values in _DIMENSIONS.findall(text)
        }
        return cls(
            found.get("lhs_batching_dimensions", ()),
            found.get("rhs_batching_dimensions", ()),
            found.get("lhs_contracting_dimensions", ()),
            found.get("rhs_contracting_dimensions", ()),
        )


@dataclass(frozen=True)
class Layout:
    """One product as gemm sees it, in the order of abi/iree_blas_products.c's struct."""

    m: int
    n: int
    k: int
    trans_a: int
    lda: int
    trans_b: int
    ldb: int
    ldc: int
    rows: int  # the rows and columns of the block of the result one workgroup computes
    cols: int
    batch: tuple[int, ...]
    a_batch: tuple[int, ...]
    b_batch: tuple[int, ...]
    c_batch: tuple[int, ...]

    @property
    def tasks(self) -> int:
        """The workgroups: every batch item's blocks."""
        return prod(self.batch) * -(-self.m // self.rows) * -(-self.n // self.cols)

    def constants(self) -> list[int]:
        """The import's arguments after the workgroup id."""
        pad = [0] * (MAX_BATCH - len(self.batch))
        values = [self.m, self.n, self.k, self.trans_a, self.lda, self.trans_b, self.ldb]
        values += [self.ldc, self.rows, self.cols, len(self.batch), *self.batch, *pad]
        for strides in (self.a_batch, self.b_batch, self.c_batch):
            values += [*strides, *pad]
        return values


def _row_major(shape: Sequence[int]) -> list[int]:
    strides, stride = [], 1
    for size in reversed(shape):
        strides.append(stride)
        stride *= size
    return strides[::-1]


def _collapse(dims: Sequence[int], shape: Sequence[int], strides: Sequence[int]):
    """``dims`` of a tensor, in that order, as one (size, stride); None when they are not
    evenly spaced in its storage. Size-1 dimensions are passed over."""
    kept = [d for d in dims if shape[d] != 1]
    for outer, inner in zip(kept, kept[1:], strict=False):
        if strides[outer] != strides[inner] * shape[inner]:
            return None
    if not kept:
        return 1, 1
    return prod(shape[d] for d in kept), strides[kept[-1]]


def _matrix_form(rows: int, cols: int, row_stride: int, col_stride: int):
    """How row-major gemm reads a rows x cols matrix: (transposed, leading dimension), or
    None when neither its rows nor its columns are contiguous (as blas_calls.c)."""
    if (cols == 1 or col_stride == 1) and (rows == 1 or row_stride >= cols):
        return 0, cols if rows == 1 else row_stride
    if (rows == 1 or row_stride == 1) and (cols == 1 or col_stride >= rows):
        return 1, rows if cols == 1 else col_stride
    return None


def layout_of(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], dims: DotDimensions, split: bool = True
) -> Layout | None:
    """The gemm layout of a dot_general of these static shapes, or None when gemm cannot
    compute it on the tensors as they are stored (see the module's doc); a large single
    product in blocks when ``split``."""
    lhs_strides, rhs_strides = _row_major(lhs_shape), _row_major(rhs_shape)
    lhs_free = [
        d for d in range(len(lhs_shape)) if d not in (*dims.lhs_batch, *dims.lhs_contracting)
    ]
    rhs_free = [
        d for d in range(len(rhs_shape)) if d not in (*dims.rhs_batch, *dims.rhs_contracting)
    ]
    batch_sizes = [lhs_shape[d] for d in dims.lhs_batch]
    result_shape = [
        *batch_sizes,
        *(lhs_shape[d] for d in lhs_free),
        *(rhs_shape[d] for d in rhs_free),
    ]
    if 0 in result_shape or 0 in lhs_shape or 0 in rhs_shape:
        return None
    m_dim = _collapse(lhs_free, lhs_shape, lhs_strides)
    ka = _collapse(dims.lhs_contracting, lhs_shape, lhs_strides)
    kb = _collapse(dims.rhs_contracting, rhs_shape, rhs_strides)
    n_dim = _collapse(rhs_free, rhs_shape, rhs_strides)
    if m_dim is None or ka is None or kb is None or n_dim is None:
        return None
    (m, m_stride), (k, ka_stride), (_, kb_stride), (n, n_stride) = m_dim, ka, kb, n_dim
    a_form = _matrix_form(m, k, m_stride, ka_stride)
    b_form = _matrix_form(k, n, kb_stride, n_stride)
    if a_form is None or b_form is None:
        return None
    result_strides = _row_major(result_shape)
    # Batch dimensions: size 1 dropped, neighbours merged where all three tensors allow.
    batch: list[list[int]] = []  # [size, lhs stride, rhs stride, result stride]
    for i, (left, right) in enumerate(zip(dims.lhs_batch, dims.rhs_batch, strict=True)):
        if lhs_shape[left] == 1:
            continue
        entry = [lhs_shape[left], lhs_strides[left], rhs_strides[right], result_strides[i]]
        if batch and all(batch[-1][j] == entry[j] * entry[0] for j in (1, 2, 3)):
            batch[-1] = [batch[-1][0] * entry[0], *entry[1:]]
        else:
            batch.append(entry)
    if len(batch) > MAX_BATCH:
        return None
    ldc = n
    if max(m, n, k, a_form[1], b_form[1], ldc) > _BLAS_INT_MAX:
        return None
    return Layout(
        m,
        n,
        k,
        a_form[0],
        a_form[1],
        b_form[0],
        b_form[1],
        ldc,
        *_block(m, n, k, prod(b[0] for b in batch), split),
        tuple(b[0] for b in batch),
        tuple(b[1] for b in batch),
        tuple(b[2] for b in batch),
        tuple(b[3] for b in batch),
    )


def _block(m: int, n: int, k: int, items: int, split: bool) -> tuple[int, int]:
    """The rows and columns of one workgroup's block of the result: all of it, but for a
    single large product when ``split``, up to ``most_blocks()`` blocks of at least 64 rows
    or columns.
    A block of rows packs all of B (k x n) again, a block of columns all of A (m x k): the
    product is cut in rows when m >= n, else in columns."""
    if not split or items > 1 or m * n * k < _SPLIT_WORK:
        return m, n
    side = m if m >= n else n
    blocks = max(1, min(most_blocks(), side // _MIN_BLOCK_SIDE))
    return (-(-m // blocks), n) if m >= n else (m, -(-n // blocks))


def route_products_to_blas(module: Any, elements: Collection[str], split: bool = True) -> int:
    """Replace, in the ``iree.compiler.ir`` module, each ``stablehlo.dot_general`` whose
    operands and result are static tensors of one element type of ``elements`` and whose
    layout gemm can read (``layout_of``) by a call of a dispatch that calls the BLAS; return
    how many were replaced. ``split``: for ``local-task``, whose workers share the blocks
    of a large product (module doc)."""
    from iree.compiler import ir

    found: list[tuple[Any, str, Layout, AtRunTime | None]] = []

    def visit(operation):
        if operation.name == "stablehlo.dot_general":
            chosen = _chosen(ir, operation, elements, split)
            if chosen is not None:
                found.append((operation, *chosen))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if not found:
        return 0
    functions: dict[tuple[tuple[str, ...], Layout, AtRunTime | None], str] = {}
    definitions: list[str] = []
    for operation, element, layout, rows in found:
        types = tuple(str(value.type) for value in (*operation.operands, operation.results[0]))
        key = (types, layout, rows)
        function = functions.get(key)
        if function is None:
            name = f"{EXECUTABLE_PREFIX}{len(functions)}"
            function = functions[key] = f"{name}_call"
            definitions.append(_definitions(name, function, element, layout, types, rows))
        with operation.context, operation.location, ir.InsertionPoint(operation):
            call = ir.Operation.create(
                "func.call",
                results=[operation.results[0].type],
                operands=list(operation.operands),
                attributes={"callee": ir.FlatSymbolRefAttr.get(function)},
            )
        operation.results[0].replace_all_uses_with(call.results[0])
        operation.erase()
    with module.context, ir.Location.unknown():
        parsed = ir.Module.parse("\n".join(definitions))  # alive while its ops move out
        first = module.body.operations[0]
        for new in list(parsed.body.operations):
            new.operation.move_before(first)
    return len(found)


def _chosen(
    ir: Any, operation: Any, elements: Collection[str], split: bool
) -> tuple[str, Layout, AtRunTime | None] | None:
    """(element type, layout, what of it is read at run time or None) of a dot_general
    that the BLAS computes, or None."""
    types = [ir.RankedTensorType(v.type) for v in (*operation.operands, operation.results[0])]
    element = {str(t.element_type) for t in types}
    if len(element) != 1 or (name := element.pop()) not in elements:
        return None
    dims = DotDimensions.parse(str(operation.attributes["dot_dimension_numbers"]))
    if not all(t.has_static_shape for t in types):
        lhs, rhs = _shape(types[0]), _shape(types[1])
        found = rows_at_run_time(lhs, rhs, dims, split) or batch_at_run_time(lhs, rhs, dims)
        return None if found is None else (name, *found)
    layout = layout_of(list(types[0].shape), list(types[1].shape), dims, split)
    if layout is None or layout.m * layout.n * layout.k < MIN_ITEM_WORK:
        return None
    return name, layout, None


def _shape(kind: Any) -> list[int | None]:
    """The sizes of a ranked tensor type, None where dynamic."""
    return [None if kind.is_dynamic_dim(d) else kind.shape[d] for d in range(kind.rank)]


@dataclass(frozen=True)
class RunTimeRows:
    """A product whose rows (``m``) are known at run time only: the lhs's free dimensions,
    which lead it and hold every dynamic size (``dynamic``, their places), times
    ``static`` (the product of the static ones); ``split``: in up to ``most_blocks()``
    blocks of at least ``_MIN_BLOCK_SIDE`` rows, one a workgroup, for ``local-task``."""

    dynamic: tuple[int, ...]
    static: int
    split: bool


def rows_at_run_time(
    lhs_shape: Sequence[int | None],
    rhs_shape: Sequence[int | None],
    dims: DotDimensions,
    split: bool = True,
) -> tuple[Layout, RunTimeRows] | None:
    """The layout of a product of a symbolic batch, ``(b, ..., k) @ (k, n)``: no batch
    dimensions, the lhs's contracting dimensions its last ones, in order (so that it is a
    row-major ``m x k`` matrix however many rows it has, ``lda = k``), every dynamic size
    among its free dimensions and the rhs static; None for another. Its ``m`` and ``rows``
    are 0 in the layout: the dispatch reads them at run time."""
    if dims.lhs_batch or dims.rhs_batch or None in rhs_shape:
        return None
    rank = len(lhs_shape)
    contracting = list(dims.lhs_contracting)
    free = rank - len(contracting)
    if contracting != list(range(free, rank)) or None in lhs_shape[free:]:
        return None
    k = prod(cast(Sequence[int], lhs_shape[free:]))
    rhs = [int(cast(int, size)) for size in rhs_shape]
    rhs_free = [d for d in range(len(rhs)) if d not in dims.rhs_contracting]
    strides = _row_major(rhs)
    kb = _collapse(dims.rhs_contracting, rhs, strides)
    n_dim = _collapse(rhs_free, rhs, strides)
    if kb is None or n_dim is None or kb[0] != k or 0 in rhs or k == 0:
        return None
    (_, kb_stride), (n, n_stride) = kb, n_dim
    b_form = _matrix_form(k, n, kb_stride, n_stride)
    if b_form is None or max(n, k, b_form[1]) > _BLAS_INT_MAX or n * k < MIN_ITEM_WORK:
        return None
    dynamic = tuple(d for d in range(free) if lhs_shape[d] is None)
    static = prod(int(size) for size in lhs_shape[:free] if size is not None)
    layout = Layout(0, n, k, 0, k, b_form[0], b_form[1], n, 0, n, (), (), (), ())
    return layout, RunTimeRows(dynamic, static, split)


@dataclass(frozen=True)
class RunTimeBatch:
    """A product whose leading batch dimension (the first of the lhs, the rhs and the
    result) is known at run time only: the layout's first batch size is that size times
    ``merged`` (the batch dimensions merged with it), and each of its units is ``items``
    batch items, one a workgroup."""

    merged: int
    items: int


AtRunTime = RunTimeRows | RunTimeBatch
# A leading batch size the layout is worked out with: its strides and the others' do not
# depend on it, and unlike 1 it is neither dropped nor merged as a size of 1 would be.
_STAND_IN = 2


def batch_at_run_time(
    lhs_shape: Sequence[int | None], rhs_shape: Sequence[int | None], dims: DotDimensions
) -> tuple[Layout, RunTimeBatch] | None:
    """The layout of a batched product of a symbolic batch, ``(b, ...) x (b, ...)`` with
    ``b`` the first batch dimension of both operands and every other size static (an
    attention's products of ``bqhd,bkhd->bhqk``): ``layout_of`` with a stand-in for ``b``,
    whose first batch size the dispatch reads at run time. Row-major strides do not depend
    on the leading size, so the rest of the layout holds for any ``b``. None for another
    product, or one whose items are under ``MIN_ITEM_WORK``."""
    if not dims.lhs_batch or dims.lhs_batch[0] != 0 or dims.rhs_batch[0] != 0:
        return None
    if lhs_shape[0] is not None or rhs_shape[0] is not None:
        return None
    if None in lhs_shape[1:] or None in rhs_shape[1:]:
        return None
    lhs = [_STAND_IN, *cast(Sequence[int], lhs_shape[1:])]
    rhs = [_STAND_IN, *cast(Sequence[int], rhs_shape[1:])]
    layout = layout_of(lhs, rhs, dims, split=False)
    if layout is None or layout.m * layout.n * layout.k < MIN_ITEM_WORK:
        return None
    merged = layout.batch[0] // _STAND_IN
    return layout, RunTimeBatch(merged, merged * prod(layout.batch[1:]))


def _definitions(
    name: str,
    function: str,
    element: str,
    layout: Layout,
    types: Sequence[str],
    at_run_time: AtRunTime | None = None,
) -> str:
    """The executable ``@name`` that calls gemm, and ``@function`` that dispatches it. With
    ``RunTimeRows``, the product's rows are the dispatch's operand ``%m``, its workgroups as
    many blocks of rows as ``_rows_lines`` says; with ``RunTimeBatch``, the leading batch
    size is its operand ``%nb``, its workgroups every batch item."""
    body = ["%c0 = arith.constant 0 : index"]
    arguments = "%p0: !stream.binding, %p1: !stream.binding, %q0: !stream.binding"
    read: dict[int, str] = {}  # the layout's values read at run time, by their place
    if at_run_time is None:
        sizes: list[int | str] = [prod(_static_shape(t)) for t in types]
    elif isinstance(at_run_time, RunTimeRows):
        arguments += ", %m: index"
        body += [
            f"%ck = arith.constant {layout.k} : index",
            f"%cn = arith.constant {layout.n} : index",
            "%m_k = arith.muli %m, %ck : index",
            "%m_n = arith.muli %m, %cn : index",
        ]
        sizes = ["%m_k", layout.k * layout.n, "%m_n"]
    else:
        arguments += ", %nb: index"
        sizes = []
        for number, type_ in enumerate(types):
            body += [
                f"%per{number} = arith.constant {_elements_after_first(type_)} : index",
                f"%size{number} = arith.muli %nb, %per{number} : index",
            ]
            sizes.append(f"%size{number}")
        body += [
            f"%merged = arith.constant {at_run_time.merged} : index",
            "%items = arith.muli %nb, %merged : index",
            "%batch0 = arith.index_cast %items : index to i64",
        ]
        read = {_FIRST_BATCH: "%batch0"}
    values: list[str] = []
    for binding, size in zip(("p0", "p1", "q0"), sizes, strict=True):
        body.extend(binding_base(binding, size, element))
        values += [f"%b{binding}", f"%o{binding}"]
    body.append("%id = stream.dispatch.workgroup.id[0] : index")
    values.append("%id")
    call_types = [f"memref<{element}>", "index"] * 3 + ["index"]
    if isinstance(at_run_time, RunTimeRows):  # m and the rows of a block: the layout's 0s
        body += [
            "%count = stream.dispatch.workgroup.count[0] : index",
            "%c1 = arith.constant 1 : index",
            "%share = arith.ceildivui %m, %count : index",
            "%block_rows = arith.maxui %share, %c1 : index",
            "%rows_m = arith.index_cast %m : index to i64",
            "%rows_block = arith.index_cast %block_rows : index to i64",
        ]
        read = {0: "%rows_m", 8: "%rows_block"}
    for index, value in enumerate(layout.constants()):
        if index in read:
            values.append(read[index])
        else:
            body.append(f"%k{index} = arith.constant {value} : i64")
            values.append(f"%k{index}")
        call_types.append("i64")
    symbol = IMPORT_PREFIX + element
    signature = ", ".join(call_types)
    body.append(f"func.call @{symbol}({', '.join(values)}) : ({signature}) -> ()")
    lhs, rhs, result = types
    if at_run_time is None:
        return "\n".join(
            [
                *executable_lines(name, {symbol: signature}, arguments, body, layout.tasks),
                f"func.func private @{function}(%a0: {lhs}, %a1: {rhs}) -> {result} {{",
                f"  %r = flow.dispatch @{name}::@{name}(%a0, %a1) : ({lhs}, {rhs}) -> {result}",
                f"  return %r : {result}",
                "}",
            ]
        )
    if isinstance(at_run_time, RunTimeBatch):
        count = _batch_lines(at_run_time)
        executable = executable_lines(name, {symbol: signature}, arguments, body, count=count)
        call = [
            f"func.func private @{function}(%a0: {lhs}, %a1: {rhs}) -> {result} {{",
            "  %c0 = arith.constant 0 : index",
            f"  %d0 = tensor.dim %a0, %c0 : {lhs}",
            f"  %e0 = tensor.dim %a1, %c0 : {rhs}",
            f"  %r = flow.dispatch @{name}::@{name}[%d0](%a0, %a1, %d0) : "
            f"({lhs}{{%d0}}, {rhs}{{%e0}}, index) -> {result}{{%d0}}",
            f"  return %r : {result}",
            "}",
        ]
        return "\n".join([*executable, *call])
    rows = at_run_time
    count = _rows_lines(rows)
    executable = executable_lines(name, {symbol: signature}, arguments, body, count=count)
    sizes_of = [f"%d{d}" for d in rows.dynamic]
    dynamic = ", ".join(sizes_of)
    call = [
        f"func.func private @{function}(%a0: {lhs}, %a1: {rhs}) -> {result} {{",
        *(f"  %at{d} = arith.constant {d} : index" for d in rows.dynamic),
        *(f"  %d{d} = tensor.dim %a0, %at{d} : {lhs}" for d in rows.dynamic),
        f"  %m0 = arith.constant {rows.static} : index",
    ]
    for n, size in enumerate(sizes_of, 1):
        call.append(f"  %m{n} = arith.muli %m{n - 1}, {size} : index")
    m = f"%m{len(sizes_of)}"
    call += [
        f"  %r = flow.dispatch @{name}::@{name}[{m}](%a0, %a1, {m}) : "
        f"({lhs}{{{dynamic}}}, {rhs}, index) -> {result}{{{dynamic}}}",
        f"  return %r : {result}",
        "}",
    ]
    return "\n".join([*executable, *call])


def _batch_lines(batch: RunTimeBatch) -> tuple[list[str], str]:
    """The workgroup count of a product of a run-time batch from its workload ``%w`` (the
    leading batch size): one a batch item, at least 1 (a batch of 0 computes nothing)."""
    return [
        "%one = arith.constant 1 : index",
        f"%per = arith.constant {batch.items} : index",
        "%all = arith.muli %w, %per : index",
        "%blocks = arith.maxui %all, %one : index",
    ], "%blocks"


def _rows_lines(rows: RunTimeRows) -> tuple[list[str], str]:
    """The workgroup count of a product of ``rows`` from its workload ``%w`` (its rows):
    one, or for ``split`` one per ``_MIN_BLOCK_SIDE`` rows, at least 1 and at most
    ``most_blocks()``; the dispatch gives each ``ceil(m / count)`` rows."""
    if not rows.split:
        return ["%one = arith.constant 1 : index"], "%one"
    return [
        "%one = arith.constant 1 : index",
        f"%side = arith.constant {_MIN_BLOCK_SIDE} : index",
        f"%most = arith.constant {most_blocks()} : index",
        "%per = arith.ceildivui %w, %side : index",
        "%few = arith.minui %per, %most : index",
        "%blocks = arith.maxui %few, %one : index",
    ], "%blocks"


def _static_shape(type_: str) -> list[int]:
    """The dimensions of ``tensor<2x3xf64>``."""
    inner = type_[len("tensor<") : -1]
    return [int(d) for d in inner.split("x")[:-1]]


def _elements_after_first(type_: str) -> int:
    """The elements of ``tensor<?x3x4xf32>`` per unit of its first size: 12."""
    inner = type_[len("tensor<") : -1]
    return prod(int(d) for d in inner.split("x")[1:-1])
