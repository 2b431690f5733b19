"""Exports for several platforms: one platform chosen, the others' branches taken out.

``jax.export.export(..., platforms=["cpu", "cuda"])`` lowers a module whose public ``@main``
takes a first argument ``%arg0: tensor<i32> {jax.global_constant = "_platform_index"}``:
the index of the platform it runs on in ``Exported.platforms``, which ``Exported.call``
passes. Inner functions that need it take it too, and ``main`` passes it on. Wherever a
lowering differs per platform (``lax.platform_dependent``, an ``ffi_call`` whose target
differs per platform, jaxlib's LAPACK and cuSOLVER kernels), jax writes a chain of
``stablehlo.case`` ops: a case on the platform index with one branch per platform of the
export, each returning the constant index of that platform's rule; sometimes more cases that
map that index again (``platform_dependent``'s ``cond``); and a case on the last index with
one branch per rule, holding that platform's code, custom calls included.

Choosing platform ``K`` (its index in the export's platforms) is then a set of edits:

- every platform index argument stands for ``K`` (jax passes the module's own to every
  inner function), so the values of the chain are known: ``stablehlo.constant dense<N>``
  of an integer scalar, a ``stablehlo.convert`` of a known value, and a case whose index is
  known and whose branch taken is a lone ``stablehlo.return`` of a known value;
- each case whose index derives from the platform index keeps the branch that index takes
  and loses the others' regions (a case with one branch always runs it, whatever its
  index); the custom calls in those regions are not rewritten, so no extern is declared
  for them;
- a public function's platform index argument goes, and its name is bound at the top of
  the body to ``stablehlo.constant dense<K>`` of its type, with its location: ``main``
  takes what ``jax.jit`` takes. Inner functions keep theirs.

Nothing else changes, byte for byte. Values are looked up as MLIR scopes them: a name
defined in a region is seen inside that region only (sibling regions may reuse a name),
which the brace structure of the body gives. The text holds no platform name (see
``platforms.py``): the list comes from the ``Exported`` or from the caller.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ..syntax.compact import Compact, compact
from ..syntax.diagnostics import Diagnostic, RewriteError
from ..syntax.source import Source
from ..syntax.terminals import SYMBOL_NAME, VALUE_NAME
from .edits import Edit
from .selection import API_WORDS, OptionWords

PLATFORM_INDEX = '"_platform_index"'
_CASE_NAME = '"stablehlo.case"'
_NOTED = frozenset({PLATFORM_INDEX, _CASE_NAME})

_NAME = f"%{VALUE_NAME}"  # the grammar's VALUE_ID
_GLOBAL_CONSTANT = re.compile(r"jax\.global_constant[ \t]*=[ \t]*$")
_FUNCTION = re.compile(
    r"func\.func(?![\w$.])[ \t]+(?:(public|private|nested)[ \t]+)?"
    f'@(?:{SYMBOL_NAME}|"")'  # SYMBOL in the compact text, as scan._SYMBOL
    r"[ \t]*\("
)
_ARGUMENT_NAME = re.compile(r"[ \t\r\n]*(" + _NAME + r")[ \t]*:[ \t]*")
_DEFINITION = re.compile(r"^[ \t]*(" + _NAME + r")(:[0-9]+)?[ \t]*=[ \t]*", re.MULTILINE)
_INTEGER_TYPE = r"tensor<(?:i|si|ui)[0-9]+>"
_CONSTANT = re.compile(r"stablehlo\.constant[ \t]+dense<(-?[0-9]+)>[ \t]*:[ \t]*" + _INTEGER_TYPE)
_CONVERT = re.compile(
    r"stablehlo\.convert[ \t]+("
    + _NAME
    + r")[ \t]*:[ \t]*\([ \t]*"
    + _INTEGER_TYPE
    + r"[ \t]*\)[ \t]*->[ \t]*"
    + _INTEGER_TYPE
)
_CASE = re.compile(r'""\([ \t]*(' + _NAME + r")[ \t]*\)[ \t]*\(")
_LONE_RETURN = re.compile(
    r"[ \t\r\n]*stablehlo\.return[ \t]+("
    + _NAME
    + r")[ \t]*:[ \t]*"
    + _INTEGER_TYPE
    + r"(?:[ \t]+loc\([^\n]*\))?[ \t\r\n]*"
)
_SPACE = " \t\r\n"


def platform_list(words: OptionWords, platforms: Sequence[str]) -> str:
    """The platforms option with ``platforms`` as its value, as the caller writes it."""
    if words.platforms.startswith("--"):
        return f"{words.platforms} {','.join(platforms)}"
    return f"{words.platforms}{list(platforms)!r}"


def platform_value(words: OptionWords, platform: str) -> str:
    """The platform option with ``platform`` as its value, as the caller writes it."""
    if words.platform.startswith("--"):
        return f"{words.platform} {platform}"
    return f"{words.platform}{platform!r}"


@dataclass
class Choice:
    """The edits that keep one platform, and the spans (of the original text) they take
    out: the custom calls inside those are not rewritten."""

    edits: list[Edit] = field(default_factory=list)
    dropped: list[tuple[int, int]] = field(default_factory=list)  # in order, apart

    def keeps(self, offset: int) -> bool:
        """Whether ``offset`` is outside every span taken out."""
        return not _within(self.dropped, offset)


def _within(spans: list[tuple[int, int]], offset: int) -> bool:
    """Whether ``offset`` lies in one of ``spans`` (sorted, apart)."""
    index = bisect.bisect_right(spans, (offset, float("inf"))) - 1
    return index >= 0 and spans[index][0] <= offset < spans[index][1]


@dataclass
class _Argument:
    name: str
    start: int  # compact offsets: the argument's `%`, and its end (before `,` or `)`)
    end: int
    index: bool  # whether it is a platform index (jax.global_constant = "_platform_index")


@dataclass
class _Function:
    keyword: int
    public: bool
    arguments: list[_Argument]
    body_open: int
    body_close: int


@dataclass
class _Value:
    """A definition in a body: an argument, or an op's result (compact offsets)."""

    name: str
    offset: int
    scope: tuple[int, int]  # the braces of the region it is defined in
    done: int  # where its definition ends: a case's after its regions
    kind: str  # "index", "constant", "convert", "case", "other"
    number: int | None = None
    from_index: bool = False  # whether the value derives from the platform index
    operand: str = ""  # a convert's operand, a case's index
    operand_at: int = 0
    regions: list[tuple[int, int]] = field(default_factory=list)
    single: bool = True  # one result (a case's value is known only then)


