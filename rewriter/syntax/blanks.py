"""One way to blank a statement or a line for reuse: the holes, the grammar's pattern each
takes, and what each is blanked to.

A parse is reused by a text's *shape*: the text with its holes (the parts that differ
between texts of one parse) blanked. Two users blank with what is defined here:

- the rewrite's statement shapes: ``shape_of`` finds a custom call's holes of the kinds
  of ``HOLE_PATTERNS`` by one pattern (``_HOLES``) and blanks each to its ``BLANK``
  (``plan/call_shapes.py`` argues why a shape's parse is each of its statements' parse;
  ``holes.py`` finds a statement's shape again without this scan);
- ``--validate``'s line shapes: ``blanked_line``, points 3 to 7 below (a custom call's
  line takes its statement's shape: ``validation.LineShapes``), for the input and for
  the lines a rewrite wrote alike.

A parse made once for many statements holds a ``sentinel`` in place of each hole
(``plan/call_shapes.py``) or size (``dimensions.py``), found again in its model by one
finder per family (``cut_at_sentinels``).

Each pattern is the grammar's (``terminals``, which ``tests/test_grammar_terminals.py``
checks against lark's), or a narrower form that the test checks takes nothing more.

Why a line's shape lexes as the line does. Points 1 and 2 are ``validation``'s: no token
spans a line break, and a line's outcome is fixed by the parser's state stack before it
and the token types it lexes to.

3. A line's shape is its text with the body of every `%name` (the longest run of
   ``[A-Za-z0-9_$.-]`` after a ``%``) replaced by ``_``. The terminals a ``%`` can start
   or sit in (VALUE_ID, VALUE_USE, LS_RESULTS, strings, comments) take any such body
   whole, and what follows it decides the rest of their match (no backtracking into it);
   no token ends inside one (nothing matches ``%`` alone); no keyword retypes such a
   token by its value. The alias ``X`` of every ``loc(#X)`` (``X`` the longest run of
   ``[A-Za-z_$.-][A-Za-z0-9_$.-]*``, a ``)`` after it) is blanked too: after ``loc(`` a ``#`` can
   only start HASH_ID (line-start terminals need the line's start, and ``#-}`` a ``}``),
   which takes the whole run and ends at the ``)``; in a string or a comment it is text
   like any other, with no quote, backslash or newline in it. So two lines of one shape
   lex to the same token types at the same places, up to the lengths of the names. The
   name ``X`` of every ``@X`` (the longest run of ``[A-Za-z_$.-][A-Za-z0-9_$.-]*``) is
   blanked too: SYMBOL is the only terminal with a ``@`` outside strings and comments, and
   it takes the whole run; so a ``func.call @kernel_7`` shares its line with the other
   targets' calls. In an alias definition, a line that starts with ``#X`` before a ``=``
   (``X`` such a run that starts with a letter or ``_``), ``X`` is blanked, and so are
   the aliases it uses after a ``(`` or a blank and the line and column numbers of a file
   location (``"":12:5 to :9``, its string blanked by point 6; no name character after
   the last). At a line's start and after ``(`` or a blank, a ``#`` before a letter or
   ``_`` can only start LS_HASH_ID or HASH_ID (``#-}`` has a ``-`` after it, ``{-#`` one
   before), which take the whole run. The numbers are INT tokens whatever their digits
   (FLOAT needs a ``.``, HEX and DIMS an ``x``), which the range check reads only in an
   ``array<`` (a line holding one keeps them). So ``#loc12 = loc("f.py":7:3 to :9)`` and
   ``#loc13 = loc(callsite(#loc4 at #loc9))`` share their shapes with their kind.
   A custom call statement's shape blanks more: its scalar attribute
   values too, each of which lexes to one token of one type whatever its text
   (``rewriter/plan/call_shapes.py``, point 2).
4. The number of a splat, ``dense<L>`` with ``L`` of the INT form (``[-+]?[0-9]+``) or the
   FLOAT form right before the ``>``, is blanked to ``0`` or ``0.0`` (its sign kept): an
   export's constants (``dense<249> : tensor<i32>``, one per unrolled step) are otherwise a
   shape each. No terminal holds a ``<`` but strings and comments (where digits are text
   like any other), so ``L`` is lexed on its own, by the first terminal of lark's order
   that matches there: HEX needs an ``x`` after a ``0``, DIMS an ``x`` after the digits,
   FLOAT a ``.``; so a FLOAT-form ``L`` is one FLOAT token and an INT-form one one INT token
   (as ``tests/test_call_shapes.py`` checks for attribute values), whatever its digits, and
   the ``>`` after it ends it. The range check below reads no splat: only the elements of
   ``array<iN: ...>`` (a line holding ``array<`` keeps its splats), ``= L}`` and
   ``L : iN``, and a splat's number has ``<`` before it and ``>`` after it.
5. The value ``V`` of ``arith.constant V`` (a rewrite writes one for each attribute of
   a call) is blanked when it is a FLOAT-form literal before ``: f32`` or ``: f64`` (to
   ``0.0``), ``true`` or ``false`` (to ``true``), or an INT-form literal of at most nine
   digits before ``: iN``, ``siN`` or ``uiN`` of 32 or 64 bits (to ``0``). ``V`` starts a
   token after the blank, unless it is text in a string or a comment: the line-start
   terminals hold only the blanks that start a line, LS_RESULTS only blanks before a
   ``,`` or ``=``, and no other terminal holds one. What follows ``V`` (a blank or ``:``,
   after a boolean no name character) ends that token, and each form lexes to one token
   type whatever its text, as point 2 of ``rewriter/plan/call_shapes.py`` argues for
   attribute values. The range check reads such an integer as ``L : iN`` only (a line
   holding ``array<`` keeps its value, as it keeps its splats), and the types that may
   follow take any nine digits, as they take ``0``.
6. Every string (``terminals.STRING``: the grammar's STRING pattern) outside a comment is
   blanked to ``""``, but ``"stablehlo.custom_call"``; a scan left to right finds them,
   a comment (``//`` to the line's end) taken where it starts first. Outside comments a
   ``"`` can only start STRING or LS_STRING, sit in a quoted SYMBOL (``@"x"``), or start
   CUSTOM_CALL_GENERIC (or its line-start twin), the one terminal that takes a particular
   string, which is kept. The first three take a string whole by the same pattern (from
   a quote to the next one not escaped) whatever it holds, as they take ``""``. A string
   that does not close on its line stays as written, and no later quote on the line
   starts one that closes (the escapes after a quote pair up alike whichever earlier
   quote a scan starts from). No check reads a string. So the externs a rewrite declares,
   which differ in their symbols and strings, share one shape.
7. A line whose shape is new from its stack is looked up again by a coarser key before it
   is lexed: its shape with the run of sizes ``Nx`` (``N`` digits) that starts each
   dimension list (``dimension_lists``, which finds them right after a ``<``)
   made ``1x``, unless the run starts with ``0x`` or the shape holds ``array``
   (``tensor<4x24xf32>`` becomes ``tensor<1xf32>``); and its outcome is remembered
   under both keys. The shape lexes as the line does (each blanking above puts a value
   its rule takes), so the coarser key is sound if two texts T and T' that differ only
   in such runs lex alike. A ``<`` is a token of its own (no terminal starts with one)
   or lies in a string or a comment, whose match does not read digits (and ends past
   the run, which holds no quote); so a token starts right after the ``<`` or none
   starts in the run. There, at a digit other than a lone ``0`` before an ``x``, the
   terminals that match are DIMS and INT (the first digits: an ``x`` follows them), and
   no other (HEX needs ``0x``, FLOAT a ``.``, no literal starts with a digit); so the
   state's lexer takes the same one in both. DIMS takes the run and what follows it
   alike (more dimensions, which the texts share): it ends at the same place of their
   common rest. After INT the next token starts at an ``x``, where only BARE_ID matches
   (no literal or other terminal starts with ``x``): it takes the rest of the run
   (digits and ``x``) and the same name characters after it, and no keyword retypes it
   (none starts with ``x``). So T and T' lex to the same token types. The range check
   reads an INT so lexed only in an ``array<`` (none here): not as ``= L}`` (a ``<`` is
   before it) nor as ``L : iN`` (an ``x`` after it). So an export's calls of one kernel
   on many tensor shapes, and their externs, are lexed once. Only on a miss: making the
   coarser key of every line would cost more than the lexing it saves in most exports.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .terminals import ALIAS_NAME, COMMENT, DIMS, FLOAT, INT, STRING, SYMBOL_NAME, VALUE_NAME

# What each kind of a statement's hole takes (``shape_of``), each the grammar's: a name what
# VALUE_ID takes after its `%`, an alias what HASH_ID takes after its `#`, a target SYMBOL's
# unquoted form after its `@`, numbers FLOAT and INT. A boolean is BOOL's two words: BOOL's
# look-ahead (no name character after) holds where the hole's does (a blank, `,` or `}`
# after).
HOLE_PATTERNS = {
    "name": VALUE_NAME,
    "alias": ALIAS_NAME,
    "target": SYMBOL_NAME,
    "float": FLOAT,
    "int": INT,
    "bool": "true|false",
}
# What each kind is blanked to: a member of its class, which lexes as every member does.
BLANK = {"name": "_", "alias": "_", "target": "_", "float": "0.0", "int": "0", "bool": "true"}
# The type after a float hole (or a blanked constant's float): `f32` or `f64`.
FLOAT_TYPE = r"(?=[ \t]*:[ \t]*f(?:32|64)(?![\w$.]))"
# Point 5's integer: INT's unsigned numbers of at most nine digits (the test checks it
# takes none that INT does not), which every 32- or 64-bit integer type takes.
NINE_DIGITS = "[0-9]{1,9}"
VALUE_NAMES = re.compile(f"%{VALUE_NAME}")  # point 3: every name, blanked to `%_`
_LOCATION_ALIAS = re.compile(rf"loc\(#{ALIAS_NAME}\)")
# Point 4's L: an INT- or FLOAT-form number, its sign and its fraction as groups 1 and 2.
# Not the two terminals' text, for the groups: tests/test_grammar_terminals.py checks that
# it takes exactly what INT or FLOAT takes.
_SPLAT_NUMBER_FORM = r"([-+]?)[0-9]+(\.[0-9]*(?:[eE][-+]?[0-9]+)?)?"
_SPLAT = re.compile(rf"dense<{_SPLAT_NUMBER_FORM}>")
_SYMBOL = re.compile(f"@{SYMBOL_NAME}")  # a quoted symbol's string is blanked by point 6
_STRING = re.compile(STRING)
# Where a line may hold a string that must stay (point 6): a comment, `"stablehlo.custom_call"`.
_STRING_KEPT_OR_COMMENT = re.compile(rf'(?P<kept>"stablehlo\.custom_call"|{COMMENT})|{STRING}')
# Point 3's alias definitions and uses: HASH_ID's names that start with a letter or `_`
# (after `(` or a blank, `#-}` and `{-#` are no alias); the test checks the relation.
_ALIAS_NAME_FROM_LETTER = f"(?=[A-Za-z_]){ALIAS_NAME}"
_ALIAS_DEFINITION = re.compile(f"#{_ALIAS_NAME_FROM_LETTER}(?=[ \t]*=)")  # at a line's start
# In an alias definition (point 3): an alias used after `(` or a blank, and the line and
# column numbers of a file location.
_ALIAS_USE = re.compile(f"(?<=[( ])#{_ALIAS_NAME_FROM_LETTER}")
_FILE_LOCATION = re.compile(r'(?<="":)[0-9]+:[0-9]+(?: to (?:[0-9]+)?:[0-9]+)?(?![\w$.])')
_DIGITS = re.compile(r"[0-9]+")
# Point 7: the run of sizes that starts a dimension list, but one that starts with `0x`;
# DIMS's runs of sizes alone (no `?` or `*`: the test checks it takes none that DIMS does not).
_SIZES = re.compile(r"(?!0x)(?:[0-9]+x)+")
# The value of `arith.constant V : T` (point 5): a float, a boolean, or an integer that
# every 32- or 64-bit integer type takes.
_CONSTANT_VALUE = re.compile(
    rf"arith\.constant (?:(?P<float>{FLOAT}){FLOAT_TYPE}"
    r"|(?P<bool>true|false)(?![\w$.])"
    rf"|(?P<int>{NINE_DIGITS})(?=[ \t]*:[ \t]*[su]?i(?:32|64)(?![\w$.])))"
)


def blanked_dimensions(shape: str) -> str:
    """The coarser key of a line's ``shape`` (point 7): its runs of dimensions blanked,
    or the shape itself when it holds ``array``."""
    if "<" not in shape or "array" in shape:
        return shape
    parts: list[str] = []
    position = 0
    for dimensions in dimension_lists(shape):
        sizes = _SIZES.match(shape, dimensions.start(1))
        if sizes is not None:
            parts.append(shape[position : sizes.start()])
            parts.append("1x")
            position = sizes.end()
    parts.append(shape[position:])
    return "".join(parts)


def _blank_splat(number: re.Match[str]) -> str:
    """A splat's number blanked (point 4), its sign kept: ``number`` has the sign and the
    fraction as groups 1 and 2, as _SPLAT matches it."""
    return f"{number.group(1)}{'0' if number.group(2) is None else '0.0'}"


def blanked_line(line: str) -> str:
    """``line`` with its names, location aliases, symbols, splat numbers, constant value
    and strings blanked (points 3 to 6)."""
    if '"' in line:
        line = _blank_strings(line)
    if line[:1] == "#":
        line = _blanked_definition(line)
    if "%" in line:
        line = VALUE_NAMES.sub("%_", line)
    if "loc(#" in line:
        line = _LOCATION_ALIAS.sub("loc(#_)", line)
    if "@" in line:
        line = _SYMBOL.sub("@_", line)
    if "array<" not in line:  # the range check reads an array's elements
        if "dense<" in line:
            line = _SPLAT.sub(lambda splat: f"dense<{_blank_splat(splat)}>", line)
        if "arith.constant " in line:
            constant = _CONSTANT_VALUE.search(line)
            if constant is not None:
                kind = constant.lastgroup
                assert kind is not None  # every alternative is a group
                start, end = constant.span(kind)
                line = f"{line[:start]}{BLANK[kind]}{line[end:]}"
    return line


def _blanked_definition(line: str) -> str:
    """An alias definition's line (a line starting with ``#``) with its name, the aliases
    it uses and its file locations' numbers blanked (point 3); its strings are already."""
    definition = _ALIAS_DEFINITION.match(line)
    if definition is None:
        return line
    line = _ALIAS_USE.sub("#_", line[definition.end() :])
    if "array<" not in line:  # the range check reads an array's elements
        line = _FILE_LOCATION.sub(lambda numbers: _DIGITS.sub("0", numbers.group()), line)
    return f"#_{line}"


