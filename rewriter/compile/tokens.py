"""Tokens, as booleans that order nothing.

A ``!stablehlo.token`` orders side effects inside XLA; in a module these paths compile, the
ops that could take one (custom calls) are refused or rewritten into calls of externs,
which take no token and stay in program order (docs/constructs.md), so a token left in a
function orders nothing: it is made by ``stablehlo.create_token`` or
``stablehlo.after_all`` and handed around, a while loop carrying it from one iteration to
the next, a function taking and returning it (jax.export's ``main`` of a program with
ordered effects: mpi4jax's). IREE 3.13's input pipeline has no lowering for either op
("failed to legalize operation 'stablehlo.create_token' that was explicitly marked
illegal"), on both paths, and an entry point cannot take one from its caller. So a public
function's token parameters and results are dropped (the function makes its own token,
as ``jax.export``'s ``Exported.call`` makes one for it), and then every token value
becomes a ``tensor<i1>`` (block arguments, while carries, call results and private
functions' signatures included), and each op that makes one a constant ``false``; the
pipeline then drops what nothing reads.
"""

from __future__ import annotations

from typing import Any

TOKEN_TYPES = ("!stablehlo.token", "!mhlo.token")
MAKERS = ("stablehlo.create_token", "stablehlo.after_all")


def erase_tokens(module: Any) -> int:
    """Drop the token parameters and results of the ``iree.compiler.ir`` module's public
    functions, and make every other token value a ``tensor<i1>``, in place (in its
    context); return how many ops, values and signatures changed."""
    from iree.compiler import ir

    with ir.Location.unknown():
        boolean = ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))
    makers: list[Any] = []
    retyped: list[Any] = []

    def visit(operation):
        for region in operation.regions:
            for block in region.blocks:
                retyped.extend(a for a in block.arguments if is_token(a.type))
        retyped.extend(r for r in operation.results if is_token(r.type))
        if operation.name in MAKERS:
            makers.append(operation)
        return ir.WalkResult.ADVANCE

    changed = 0
    for function in module.body.operations:
        if function.operation.name != "func.func":
            continue
        signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
        if any(is_token(t) for t in [*signature.inputs, *signature.results]):
            changed += 1
            if _is_public(ir, function) and function.regions[0].blocks:
                drop_entry_tokens(function)
            else:  # its callers' values are retyped alike
                function.attributes["function_type"] = ir.TypeAttr.get(
                    ir.FunctionType.get(
                        [boolean if is_token(t) else t for t in signature.inputs],
                        [boolean if is_token(t) else t for t in signature.results],
                    )
                )
        function.operation.walk(visit)
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
    return changed + len(makers) + len(retyped)


def is_token(type_) -> bool:
    return str(type_) in TOKEN_TYPES


def _is_public(ir, function) -> bool:
    attributes = function.attributes
    if "sym_visibility" not in attributes:
        return True
    return ir.StringAttr(attributes["sym_visibility"]).value == "public"


def drop_entry_tokens(function: Any) -> None:
    """Drop the token parameters and results of the public ``func.func`` ``function`` (an
    ``iree.compiler.ir`` op with a body): a ``stablehlo.create_token`` at its start stands
    for each parameter, and its returns give no token. Its argument and result attributes
    follow."""
    from iree.compiler import ir

    signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    inputs, results = list(signature.inputs), list(signature.results)
    dropped_inputs = [i for i, t in enumerate(inputs) if is_token(t)]
    dropped_results = {i for i, t in enumerate(results) if is_token(t)}
    entry = function.regions[0].blocks[0]
    with function.location:
        for index in reversed(dropped_inputs):
            argument = entry.arguments[index]
            with ir.InsertionPoint.at_block_begin(entry):
                token = ir.Operation.create("stablehlo.create_token", results=[inputs[index]])
            argument.replace_all_uses_with(token.result)
            entry.erase_argument(index)
        if dropped_results:
            for block in function.regions[0].blocks:
                terminator = list(block.operations)[-1].operation
                if terminator.name != "func.return":
                    continue
                kept = [v for i, v in enumerate(terminator.operands) if i not in dropped_results]
                with ir.InsertionPoint(terminator), terminator.location:
                    ir.Operation.create("func.return", operands=kept)
                terminator.erase()
    kept_inputs = [i for i in range(len(inputs)) if i not in dropped_inputs]
    kept_results = [i for i in range(len(results)) if i not in dropped_results]
    function.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([inputs[i] for i in kept_inputs], [results[i] for i in kept_results])
    )
    for name, kept in (("arg_attrs", kept_inputs), ("res_attrs", kept_results)):
        if name in function.attributes:
            old = list(ir.ArrayAttr(function.attributes[name]))
            function.attributes[name] = ir.ArrayAttr.get([old[i] for i in kept])
