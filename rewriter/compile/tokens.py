"""Tokens inside a function, as booleans that order nothing.

A ``!stablehlo.token`` orders side effects inside XLA; in a module these paths compile, the
ops that could take one (custom calls) are refused or rewritten into calls
(docs/constructs.md), so a token left in a function orders nothing: it is made by
``stablehlo.create_token`` or ``stablehlo.after_all`` and handed around, a while loop
carrying it from one iteration to the next. IREE 3.13's input pipeline has no lowering for
either op ("failed to legalize operation 'stablehlo.create_token' that was explicitly
marked illegal"), on both paths. Every token value inside a function becomes a
``tensor<i1>`` (block arguments, while carries and results included), and each op that
makes one a constant ``false``; the pipeline then drops what nothing reads. A public
function that takes or returns a token is left as it is (its callers would have to pass
one).
"""

from __future__ import annotations

from typing import Any

TOKEN_TYPES = ("!stablehlo.token", "!mhlo.token")
MAKERS = ("stablehlo.create_token", "stablehlo.after_all")


def erase_tokens(module: Any) -> int:
    """Make every token value of the ``iree.compiler.ir`` module's functions whose
    signature has no token a ``tensor<i1>``, in place (in its context); return how many
    ops made tokens."""
    from iree.compiler import ir

    with ir.Location.unknown():
        boolean = ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))
    makers: list[Any] = []
    retyped: list[Any] = []

    def is_token(type_) -> bool:
        return str(type_) in TOKEN_TYPES

    def visit(operation):
        for region in operation.regions:
            for block in region.blocks:
                retyped.extend(a for a in block.arguments if is_token(a.type))
        retyped.extend(r for r in operation.results if is_token(r.type))
        if operation.name in MAKERS:
            makers.append(operation)
        return ir.WalkResult.ADVANCE

    for function in module.body.operations:
        if function.operation.name != "func.func":
            continue
        signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
        if any(is_token(t) for t in [*signature.inputs, *signature.results]):
            continue
        function.operation.walk(visit)
    if not makers and not retyped:
        return 0
    for value in retyped:
        value.set_type(boolean)
    for maker in makers:
        with ir.InsertionPoint(maker), maker.location:
            false = ir.Operation.create(
                "stablehlo.constant",
                results=[boolean],
                attributes={
                    "value": ir.DenseElementsAttr.get_splat(boolean, ir.BoolAttr.get(False))
                },
            )
        maker.results[0].replace_all_uses_with(false.result)
        maker.erase()
    return len(makers)
