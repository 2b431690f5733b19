"""Ops on the real parts of complex tensors, written at the insertion point: the
vocabulary of the complex arithmetic fixes that follow XLA's formulas op by op
(``complex_divide``, ``complex_tanh``), each result a tensor of the parts' type."""

from __future__ import annotations

from typing import Any

from .mlir_walk import Splats, op_result


class PartOps:
    """Ops on tensors of the shape of ``like``, a value of the complex tensor type
    ``kind``: ``real`` is the tensor type of its parts, ``boolean`` of a comparison's."""

    def __init__(self, ir: Any, kind: Any, like: Any) -> None:
        self.ir = ir
        self.kind = kind
        element = ir.ComplexType(kind.element_type).element_type
        self.real = ir.RankedTensorType.get(kind.shape, element)
        self.boolean = ir.RankedTensorType.get(kind.shape, ir.IntegerType.get_signless(1))
        width = 64 if isinstance(element, ir.F64Type) else 32
        self.bits = ir.RankedTensorType.get(kind.shape, ir.IntegerType.get_signless(width))
        self.splats = Splats(ir, like)

    def op(self, name: str, *operands: Any, result: Any = None, **attributes: Any) -> Any:
        return op_result(self.ir, name, result or self.real, *operands, **attributes)

    def parts(self, z: Any) -> tuple[Any, Any]:
        """The real and imaginary parts of ``z``."""
        return self.op("stablehlo.real", z), self.op("stablehlo.imag", z)

    def complex(self, real: Any, imaginary: Any) -> Any:
        return self.op("stablehlo.complex", real, imaginary, result=self.kind)

    def number(self, value: float) -> Any:
        return self.splats(value, self.real)

    def compare(self, direction: str, left: Any, right: Any, kind: str = "FLOAT") -> Any:
        ir = self.ir
        return self.op(
            "stablehlo.compare",
            left,
            right,
            result=self.boolean,
            comparison_direction=ir.Attribute.parse(
                f"#stablehlo<comparison_direction {direction}>"
            ),
            compare_type=ir.Attribute.parse(f"#stablehlo<comparison_type {kind}>"),
        )

    def add(self, left: Any, right: Any) -> Any:
        return self.op("stablehlo.add", left, right)

    def subtract(self, left: Any, right: Any) -> Any:
        return self.op("stablehlo.subtract", left, right)

    def multiply(self, left: Any, right: Any) -> Any:
        return self.op("stablehlo.multiply", left, right)

    def quotient(self, left: Any, right: Any) -> Any:
        return self.op("stablehlo.divide", left, right)

    def both(self, name: str, left: Any, right: Any) -> Any:
        """``name`` (``stablehlo.and``, ``stablehlo.or``) of two comparisons."""
        return self.op(name, left, right, result=self.boolean)

    def select(self, condition: Any, chosen: Any, other: Any) -> Any:
        return self.op("stablehlo.select", condition, chosen, other, result=other.type)

    def is_nan(self, x: Any) -> Any:
        return self.compare("NE", x, x)

    def negative_sign(self, x: Any) -> Any:
        """Whether ``x``'s sign bit is set (-0.0 and NaN of that sign too)."""
        bits = self.op("stablehlo.bitcast_convert", x, result=self.bits)
        zero = self.splats.integer(0, self.bits)
        return self.compare("LT", bits, zero, "SIGNED")

    def signed(self, magnitude: float, x: Any) -> Any:
        """``copysign(magnitude, x)``."""
        return self.select(self.negative_sign(x), self.number(-magnitude), self.number(magnitude))