def _blank_strings(line: str) -> str:
    """``line`` with every string ``""`` but in a comment and ``"stablehlo.custom_call"``
    (point 6)."""
    if "//" in line or '"stablehlo.custom_call"' in line:
        return _STRING_KEPT_OR_COMMENT.sub(
            lambda found: found.group() if found.group("kept") else '""', line
        )
    return _STRING.sub('""', line)


# A statement's holes (``shape_of``): the first alternative that matches at a place wins, so
# strings and comments, taken whole, hold none.
def _hole(kind: str) -> str:
    return f"(?P<{kind}>{HOLE_PATTERNS[kind]})"


_HOLES = re.compile(
    STRING
    + f"|{COMMENT}"
    + rf"|%{_hole('name')}"
    + rf"|loc\(#{_hole('alias')}\)"
    + rf"|stablehlo\.custom_call[ \t]+@{_hole('target')}"
    + rf"|=[ \t]*(?:{_hole('float')}{FLOAT_TYPE}"
    + rf"|{_hole('int')}(?=[ \t]*:[ \t]*[su]?i[0-9]+(?![\w$.]))"
    + rf"|{_hole('bool')}(?=[ \t]*[,}}]))"
)

Hole = tuple[int, int, str]  # start and end in the statement, kind


def shape_of(piece: str) -> tuple[str, list[Hole]]:
    """The shape of a statement's text, and its holes."""
    holes: list[Hole] = []
    parts: list[str] = []
    position = 0
    for match in _HOLES.finditer(piece):
        kind = match.lastgroup  # None for a string or a comment: part of the shape
        if kind is not None:
            start, end = match.span(kind)
            holes.append((start, end, kind))
            parts.append(piece[position:start])
            parts.append(BLANK[kind])
            position = end
    parts.append(piece[position:])
    return "".join(parts), holes


