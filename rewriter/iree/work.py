"""An estimate of the arithmetic one call of a module does, read from its MLIR text.

``drivers.py`` picks the driver by it. Each op counts the elements of the largest tensor of
its type signature (what an elementwise op or a reduction touches), a ``dot_general``
twice its result's elements times the contracted size, a ``convolution`` twice its
result's elements times the kernel's elements per output feature (multiply-adds); 64-bit
and complex elements count 2 to 4 times, as a vector holds fewer of them. A function
counts once per call of it (``call @f``), and the public functions are summed. Loop bodies
count once: the estimate is a floor. None when a shape is dynamic (its size is unknown
until the call).
"""

from __future__ import annotations

import math
import re

_FUNCTION = re.compile(r"^\s*func\.func\s+(?:(?:public|private|nested)\s+)?@([\w$.-]+)", re.M)
_PUBLIC = re.compile(r"^\s*func\.func\s+(?:public\s+)?@", re.M)
_CALL = re.compile(r"\bcall @([\w$.-]+)")
_TENSOR = re.compile(r"tensor<((?:[0-9?]+x)*)([^<>]*(?:<[^<>]*>)?)>")
_CONTRACTING = re.compile(r"contracting_dims\s*=\s*\[([\d, ]*)\]")
_KERNEL_LAYOUT = re.compile(r"dim_numbers\s*=\s*\[[^\]]*\]x\[([^\]]*)\]")
_LOCATION = re.compile(r"\s+loc\(.*$")
# Elements of these types count more: a vector register holds half (or a quarter) as many.
_WEIGHT = {"f64": 2, "i64": 2, "complex<f32>": 2, "complex<f64>": 4}


class _Dynamic(Exception):
    pass


def estimated_work(text: str) -> int | None:
    """The estimated multiply-adds and element operations of one call of the module
    ``text`` (its public functions, module docstring), or None when a shape is dynamic."""
    bodies = _function_bodies(text)
    try:
        totals: dict[str, int] = {}
        return sum(_work_of(name, bodies, totals, ()) for name in _public_names(text, bodies))
    except _Dynamic:
        return None


def _function_bodies(text: str) -> dict[str, str]:
    """Each function's text, from its ``func.func`` line to the next one."""
    matches = list(_FUNCTION.finditer(text))
    ends = [m.start() for m in matches[1:]] + [len(text)] * bool(matches)
    return {m.group(1): text[m.start() : end] for m, end in zip(matches, ends, strict=True)}


def _public_names(text: str, bodies: dict[str, str]) -> list[str]:
    return [name for name, body in bodies.items() if _PUBLIC.match(body) and "{" in body]


def _work_of(name: str, bodies: dict[str, str], totals: dict[str, int], calling: tuple) -> int:
    """The work of function ``name``, its callees' included (once per call)."""
    if name in totals:
        return totals[name]
    if name in calling or name not in bodies:
        return 0  # recursion, or an import: its work is not IREE's
    own = 0
    lines = bodies[name].splitlines()
    for line in lines[1:]:
        called = _CALL.search(line)
        if called:
            own += _work_of(called.group(1), bodies, totals, (*calling, name))
        else:
            own += _op_work(_LOCATION.sub("", line))
    totals[name] = own
    return own


def _op_work(line: str) -> int:
    """The work of one op (module docstring); 0 for a line that is no op."""
    if " = " not in line and not line.lstrip().startswith("stablehlo."):
        return 0
    signature = line.rsplit(" : ", 1)[-1] if " : " in line else ""
    tensors = [_tensor(match) for match in _TENSOR.finditer(signature)]
    if not tensors:
        return 0
    results = signature.rsplit("->", 1)[-1]
    result = [_tensor(match) for match in _TENSOR.finditer(results)]
    if "stablehlo.dot_general" in line and len(tensors) >= 3:
        (lhs_dims, weight), (result_dims, _) = tensors[0], result[0]
        contracted = _CONTRACTING.search(line)
        indices = (
            [int(i) for i in contracted.group(1).split(",") if i.strip()] if contracted else []
        )
        size = math.prod(lhs_dims[i] for i in indices if i < len(lhs_dims))
        return 2 * math.prod(result_dims) * size * weight
    if "stablehlo.convolution" in line and len(tensors) >= 3:
        (kernel_dims, weight), (result_dims, _) = tensors[1], result[0]
        layout = _KERNEL_LAYOUT.search(line)
        names = [n.strip() for n in layout.group(1).split(",")] if layout else []
        per_output = math.prod(kernel_dims)
        if "o" in names and names.index("o") < len(kernel_dims):
            per_output //= max(1, kernel_dims[names.index("o")])
        return 2 * math.prod(result_dims) * per_output * weight
    return max(math.prod(dims) * weight for dims, weight in tensors)


def _tensor(match: re.Match[str]) -> tuple[list[int], int]:
    """The dimensions and the element weight of a ``tensor<...>`` match."""
    dims = match.group(1).split("x")[:-1]
    if "?" in dims:
        raise _Dynamic
    return [int(d) for d in dims], _WEIGHT.get(match.group(2), 1)