def normalized(platforms: Sequence[str] | None) -> tuple[str, ...] | None:
    """Platform names as ``Exported.platforms`` spells them (lower case); None stays None."""
    if platforms is None:
        return None
    given = platforms
    if isinstance(platforms, str):
        platforms = platforms.split(",")
    elif not all(isinstance(name, str) for name in platforms):
        raise TypeError(f"platforms: expected platform names (str), not {given!r}")
    names = tuple(name.strip().lower() for name in platforms)
    if not names or any(not name for name in names):
        raise ValueError(f"platforms: expected platform names such as cpu,cuda, not {given!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"platforms: {','.join(names)} names a platform twice")
    return names


def check_platforms(
    filename: str,
    platforms: tuple[str, ...] | None,
    platform: str | None,
    words: OptionWords = API_WORDS,
) -> str | None:
    """The platform to keep, from the export's ``platforms`` (None: not known) and the
    caller's ``platform`` (None: ``cpu`` when the export has it). Raises ``RewriteError``
    for a platform the export does not have, and for an export without the CPU when no
    platform is chosen: its kernels are another platform's, and a user running on the CPU
    would learn it only when a handler is missing."""
    chosen = None if platform is None else platform.strip().lower()
    if platforms is None:
        return chosen
    named = ", ".join(platforms)
    if chosen is None:
        if "cpu" in platforms:
            return "cpu"
        message = (
            f"the module was exported for {named}, not for the CPU: its kernels and lowerings "
            f"are {named}'s; export with platforms=['cpu'] (or a list that holds 'cpu') to run "
            f"it on the CPU, or pass {platform_value(words, platforms[0])} to rewrite it for "
            f"{platforms[0]} all the same"
        )
        raise RewriteError([Diagnostic(filename, 1, 1, message)])
    if chosen not in platforms:
        message = (
            f"{platform_value(words, chosen)}: the module was exported for {named}, not for "
            f"{chosen}"
        )
        raise RewriteError([Diagnostic(filename, 1, 1, message)])
    return chosen


def choose_platform(
    source: Source,
    platforms: tuple[str, ...] | None,
    platform: str | None,
    words: OptionWords = API_WORDS,
) -> Choice | None:
    """The edits that keep ``platform`` of a module exported for ``platforms``, or None when
    no public function takes a platform index (a module exported for one platform, or one
    whose platform is chosen already): such a module is left as it is. ``platform`` is
    ``check_platforms``'s. Raises ``RewriteError`` when the module takes a platform index
    and ``platforms`` is not known, or does not fit the module's cases."""
    text = source.text
    if PLATFORM_INDEX not in text:  # a C-speed look: most modules stop here
        return None
    squeezed = compact(text, _NOTED)
    masked = squeezed.text
    index_marks = [at for at, _, token in squeezed.strings if token == PLATFORM_INDEX]
    case_marks = {at for at, _, token in squeezed.strings if token == _CASE_NAME}
    functions = _functions_with_index(masked, index_marks)
    public = [f for f in functions if f.public and any(a.index for a in f.arguments)]
    if not public:
        _check_all_read(source, squeezed, index_marks, functions)
        return None
    chosen = 0 if platforms is None or platform is None else platforms.index(platform)
    pruned: list[tuple[_Value, int]] = []
    widest: tuple[int, int] | None = None  # the most branches of a case on an index, where
    for function in functions:
        cases, width = _evaluate(masked, function, case_marks, chosen)
        pruned += cases
        if width is not None and (widest is None or width[0] > widest[0]):
            widest = width
    if platforms is None:
        first = next(a for a in public[0].arguments if a.index)
        count = "several" if widest is None else str(widest[0])
        message = (
            f"@{_function_name(masked, public[0])} takes a platform index ({first.name}: "
            f'jax.global_constant = "_platform_index"): the module was exported for {count} '
            "platforms, and its text does not say which branch is which platform's; pass the "
            "platforms it was exported for, in order, as Exported.platforms lists them "
            f"({platform_list(words, ('cpu', 'cuda'))}), or rewrite the jax.export.Exported "
            "itself"
        )
        raise RewriteError([Diagnostic.at(source, squeezed.original(first.start), message)])
    if widest is not None and widest[0] != len(platforms):
        branches, case_at = widest
        message = (
            f"the platform index chooses among {branches} platforms here (a stablehlo.case of "
            f"{branches} branches on it), but {platform_list(words, platforms)} names "
            f"{len(platforms)}: pass the platforms the module was exported for, in order"
        )
        raise RewriteError([Diagnostic.at(source, squeezed.original(case_at), message)])
    assert platform is not None and platform in platforms  # check_platforms's
    choice = Choice()
    _drop_branches(squeezed, pruned, choice)
    newline = _newline_of(text)
    for function in functions:
        if function.public:
            _bind_index(source, squeezed, function, chosen, newline, choice)
    return choice


def _check_all_read(
    source: Source, squeezed: Compact, index_marks: list[int], functions: list[_Function]
) -> None:
    """Raise when a platform index is declared where no signature was read (a function
    in MLIR's generic form, ``arg_attrs = [{jax.global_constant = "_platform_index"}]``):
    its cases would be left whole, every platform's calls rewritten."""
    masked = squeezed.text
    for mark in index_marks:
        if not _GLOBAL_CONSTANT.search(masked, masked.rfind("\n", 0, mark) + 1, mark):
            continue
        if any(a.start < mark < a.end for f in functions for a in f.arguments):
            continue
        message = (
            'a platform index (jax.global_constant = "_platform_index") outside any function '
            "signature the rewrite reads (a module printed in MLIR's generic form?): print the "
            "module in the pretty form, as Exported.mlir_module() does, to keep one platform's "
            "code"
        )
        raise RewriteError([Diagnostic.at(source, squeezed.original(mark), message)])


def _function_name(masked: str, function: _Function) -> str:
    signature = signature_at(masked, function.keyword)
    assert signature is not None
    return signature.name


def _functions_with_index(masked: str, index_marks: list[int]) -> list[_Function]:
    """The functions (pretty form, with a body) that take a platform index argument."""
    found: dict[int, _Function] = {}
    for mark in index_marks:
        line_start = masked.rfind("\n", 0, mark) + 1
        if not _GLOBAL_CONSTANT.search(masked, line_start, mark):
            continue
        keyword = masked.rfind("func.func", 0, mark)
        while keyword > 0 and masked[keyword - 1] not in _SPACE:
            keyword = masked.rfind("func.func", 0, keyword)
        if keyword == -1 or keyword in found:
            continue
        function = _function_at(masked, keyword, index_marks)
        if function is not None and any(a.start < mark < a.end for a in function.arguments):
            found[keyword] = function
    return [found[keyword] for keyword in sorted(found)]


class Signature(NamedTuple):
    """A function's header in the compact text (pretty form): its name, whether it is
    public, where its arguments' ``)`` is, and each argument's name, start (its ``%``) and
    end (before its ``,`` or ``)``)."""

    name: str
    public: bool
    close_paren: int
    arguments: list[tuple[str, int, int]]


def signature_at(masked: str, keyword: int) -> Signature | None:
    """The header of the ``func.func`` at ``keyword`` of the compact text ``masked``; None
    when it is none, or an argument is no ``%name: type``."""
    header = _FUNCTION.match(masked, keyword)
    if header is None:
        return None
    open_paren = header.end() - 1
    close_paren = _match(masked, open_paren, "(", ")")
    arguments = []
    for start, end in _split_arguments(masked, open_paren + 1, close_paren):
        name = _ARGUMENT_NAME.match(masked, start, end)
        if name is None:
            return None
        arguments.append((name.group(1), name.start(1), end))
    named = header.group()[header.group().index("@") + 1 :].rstrip(" \t(")
    return Signature(named, header.group(1) in (None, "public"), close_paren, arguments)


def _function_at(masked: str, keyword: int, index_marks: list[int]) -> _Function | None:
    signature = signature_at(masked, keyword)
    if signature is None:
        return None
    arguments = [
        _Argument(name, start, end, _index_attribute(masked, start, end, index_marks))
        for name, start, end in signature.arguments
    ]
    position = _skip_space(masked, signature.close_paren + 1)
    if masked.startswith("->", position):
        position = _skip_space(masked, position + 2)
        if masked.startswith("(", position):
            position = _match(masked, position, "(", ")") + 1
        else:
            position = _skip_type(masked, position)
        position = _skip_space(masked, position)
    if masked.startswith("attributes", position):
        position = masked.find("{", position)
        position = _skip_space(masked, _match(masked, position, "{", "}") + 1)
    if not masked.startswith("{", position):
        return None  # a declaration
    close = _match(masked, position, "{", "}")
    return _Function(keyword, signature.public, arguments, position, close)


def _index_attribute(masked: str, start: int, end: int, index_marks: list[int]) -> bool:
    """Whether ``start:end`` holds ``jax.global_constant = "_platform_index"``."""
    first = bisect.bisect_right(index_marks, start)
    for mark in index_marks[first : bisect.bisect_left(index_marks, end)]:
        if _GLOBAL_CONSTANT.search(masked, start, mark):
            return True
    return False


def _split_arguments(masked: str, start: int, end: int) -> list[tuple[int, int]]:
    """The arguments' spans in ``start:end``: split at commas outside brackets, each
    without the spaces around it."""
    pieces = []
    depth = 0
    piece = start
    for position in range(start, end):
        char = masked[position]
        if char in "([{<":
            depth += 1
        elif char in ")]}>" and not (char == ">" and masked[position - 1] == "-"):
            depth -= 1
        elif char == "," and depth == 0:
            pieces.append((piece, position))
            piece = position + 1
    pieces.append((piece, end))
    spans = []
    for first, last in pieces:
        while first < last and masked[first] in _SPACE:
            first += 1
        while last > first and masked[last - 1] in _SPACE:
            last -= 1
        if first < last:
            spans.append((first, last))
    return spans


def _skip_space(masked: str, position: int) -> int:
    while position < len(masked) and masked[position] in _SPACE:
        position += 1
    return position


def _skip_type(masked: str, position: int) -> int:
    """The end of the type at ``position`` (``tensor<4xf32>``, ``!stablehlo.token``)."""
    depth = 0
    while position < len(masked):
        char = masked[position]
        if char in "<([":
            depth += 1
        elif char in ">)]":
            depth -= 1
        elif depth == 0 and (char in _SPACE or char == "{"):
            break
        position += 1
    return position


def _match(masked: str, open_: int, opening: str, closing: str) -> int:
    """The bracket closing the one at ``open_`` (brackets nest properly: the scan checked)."""
    depth = 0
    position = open_
    while True:
        next_open = masked.find(opening, position + 1)
        next_close = masked.find(closing, position + 1)
        if next_close == -1:
            return len(masked)
        if next_open != -1 and next_open < next_close:
            depth += 1
            position = next_open
        elif depth == 0:
            return next_close
        else:
            depth -= 1
            position = next_close


def _evaluate(
    masked: str, function: _Function, case_marks: set[int], chosen: int
) -> tuple[list[tuple[_Value, int]], tuple[int, int] | None]:
    """The cases of ``function`` that the platform index decides, each with the branch it
    takes, and the most branches of a case on a platform index (with where it is)."""
    open_, close = function.body_open, function.body_close
    body = (open_, close)
    values: list[_Value] = [
        _Value(a.name, a.start, body, a.start, "index", chosen, True)
        for a in function.arguments
        if a.index
    ]
    for match in _DEFINITION.finditer(masked, open_ + 1, close):
        values.append(_definition(masked, match, case_marks))
    _place_in_scopes(masked, open_, close, values)
    by_name: dict[str, list[_Value]] = {}
    for value in values:
        by_name.setdefault(value.name, []).append(value)

    def lookup(name: str, at: int) -> _Value | None:
        seen = None
        for value in by_name.get(name, ()):
            if value.offset < at and value.scope[0] < at <= value.scope[1]:
                if seen is None or value.offset > seen.offset:
                    seen = value
        return seen

    pruned: list[tuple[_Value, int]] = []
    widest: tuple[int, int] | None = None
    # A case's value needs what its regions define: values are settled where they end.
    for value in sorted(values, key=lambda v: v.done):
        if value.kind == "convert":
            operand = lookup(value.operand, value.operand_at)
            if operand is not None and operand.number is not None:
                value.number, value.from_index = operand.number, operand.from_index
        elif value.kind == "case":
            index = lookup(value.operand, value.operand_at)
            if index is None or index.number is None:
                continue
            if index.kind == "index" or (index.kind == "convert" and _of_index(index, lookup)):
                count = len(value.regions)
                if widest is None or count > widest[0]:
                    widest = (count, value.offset)
            count = len(value.regions)
            taken = index.number if 0 <= index.number < count else count - 1
            if index.from_index and count > 1:
                pruned.append((value, taken))
            if not value.single:
                continue
            region_open, region_close = value.regions[taken]
            lone = _LONE_RETURN.fullmatch(masked, region_open + 1, region_close)
            if lone is None:
                continue
            returned = lookup(lone.group(1), lone.start(1))
            if returned is not None and returned.number is not None:
                value.number = returned.number
                value.from_index = index.from_index or returned.from_index
    return pruned, widest


def _of_index(value: _Value, lookup) -> bool:
    operand = lookup(value.operand, value.operand_at)
    return operand is not None and operand.kind == "index"


def _definition(masked: str, match: re.Match[str], case_marks: set[int]) -> _Value:
    name, start, end = match.group(1), match.start(1), match.end()
    single = match.group(2) is None
    value = _Value(name, start, (0, 0), start, "other", single=single)
    constant = _CONSTANT.match(masked, end)
    if constant is not None and single:
        value.kind, value.number = "constant", int(constant.group(1))
        return value
    convert = _CONVERT.match(masked, end)
    if convert is not None and single:
        value.kind, value.operand, value.operand_at = "convert", convert.group(1), convert.start(1)
        return value
    case = _CASE.match(masked, end) if end in case_marks else None
    if case is None:
        return value
    regions = []
    position = _skip_space(masked, case.end())
    while masked.startswith("{", position):
        region_close = _match(masked, position, "{", "}")
        regions.append((position, region_close))
        position = _skip_space(masked, region_close + 1)
        if not masked.startswith(",", position):
            break
        position = _skip_space(masked, position + 1)
    if not regions or not masked.startswith(")", position):
        return value
    value.kind, value.operand, value.operand_at = "case", case.group(1), case.start(1)
    value.regions, value.done = regions, regions[-1][1]
    return value


def _place_in_scopes(masked: str, open_: int, close: int, values: list[_Value]) -> None:
    """Give each definition in the body the braces of the region that holds it."""
    inside = sorted((v for v in values if v.kind != "index"), key=lambda v: v.offset)
    stack: list[int] = []
    scopes: dict[int, list[_Value]] = {}
    closes: dict[int, int] = {}
    pending = iter(inside)
    current = next(pending, None)
    for brace in re.finditer(r"[{}]", masked[open_ : close + 1]):
        at = open_ + brace.start()
        while current is not None and current.offset < at:
            scopes.setdefault(stack[-1] if stack else open_, []).append(current)
            current = next(pending, None)
        if brace.group() == "{":
            stack.append(at)
        elif stack:
            closes[stack.pop()] = at
    for opening, held in scopes.items():
        for value in held:
            value.scope = (opening, closes.get(opening, close))


def _drop_branches(squeezed: Compact, pruned: list[tuple[_Value, int]], choice: Choice) -> None:
    """Take out the branches not taken, outermost first (a case inside a branch taken out
    goes with it)."""
    original = squeezed.original
    dropped: list[tuple[int, int]] = []  # compact spans, in order
    for case, taken in sorted(pruned, key=lambda pair: pair[0].offset):
        if _within(dropped, case.offset):
            continue
        regions = case.regions
        spans = []
        if taken > 0:
            spans.append((regions[0][0], regions[taken][0]))
        if taken < len(regions) - 1:
            spans.append((regions[taken][1] + 1, regions[-1][1] + 1))
        for start, end in spans:
            bisect.insort(dropped, (start, end))
            choice.edits.append(Edit(original(start), original(end), ""))
    choice.dropped = [(original(start), original(end)) for start, end in dropped]


def _bind_index(
    source: Source,
    squeezed: Compact,
    function: _Function,
    chosen: int,
    newline: str,
    choice: Choice,
) -> None:
    """Take a public function's platform index arguments out of its signature, and bind
    their names to the chosen index at the top of its body."""
    text, masked, original = source.text, squeezed.text, squeezed.original
    arguments = function.arguments
    body_line = masked.rfind("\n", 0, function.body_open) + 1
    first_line = masked.find("\n", function.body_open) + 1
    indent_end = first_line
    while indent_end < len(masked) and masked[indent_end] in " \t":
        indent_end += 1
    indent = masked[first_line:indent_end]
    if first_line == 0 or masked.startswith("}", indent_end):
        header_indent = len(masked[body_line:]) - len(masked[body_line:].lstrip(" \t"))
        indent = masked[body_line : body_line + header_indent] + "  "
    bindings = [_binding(text, masked, original, a, chosen) for a in arguments if a.index]
    # Each run of index arguments goes with the commas that join it to the others.
    position = 0
    while position < len(arguments):
        if not arguments[position].index:
            position += 1
            continue
        last = position
        while last + 1 < len(arguments) and arguments[last + 1].index:
            last += 1
        if last + 1 < len(arguments):
            start, end = arguments[position].start, arguments[last + 1].start
        elif position > 0:
            start, end = arguments[position - 1].end, arguments[last].end
        else:
            start, end = arguments[position].start, arguments[last].end
        choice.edits.append(Edit(original(start), original(end), ""))
        position = last + 1
    lines = "".join(f"{newline}{indent}{binding}" for binding in bindings)
    choice.edits.append(Edit.insert(original(function.body_open) + 1, lines))


def _binding(text: str, masked: str, original, argument: _Argument, chosen: int) -> str:
    """``%name = stablehlo.constant dense<K> : type loc(...)``, from the argument's text."""
    name_end = masked.index(":", argument.start) + 1
    type_start = _skip_space(masked, name_end)
    type_end = _skip_type(masked, type_start)
    type_text = text[original(type_start) : original(type_end)]
    location = ""
    loc = masked.rfind("loc(", type_end, argument.end)
    if loc != -1 and masked.endswith(")", 0, argument.end):
        location = " " + text[original(loc) : original(argument.end)]
    return f"{argument.name} = stablehlo.constant dense<{chosen}> : {type_text}{location}"


def _newline_of(text: str) -> str:
    """The line ending of the file's first line: new lines end like it."""
    first_break = text.find("\n")
    return "\r\n" if first_break > 0 and text[first_break - 1] == "\r" else "\n"