# Each alternative starts with a character of its own, so the regex engine skips to the
# next `"`, `/`, `t`, `m` or `v` at C speed; what may precede a type keyword (no name
# character: `size_runs` checks) would, as a look-behind, make it try every position.
_DIMENSION_LIST = re.compile(f"{STRING}|{COMMENT}|(?:tensor|memref|vector)<({DIMS})")
# The same matches in a text with no string, no comment and no `memref<` or `vector<`: one
# literal to look for, which the regex engine finds at C speed, not a character class.
_TENSOR_DIMENSION_LIST = re.compile(f"tensor<({DIMS})")
_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.-")


def dimension_lists(text: str) -> Iterator[re.Match[str]]:
    """The dimension lists of ``text`` (point 1 of ``dimensions``), each a match
    whose group 1 is the list."""
    # Without a quote or a slash no string or comment starts, and the third alternative of
    # _DIMENSION_LIST matches at a `tensor<` only: both patterns match at the same places.
    plain = '"' not in text and "/" not in text and "memref<" not in text
    pattern = _TENSOR_DIMENSION_LIST if plain and "vector<" not in text else _DIMENSION_LIST
    for match in pattern.finditer(text):
        if match.group(1) is not None:
            keyword = match.start()
            if keyword and text[keyword - 1] in _NAME_CHARACTERS:
                continue  # `xtensor<2x`: a name, whose match holds no other string or type
            yield match


