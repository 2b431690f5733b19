"""From lark parse trees to the model: attributes, types and custom call statements.

Methods are named after the grammar rules they handle (lark's Transformer convention).
Offsets in the trees are relative to the parsed slice; ``base`` shifts them back to
offsets into the whole file.
"""

from __future__ import annotations

import re

from lark import Token, Transformer, Tree, v_args

from . import model
from .strings import decode_string
from .typetext import split_types, top_level_arrow

_SIGNLESS_SCALARS = re.compile(r"(?:[su]?i[0-9]+|f[0-9]+|bf16|index|tf32|f8\w*|f4\w*|f6\w*)")


def _text_of(node: Tree | Token, text: str, base: int) -> tuple[str, model.Span]:
    if isinstance(node, Token):
        start, end = node.start_pos, node.end_pos
    else:
        start, end = node.meta.start_pos, node.meta.end_pos
    assert start is not None and end is not None  # lark types token positions as optional
    return text[start:end], model.Span(base + start, base + end)


@v_args(meta=True)
class ToModel(Transformer):
    """Turns attribute and type subtrees into model values; leaves other nodes as trees."""

    def __init__(self, text: str, base: int):
        super().__init__(visit_tokens=False)
        self.text = text
        self.base = base

    def _span(self, meta) -> tuple[str, model.Span]:
        return (
            self.text[meta.start_pos : meta.end_pos],
            model.Span(self.base + meta.start_pos, self.base + meta.end_pos),
        )

    # ------------------------------------------------------------------ types
    def shaped_type(self, meta, children):
        text, _ = self._span(meta)
        kind_token = children[0]
        dims: tuple[str, ...] = ()
        ranked = True
        rest = children[1:]
        if rest and isinstance(rest[0], Token) and rest[0].type == "DIMS":
            parts = rest[0].value.split("x")[:-1]
            ranked = parts != ["*"]
            dims = tuple(parts) if ranked else ()
            rest = rest[1:]
        element = rest[0]
        kind = model.TypeKind.TENSOR if kind_token.value == "tensor" else model.TypeKind.OTHER
        return model.Type(text, kind, element.text, dims, ranked)

    def scalar_type(self, meta, children):
        text, _ = self._span(meta)
        scalar = _SIGNLESS_SCALARS.fullmatch(text) or text == "i1"
        kind = model.TypeKind.SCALAR if scalar else model.TypeKind.OTHER
        return model.Type(text, kind, text)

    def tuple_type(self, meta, children):
        text, _ = self._span(meta)
        return model.Type(text, model.TypeKind.TUPLE)

    def complex_type(self, meta, children):
        text, _ = self._span(meta)
        return model.Type(text, model.TypeKind.OTHER, text)

    def dialect_type(self, meta, children):
        text, _ = self._span(meta)
        token = text in ("!stablehlo.token", "!mhlo.token")
        kind = model.TypeKind.TOKEN if token else model.TypeKind.OTHER
        return model.Type(text, kind, text)

    def function_type(self, meta, children):
        return Tree("function_type", children, meta)

    # ------------------------------------------------------------------ attributes
    def number_attr(self, meta, children):
        text, span = self._span(meta)
        literal = children[0]
        type_text = children[1].text if len(children) > 1 else ""
        is_float = literal.type == "FLOAT" or (
            literal.type == "HEX" and bool(type_text) and type_text.lstrip("b").startswith("f")
        )
        return model.NumberAttr(text, span, literal.value, type_text, is_float)

    def bool_attr(self, meta, children):
        text, span = self._span(meta)
        return model.BoolAttr(text, span, children[0].value == "true")

    def string_attr(self, meta, children):
        text, span = self._span(meta)
        if len(children) > 1:
            return model.OtherAttr(text, span, "a typed string")
        return model.StringAttr(text, span, decode_string(children[0].value))

    def dense_attr(self, meta, children):
        text, span = self._span(meta)
        keyword, _angle, type_ = children
        body_end = text.rfind(":", 0, len(text) - len(type_.text))
        body = text[:body_end].rstrip()
        return model.DenseAttr(text, span, body, type_, keyword.value)

    def array_attr(self, meta, children):
        text, span = self._span(meta)
        element_type, *elements = children
        return model.ArrayAttr(text, span, element_type.text, tuple(e.value for e in elements))

    def dictionary(self, meta, children):
        text, span = self._span(meta)
        return model.DictAttr(text, span, tuple(children))

    def dict_entry(self, meta, children):
        key = children[0]
        name = (
            decode_string(key.value).decode("utf-8", "replace")
            if key.type == "STRING"
            else key.value
        )
        if len(children) == 1:
            text, span = self._span(meta)
            return (name, model.UnitAttr(text, span))
        return (name, children[1])

    def list_attr(self, meta, children):
        text, span = self._span(meta)
        return model.ListAttr(text, span, tuple(children))

    def symbol_attr(self, meta, children):
        text, span = self._span(meta)
        return model.SymbolAttr(text, span)

    def unit_attr(self, meta, children):
        text, span = self._span(meta)
        return model.UnitAttr(text, span)

    def type_attr(self, meta, children):
        text, span = self._span(meta)
        return model.OtherAttr(text, span, "a type")

    def dialect_attr(self, meta, children):
        text, span = self._span(meta)
        return model.OtherAttr(text, span, "a dialect attribute")

    def dialect_type_attr(self, meta, children):
        text, span = self._span(meta)
        return model.OtherAttr(text, span, "a type")

    def bare_attr(self, meta, children):
        text, span = self._span(meta)
        return model.OtherAttr(text, span, f"the attribute `{text}`")

    def location(self, meta, children):
        text, span = self._span(meta)
        return model.OtherAttr(text, span, "a location")

    def properties(self, meta, children):
        return children[0]


