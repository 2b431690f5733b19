"""Before/after pairs for the planning modules, as LibCST's codemod tests read: a custom
call statement in, what one rule makes of it out, both as text, one assertion helper.

Each rule's outcome is rendered as the lines a reader would write down (an attribute
operand as ``path: source type -> arith.constant VALUE : TYPE``), so that a test is the
pair of texts and nothing else; the expected texts are derived by hand from the contract
(abi/README.md), in the tests' docstrings where it is not plain.
"""

from __future__ import annotations

from textwrap import dedent

from rewriter.plan.attribute_operands import attribute_operands
from rewriter.plan.ffi_facts import facts_of_call
from rewriter.plan.layouts import permutations, physical
from rewriter.syntax import model
from rewriter.syntax.grammar import parser
from rewriter.syntax.to_model import custom_call_from_tree


def call_of(statement: str) -> model.CustomCall:
    """The model of one ``stablehlo.custom_call`` statement, as the planner gets it."""
    tree = parser().parse(statement, start="custom_call_stmt")
    return custom_call_from_tree(tree, statement, 0)


def statement(backend_config: str, types: str = "(tensor<4xf32>) -> tensor<4xf32>") -> str:
    """A call of ``@k`` on ``%arg0`` with ``mhlo.backend_config = BACKEND_CONFIG``."""
    operands = ", ".join(f"%arg{i}" for i in range(types.split("->")[0].count("tensor<")))
    return (
        f"%0 = stablehlo.custom_call @k({operands}) {{mhlo.backend_config = {backend_config}}}"
        f" : {types}"
    )


def operands_text(statement_text: str) -> str:
    """Rules 2 and 3: the call's attribute operands, one line each, in contract order."""
    lines = []
    for operand in attribute_operands(call_of(statement_text)):
        constant = (
            f"{operand.value} : {operand.constant_type}"
            if operand.constant_type
            else (operand.value)
        )
        converted = operand.constant_type and operand.type != operand.constant_type
        passed = f" passed as {operand.type}" if converted else ""
        lines.append(f"{operand.path}: {operand.source_type} -> {constant}{passed}")
    return "\n".join(lines)


def layouts_text(statement_text: str) -> str:
    """The layouts rule: each operand's and result's major-to-minor order and the
    row-major type the kernel sees."""
    call = call_of(statement_text)
    operand_perms, result_perms = permutations(call)
    lines = []
    for role, types, perms in (
        ("operand", call.input_types, operand_perms),
        ("result", call.result_types, result_perms),
    ):
        for index, (type_, perm) in enumerate(zip(types, perms, strict=True)):
            lines.append(f"{role} {index}: {type_.text} {list(perm)} -> {physical(type_, perm)}")
    return "\n".join(lines)


def facts_text(statement_text: str) -> str:
    """What an XLA FFI handler is told of the call: the ``rewriter.xla_ffi`` value."""
    call = call_of(statement_text)
    operand_perms, result_perms = permutations(call)
    attributes = attribute_operands(call)
    return facts_of_call(call, attributes, operand_perms, result_perms).attribute_value()


def assert_pair(rule, before: str, after: str) -> None:
    """``rule(before)`` is ``after`` (both dedented, outer blank lines dropped)."""
    assert rule(dedent(before).strip()) == dedent(after).strip()