# Sentinels: what a parse made once for many texts holds in place of a hole (``call_shapes``)
# or a size (``dimensions``), each of its own text, found again in the parse's model by
# its index. A name, alias or target is `$rwK$`, a float `1.KKKKKK7531e+07` (of FLOAT's form),
# a size `7KKKKK3` (digits, as DIMS takes); an int or bool is its blank, found by its place.
HOLE_SENTINELS = re.compile(r"\$rw([0-9]+)\$|1\.([0-9]{6})7531e\+07")
SIZE_SENTINELS = re.compile(r"7([0-9]{5})3")


def sentinel(kind: str, index: int) -> str:
    """The sentinel of hole or size ``index`` of ``kind`` (a hole's kind, or ``size``)."""
    if kind == "float":
        return f"1.{index:06d}7531e+07"
    if kind == "size":
        return f"7{index:05d}3"
    if kind in ("int", "bool"):
        return BLANK[kind]
    return f"$rw{index}$"


def cut_at_sentinels(text: str, sentinels: re.Pattern[str]) -> tuple[str | int, ...]:
    """``text`` cut at the matches of ``sentinels``: its other pieces, and each sentinel's
    index (the group that matched), in order."""
    parts: list[str | int] = []
    position = 0
    for match in sentinels.finditer(text):
        index = match.lastindex
        assert index is not None  # every alternative captures its index
        parts += [text[position : match.start()], int(match.group(index))]
        position = match.end()
    parts.append(text[position:])
    return tuple(part for part in parts if part != "")
