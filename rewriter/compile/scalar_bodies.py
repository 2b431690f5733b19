"""A window's or a reduction's body of several ops, as scalar ops: what a scan combines with.

jax writes ``lax.cumlogsumexp`` as a window whose body is ``logaddexp`` of its two
arguments: ``maximum``, ``subtract``, ``compare``, ``abs``, ``negate``, ``exponential``,
``log_plus_one``, ``add`` and ``select`` of 0-d tensors. A scan (``dynamic_scans``) takes
its combining step as lines of ``arith`` and ``math`` ops on scalars; ``scalar_body``
writes such a body that way, op for op, when every op has a scalar form here, and
``Combine.identity`` checks an initial value by running the same ops in numpy: a
cumulative window folds its padding, the initial value, into every output, which a scan
may only leave out when that value changes nothing it is combined with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

# stablehlo op: (scalar op, numpy's), for floats
_FLOAT_OPS: dict[str, tuple[str, Callable[..., Any]]] = {
    "stablehlo.add": ("arith.addf", np.add),
    "stablehlo.subtract": ("arith.subf", np.subtract),
    "stablehlo.multiply": ("arith.mulf", np.multiply),
    "stablehlo.divide": ("arith.divf", np.divide),
    "stablehlo.maximum": ("arith.maximumf", np.maximum),  # both propagate NaN
    "stablehlo.minimum": ("arith.minimumf", np.minimum),
    "stablehlo.abs": ("math.absf", np.abs),
    "stablehlo.negate": ("arith.negf", np.negative),
    "stablehlo.exponential": ("math.exp", np.exp),
    "stablehlo.log": ("math.log", np.log),
    "stablehlo.log_plus_one": ("math.log1p", np.log1p),
    "stablehlo.exponential_minus_one": ("math.expm1", np.expm1),
}
# A float comparison's direction: arith.cmpf's predicate (NE: unordered, as StableHLO's).
_PREDICATES: dict[str, tuple[str, Callable[..., Any]]] = {
    "EQ": ("oeq", np.equal),
    "NE": ("une", np.not_equal),
    "LT": ("olt", np.less),
    "LE": ("ole", np.less_equal),
    "GT": ("ogt", np.greater),
    "GE": ("oge", np.greater_equal),
}
_ELEMENTS = {"f32": np.float32, "f64": np.float64}
_RETURNS = ("stablehlo.return", "func.return")
# What an identity is tried with: both infinities, both zeros, magnitudes far apart.
_SAMPLES = (-np.inf, -1e30, -3.5, -0.0, 0.0, 1e-30, 2.25, 1e30, np.inf)


@dataclass(frozen=True)
class Combine:
    """One combining step of a scan or a loop: ``lines(left, right, out)`` are the scalar
    ops that set ``out`` from ``left`` and ``right``; ``run`` is the same in numpy."""

    steps: tuple[tuple[str, tuple[int, ...]], ...]  # (op text, operands: earlier values)
    element: str  # the MLIR element type, ``f32``; each op's is it (a compare's operands')
    run: Callable[[Any, Any], Any] | None = None  # numpy's ``scalar_body``
    adds: bool = False  # one float ``add``: its scan's zeros are XLA's (dynamic_scans)

    @classmethod
    def of_op(cls, op: str, element: str) -> Combine:
        """One ``arith`` op of two elements (``arith.addf``)."""
        return cls(((op, (0, 1)),), element, adds=op == "arith.addf")

    def lines(self, left: str, right: str, out: str, indent: str = "  ") -> list[str]:
        """The lines that set ``out`` (step ``k``'s value is ``{out}_k``, the last ``out``)."""
        names = [left, right]
        lines = []
        for k, (op, operands) in enumerate(self.steps):
            name = out if k == len(self.steps) - 1 else f"{out}_{k}"
            arguments = ", ".join(names[i] for i in operands)
            lines.append(f"{indent}{name} = {op} {arguments} : {self.element}")
            names.append(name)
        return lines

    def identity(self, value: float) -> bool:
        """Whether ``value`` combined with any sample, on either side, gives the sample."""
        if self.run is None or self.element not in _ELEMENTS:
            return False
        dtype = _ELEMENTS[self.element]
        with np.errstate(all="ignore"):
            for sample in map(dtype, _SAMPLES):
                for got in (self.run(dtype(value), sample), self.run(sample, dtype(value))):
                    if not got == sample:
                        return False
        return True


def scalar_body(ir: Any, function: Any) -> Combine | None:
    """``function``'s body (two 0-d f32 or f64 arguments, one such result) as a
    ``Combine``, or None when an op has no scalar form here."""
    block = function.regions[0].blocks[0]
    arguments = list(block.arguments)
    if len(arguments) != 2 or arguments[0].type != arguments[1].type:
        return None
    element = _kind(ir, arguments[0])
    if element not in _ELEMENTS:
        return None
    values: dict[Any, int] = {arguments[0]: 0, arguments[1]: 1}
    steps: list[tuple[str, tuple[int, ...]]] = []
    runs: list[Callable[[list[Any]], Any]] = []
    operations = [op.operation for op in block.operations]
    for op in operations[:-1]:
        step = _step(ir, op, element)
        if step is None or any(v not in values for v in op.operands):
            return None
        text, function_of = step
        positions = tuple(values[v] for v in op.operands)
        steps.append((text, positions))
        runs.append(_applied(function_of, positions))
        values[op.results[0]] = len(values)
    returned = operations[-1]
    if returned.name not in _RETURNS or len(returned.operands) != 1 or not steps:
        return None
    if values.get(returned.operands[0]) != len(values) - 1:
        return None  # the body returns what its last op makes

    def run(left: Any, right: Any) -> Any:
        names = [left, right]
        for one in runs:
            names.append(one(names))
        return names[-1]

    return Combine(tuple(steps), element, run)


def _applied(function: Callable[..., Any], positions: tuple[int, ...]) -> Callable[[list], Any]:
    """``function`` of the values at ``positions`` of a list of the body's values."""
    return lambda names: function(*(names[i] for i in positions))


def _step(ir: Any, op: Any, element: str) -> tuple[str, Callable[..., Any]] | None:
    """The scalar op text and numpy's function of ``op``, on 0-d tensors of ``element``
    (a compare's result and a select's condition: i1), or None."""
    if len(op.results) != 1 or op.regions:
        return None
    kinds = [_kind(ir, v) for v in (*op.operands, op.results[0])]
    if op.name == "stablehlo.compare":
        if kinds != [element, element, "i1"]:
            return None
        direction = str(op.attributes["comparison_direction"]).split()[-1].rstrip(">")
        compared = str(op.attributes["compare_type"]) if "compare_type" in op.attributes else ""
        if direction not in _PREDICATES or (compared and "FLOAT" not in compared):
            return None
        predicate, function = _PREDICATES[direction]
        return f"arith.cmpf {predicate},", function
    if op.name == "stablehlo.select":
        return ("arith.select", np.where) if kinds == ["i1", *[element] * 3] else None
    if op.name in _FLOAT_OPS and all(kind == element for kind in kinds):
        return _FLOAT_OPS[op.name]
    return None


def _kind(ir: Any, value: Any) -> str | None:
    """The element type of a 0-d tensor ``value``, or None for any other value."""
    kind = value.type
    if not isinstance(kind, ir.RankedTensorType) or kind.rank != 0:
        return None
    return str(kind.element_type)
