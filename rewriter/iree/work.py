"""An estimate of the arithmetic one call of a module does, read from its MLIR text.

``drivers.py`` picks the driver by it. Each op counts the elements of the largest tensor of
its type signature (what an elementwise op or a reduction touches), a ``dot_general``
twice its result's elements times the contracted size, a ``convolution`` twice its
result's elements times the kernel's elements per output feature (multiply-adds); 64-bit
and complex elements count 2 to 4 times, as a vector holds fewer of them. A function
counts once per call of it (``call @f``), and the public functions are summed. Loop bodies
count once: the estimate is a floor. None when a shape is dynamic (its size is unknown
until the call). An op in MLIR's generic form (``"stablehlo.reduce_window"(...) ({ ... })``)
counts by the signature after its region (``}) : (...) -> ...``).

``work_parts`` gives the estimate in three kinds, which the drivers share out differently
(``drivers.py``): the products' and convolutions' operations; the element operations that
IREE's workgroups share (elementwise ops, gathers, reductions to tensors, windows: a
``reduce_window`` counts its result's elements times its window's), of ``SHARED_SIZE``
elements and more; and those of the ops no second thread shares: the smaller ones, and
those that IREE's llvm-cpu compiles as one workgroup (``distribution = [0]`` in
``--iree-hal-dump-executable-configurations-to``): scatters, sorts, reductions to scalars
and scans (a window as long as its operand's dimension, as jax writes ``cumsum``), but
those that ``compile/xla_scans.py`` cuts into rows of blocks (two element operations an
element, shared).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# Scans in blocks (compile/xla_scans.py): their bodies and elements, and the least length
# along the axis from which the estimate counts their rows as shared
_SCAN_BODIES = ("stablehlo.add", "stablehlo.multiply")
_SCAN_ELEMENTS = ("f32", "f64")
SHARED_SCAN = 1024

_FUNCTION = re.compile(r"^\s*func\.func\s+(?:(?:public|private|nested)\s+)?@([\w$.-]+)", re.M)
_PUBLIC = re.compile(r"^\s*func\.func\s+(?:public\s+)?@", re.M)
_CALL = re.compile(r"\bcall @([\w$.-]+)")
_TENSOR = re.compile(r"tensor<((?:[0-9?]+x)*)([^<>]*(?:<[^<>]*>)?)>")
_CONTRACTING = re.compile(r"contracting_dims\s*=\s*\[([\d, ]*)\]")
_KERNEL_LAYOUT = re.compile(r"dim_numbers\s*=\s*\[[^\]]*\]x\[([^\]]*)\]")
_LOCATION = re.compile(r"\s+loc\(.*$")
_WINDOW = re.compile(r"window_dimensions\s*=\s*array<i64:\s*([\d, ]*)>")
_PADDING = re.compile(r"padding\s*=\s*dense<([^>]*)>")
_OP = re.compile(r"\b(stablehlo\.[a-z_]+)\b")  # the ops of a generic op's region
# Elements of these types count more: a vector register holds half (or a quarter) as many.
_WEIGHT = {"f64": 2, "i64": 2, "complex<f32>": 2, "complex<f64>": 4}
# The elements (weighted) from which an op's dispatch is worth sharing among threads: one of
# 64,000 floats takes about what handing it to a worker does (drivers.py).
SHARED_SIZE = 65_536


class _Dynamic(Exception):
    pass


@dataclass(frozen=True)
class Work:
    """One call's estimated work in its three kinds (module docstring)."""

    products: int = 0  # of dot_generals and convolutions: twice their multiply-adds
    parallel: int = 0  # of the other ops, but those of ``serial``: their largest tensors
    serial: int = 0  # of the ops no second thread shares: small ones, one-workgroup ones

    def __add__(self, other: Work) -> Work:
        return Work(
            self.products + other.products,
            self.parallel + other.parallel,
            self.serial + other.serial,
        )

    @property
    def total(self) -> int:
        return self.products + self.parallel + self.serial


_NONE = Work()


def estimated_work(text: str) -> int | None:
    """The estimated multiply-adds and element operations of one call of the module
    ``text`` (its public functions, module docstring), or None when a shape is dynamic."""
    parts = work_parts(text)
    return parts.total if parts is not None else None


def work_parts(text: str) -> Work | None:
    """``estimated_work``'s total in its three kinds, or None when a shape is dynamic."""
    bodies = _function_bodies(text)
    try:
        totals: dict[str, Work] = {}
        names = _public_names(text, bodies)
        return sum((_work_of(name, bodies, totals, ()) for name in names), _NONE)
    except _Dynamic:
        return None


def _function_bodies(text: str) -> dict[str, str]:
    """Each function's text, from its ``func.func`` line to the next one."""
    matches = list(_FUNCTION.finditer(text))
    ends = [m.start() for m in matches[1:]] + [len(text)] * bool(matches)
    return {m.group(1): text[m.start() : end] for m, end in zip(matches, ends, strict=True)}


def _public_names(text: str, bodies: dict[str, str]) -> list[str]:
    return [name for name, body in bodies.items() if _PUBLIC.match(body) and "{" in body]


