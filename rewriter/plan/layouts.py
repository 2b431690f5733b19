"""Non-default ``operand_layouts``/``result_layouts``: the kernel sees the declared physical order.

XLA layouts are minor-to-major dimension lists: ``[1, 0]`` is row-major (the default, what
MLIR's descriptors hold), ``[0, 1]`` column-major (jaxlib's LAPACK kernels). A tensor in
layout L has the same bytes as its transpose by ``perm = reversed(L)`` in row-major order.
So the rewrite transposes each such operand by ``perm`` before the call, hands the kernel
row-major data of shape ``dims[perm]``, and transposes each such result back by the inverse
permutation. The transposes live in a private wrapper function, so the call site changes
only its callee and no other line of the module.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..syntax import model
from . import mlir_text


class LayoutError(Exception):
    def __init__(self, attr: model.Attr, message: str):
        super().__init__(message)
        self.attr = attr
        self.message = message


Permutation = tuple[int, ...]


def dense_integers(attr: model.Attr) -> list[int] | None:
    """The integers of a ``dense<...>`` attribute such as ``dense<[1, 0]>`` or ``dense<1>``
    (a splat gives one value); None when it is not one."""
    if not isinstance(attr, model.DenseAttr):
        return None
    inner = attr.body[attr.body.index("<") + 1 : -1].replace(" ", "")
    if inner in ("", "[]"):
        return []
    try:
        values = [int(v) for v in inner.strip("[]").split(",")]
    except ValueError:
        return None
    return values


def permutations(call: model.CustomCall) -> tuple[list[Permutation], list[Permutation]]:
    """For every operand and result, the order of logical dims from major to minor."""
    found = []
    for name, types in (
        ("operand_layouts", call.input_types),
        ("result_layouts", call.result_types),
    ):
        layouts = call.attributes.get(name)
        perms: list[Permutation] = [tuple(range(len(t.dims))) for t in types]
        if layouts is not None:
            if not isinstance(layouts, model.ListAttr) or len(layouts.items) != len(types):
                raise LayoutError(layouts, f"custom call @{call.target} has malformed {name}")
            for index, (layout, type_) in enumerate(zip(layouts.items, types, strict=True)):
                minor_to_major = dense_integers(layout)
                rank = len(type_.dims)
                if rank == 1 and minor_to_major in ([0], None) and _is_splat_zero(layout):
                    minor_to_major = [0]
                if minor_to_major is None or sorted(minor_to_major) != list(range(rank)):
                    raise LayoutError(
                        layout,
                        (
                            f"custom call @{call.target}: {name} entry {index} is not a "
                            f"permutation of the {rank} dimensions of {type_.text}"
                        ),
                    )
                perms[index] = tuple(reversed(minor_to_major))
        found.append(perms)
    return found[0], found[1]


def _is_splat_zero(layout: model.Attr) -> bool:
    return isinstance(layout, model.DenseAttr) and layout.body.replace(" ", "") == "dense<0>"


def is_identity(perm: Permutation) -> bool:
    return perm == tuple(range(len(perm)))


def inverse(perm: Permutation) -> Permutation:
    result = [0] * len(perm)
    for position, dim in enumerate(perm):
        result[dim] = position
    return tuple(result)


def physical(type_: model.Type, perm: Permutation) -> str:
    """The row-major type whose bytes are ``type_`` in the layout ``perm``."""
    if is_identity(perm):
        return type_.text
    return mlir_text.tensor_type((type_.dims[d] for d in perm), type_.element)


@dataclass(frozen=True)
class Wrapper:
    """``func.func private @name`` taking logical types, calling the extern on physical ones."""

    name: str
    extern: str
    inputs: tuple[model.Type, ...]  # logical operand types
    input_perms: tuple[Permutation, ...]
    attribute_types: tuple[str, ...]
    results: tuple[model.Type, ...]  # logical result types
    result_perms: tuple[Permutation, ...]
    # The extern's parameters as indices into (inputs, attributes); empty: that order.
    order: tuple[int, ...] = ()

    def text(self, indent: str, newline: str) -> str:
        """The wrapper's definition: transpose the inputs the kernel sees in another layout,
        call the extern, transpose its results back to their logical types."""
        body = indent + "  "
        arguments = [f"%arg{i}" for i in range(len(self.inputs) + len(self.attribute_types))]
        transposes, inputs, physical_inputs = self._transposed_inputs(body, arguments)
        call = self._extern_call(inputs + arguments[len(self.inputs) :], physical_inputs)
        lines = [
            f"{indent}{self._header(arguments)} {{",
            *transposes,
            *self._returned_results(body, call, counter=len(transposes)),
            f"{indent}}}",
        ]
        return newline.join(lines)

    def _header(self, arguments: list[str]) -> str:
        """``func.func private @name(%arg0: T, ...) -> R``: the logical signature."""
        types = [t.text for t in self.inputs] + list(self.attribute_types)
        signature = [f"{name}: {type_}" for name, type_ in zip(arguments, types, strict=True)]
        return mlir_text.private_function(self.name, signature, [t.text for t in self.results])

    def _transposed_inputs(
        self, body: str, arguments: list[str]
    ) -> tuple[list[str], list[str], list[str]]:
        """A transpose (``%0``, ``%1``, ...) for each operand in another layout; the values
        the extern gets for the operands; their physical types."""
        lines: list[str] = []
        values, types = [], []
        for argument, type_, perm in zip(arguments, self.inputs, self.input_perms, strict=False):
            types.append(physical(type_, perm))
            if is_identity(perm):
                values.append(argument)
                continue
            counter = len(lines)
            transposed = mlir_text.transpose(
                f"%{counter}", argument, perm, type_.text, physical(type_, perm)
            )
            lines.append(body + transposed)
            values.append(f"%{counter}")
        return lines, values, types

    def _extern_call(self, arguments: list[str], physical_inputs: list[str]) -> str:
        """``func.call @extern(...)`` on the physical types, in the extern's parameter order."""
        parameters = physical_inputs + list(self.attribute_types)
        if self.order:
            arguments = [arguments[index] for index in self.order]
            parameters = [parameters[index] for index in self.order]
        physical_results = [
            physical(t, p) for t, p in zip(self.results, self.result_perms, strict=True)
        ]
        callee_type = mlir_text.function_type(parameters, physical_results)
        return mlir_text.func_call(self.extern, arguments, callee_type)

    def _returned_results(self, body: str, call: str, counter: int) -> list[str]:
        """The call, a transpose back for each result in another layout, the return;
        values are numbered on from ``counter``."""
        if not self.results:
            return [f"{body}{call}", body + mlir_text.func_return([], [])]
        produced = f"%{counter}"
        group = f"{produced}:{len(self.results)}" if len(self.results) > 1 else produced
        lines = [f"{body}{group} = {call}"]
        counter += 1
        returned = []
        for index, (type_, perm) in enumerate(zip(self.results, self.result_perms, strict=True)):
            value = f"{produced}#{index}" if len(self.results) > 1 else produced
            if not is_identity(perm):
                transposed = mlir_text.transpose(
                    f"%{counter}", value, inverse(perm), physical(type_, perm), type_.text
                )
                lines.append(body + transposed)
                value = f"%{counter}"
                counter += 1
            returned.append(value)
        lines.append(body + mlir_text.func_return(returned, [t.text for t in self.results]))
        return lines