def _token(node: object) -> Token:
    """A child the grammar makes a token (lark types children as trees or tokens)."""
    assert isinstance(node, Token)
    return node


def _result_binding(tree: Tree) -> str:
    for child in tree.children:
        if isinstance(child, Tree) and child.data == "op_results":
            return _token(child.children[0]).value.strip().rstrip("=").rstrip()
    return ""


def custom_call_from_tree(tree: Tree, text: str, base: int) -> model.CustomCall:
    """Build the model of a parsed ``custom_call_stmt`` slice ``text`` starting at ``base``."""
    converted = ToModel(text, base).transform(tree)
    results = _result_binding(converted)
    operands: tuple[str, ...] = ()
    dictionaries: list[model.DictAttr] = []
    function_type = None
    location = ""
    target = ""
    target_span = model.Span(base, base)
    for child in converted.children:
        if isinstance(child, Token) and child.type == "SYMBOL":
            target_text, target_span = _text_of(child, text, base)
            target = symbol_name(target_text)
        elif isinstance(child, Tree) and child.data == "operand_list":
            operands = tuple(_token(token).value for token in child.children)
        elif isinstance(child, model.DictAttr):
            dictionaries.append(child)
        elif isinstance(child, Tree) and child.data == "function_type":
            function_type = child
        elif isinstance(child, model.OtherAttr) and child.description == "a location":
            location = child.text
    attributes = _merge(dictionaries)
    pretty = converted.data == "custom_call_pretty"
    form = model.CallForm.PRETTY if pretty else model.CallForm.GENERIC
    if form == model.CallForm.GENERIC:
        name = attributes.get("call_target_name")
        if isinstance(name, model.StringAttr):
            target = name.value.decode("utf-8", "replace")
            target_span = name.span
    assert function_type is not None
    types = [c for c in function_type.children if isinstance(c, model.Type)]
    fn_text = text[function_type.meta.start_pos : function_type.meta.end_pos]
    arrow = top_level_arrow(fn_text)
    results_text = fn_text[arrow + 2 :].strip()
    n_inputs = len(split_types(fn_text[:arrow]))
    first = converted.meta.start_pos
    indent_end = first + len(text[first:]) - len(text[first:].lstrip(" \t"))
    return model.CustomCall(
        span=model.Span(base + indent_end, base + converted.meta.end_pos),
        indent=text[first:indent_end],
        results=results,
        target=target,
        target_span=target_span,
        operands=operands,
        attributes=attributes,
        input_types=tuple(types[:n_inputs]),
        result_types=tuple(types[n_inputs:]),
        results_text=results_text,
        location=location,
        form=form,
    )


def symbol_name(symbol_text: str) -> str:
    """``@name`` or ``@"quoted name"`` to the name itself."""
    body = symbol_text[1:]
    if body.startswith('"'):
        return decode_string(body).decode("utf-8", "replace")
    return body


def _merge(dictionaries: list[model.DictAttr]) -> model.DictAttr:
    if len(dictionaries) == 1:
        return dictionaries[0]
    entries: list[tuple[str, model.Attr]] = []
    for dictionary in dictionaries:
        entries.extend(dictionary.entries)
    span = (
        model.Span(dictionaries[0].span.start, dictionaries[-1].span.end)
        if dictionaries
        else model.Span(0, 0)
    )
    return model.DictAttr("", span, tuple(entries))