def _work_of(name: str, bodies: dict[str, str], totals: dict[str, Work], calling: tuple) -> Work:
    """The work of function ``name``, its callees' included (once per call)."""
    if name in totals:
        return totals[name]
    if name in calling or name not in bodies:
        return _NONE  # recursion, or an import: its work is not IREE's
    own = _NONE
    # The first lines of the generic ops whose regions are open, and the ops of each region.
    openers: list[tuple[str, list[str]]] = []
    for line in bodies[name].splitlines()[1:]:
        line = _LOCATION.sub("", line)
        called = _CALL.search(line)
        if called:
            own += _work_of(called.group(1), bodies, totals, (*calling, name))
        elif line.endswith("({"):
            openers.append((line, []))  # its signature follows its region: "}) : ... -> ..."
        elif line.lstrip().startswith("})"):
            head, region = openers.pop() if openers else ("", [])
            own += _op_work(head, line, region)
        else:
            if openers:
                openers[-1][1].extend(_OP.findall(line))
            own += _op_work(line, line)
    totals[name] = own
    return own


def _op_work(head: str, line: str, region: list[str] | None = None) -> Work:
    """The work of one op (module docstring), by its first line ``head`` and the line
    ``line`` that ends with its signature (the same line but for a generic op's region,
    whose ops are ``region``); none for a line that is no op."""
    if " = " not in head and not head.lstrip().startswith(("stablehlo.", '"stablehlo.')):
        return _NONE
    signature = line.rsplit(" : ", 1)[-1] if " : " in line else ""
    tensors = [_tensor(match) for match in _TENSOR.finditer(signature)]
    if not tensors:
        return _NONE
    results = signature.rsplit("->", 1)[-1]
    result = [_tensor(match) for match in _TENSOR.finditer(results)]
    if "stablehlo.dot_general" in head and len(tensors) >= 3:
        (lhs_dims, weight), (result_dims, _) = tensors[0], result[0]
        contracted = _CONTRACTING.search(head)
        indices = (
            [int(i) for i in contracted.group(1).split(",") if i.strip()] if contracted else []
        )
        size = math.prod(lhs_dims[i] for i in indices if i < len(lhs_dims))
        return Work(products=2 * math.prod(result_dims) * size * weight)
    if "stablehlo.convolution" in head and len(tensors) >= 3:
        (kernel_dims, weight), (result_dims, _) = tensors[1], result[0]
        layout = _KERNEL_LAYOUT.search(head)
        names = [n.strip() for n in layout.group(1).split(",")] if layout else []
        per_output = math.prod(kernel_dims)
        if "o" in names and names.index("o") < len(kernel_dims):
            per_output //= max(1, kernel_dims[names.index("o")])
        return Work(products=2 * math.prod(result_dims) * per_output * weight)
    elements = max(math.prod(dims) * weight for dims, weight in tensors)
    window = _window(head)
    if elements >= SHARED_SIZE and _blocked_scan(head, signature, window, region or []):
        # rows of blocks, which workers share; two passes: the blocks' scans, the totals
        return Work(parallel=2 * elements)
    if elements < SHARED_SIZE or _is_serial(head, tensors[0][0], result, window):
        return Work(serial=elements)
    if window and result:  # each result element reduces a window
        (result_dims, weight) = result[0]
        return Work(parallel=math.prod(result_dims) * math.prod(window) * weight)
    return Work(parallel=elements)


def _window(head: str) -> list[int]:
    """The window of a ``reduce_window``; empty for another op."""
    window = _WINDOW.search(head) if "stablehlo.reduce_window" in head else None
    return [int(w) for w in window.group(1).split(",") if w.strip()] if window else []


def _blocked_scan(head: str, signature: str, window: list[int], region: list[str]) -> bool:
    """Whether the op is a scan that ``compile/xla_scans.py`` writes in blocks whose rows
    the workers share: a cumulative sum or product of f32 or f64 along the last axis,
    padded before, of ``SHARED_SCAN`` elements or more, without strides or dilations."""
    if "stablehlo.reduce_window" not in head or region[:-1] not in ([b] for b in _SCAN_BODIES):
        return False
    first = _TENSOR.search(signature)
    if first is None or first.group(2) not in _SCAN_ELEMENTS:
        return False
    if "strides" in head or "dilations" in head:
        return False
    dims = [int(d) for d in first.group(1).split("x")[:-1]]
    padding = _PADDING.search(head)
    numbers = [int(n) for n in re.findall(r"-?\d+", padding.group(1))] if padding else []
    length = dims[-1] if dims else 0
    return (
        length >= SHARED_SCAN
        and window == [1] * (len(dims) - 1) + [length]
        and numbers == [0, 0] * (len(dims) - 1) + [length - 1, 0]
    )


def _is_serial(
    head: str, operand: list[int], result: list[tuple[list[int], int]], window: list[int]
) -> bool:
    """Whether IREE's llvm-cpu compiles the op as one workgroup (``distribution = [0]``),
    which no second thread can share: a scatter (its updates may meet), a sort, a
    reduction to scalars (``argmax`` of a vector), a scan (a window as long as a dimension
    of its operand: jax's ``cumsum`` and ``cumprod``)."""
    if any(f"stablehlo.{op}" in head for op in ("scatter", "sort")):
        return True
    if "stablehlo.reduce(" in head or '"stablehlo.reduce"(' in head:
        return all(not dims for dims, _ in result)
    return any(1 < w == d for w, d in zip(window, operand, strict=False))


def _tensor(match: re.Match[str]) -> tuple[list[int], int]:
    """The dimensions and the element weight of a ``tensor<...>`` match."""
    dims = match.group(1).split("x")[:-1]
    if "?" in dims:
        raise _Dynamic
    return [int(d) for d in dims], _WEIGHT.get(match.group(2), 1)
