"""``LineLexer`` lexes as lark's contextual lexer does (``rewriter/syntax/line_lexer.py``).

The argument rests on ``can_start_with`` never leaving out a character a terminal can
start with: that is checked on constructs one by one, for every terminal of the grammar at
every place of the samples where it matches, and on the one thing the engine's partial
match cannot see, look-behinds (the grammar's look behind at a newline only). The lexers
are then compared line by line: every line a validation lexes, of the samples, of jax's
back-compat corpus, of the call-dense exports, of their rewrites and of mutations of them,
from the stack the validation met it at, gives the same tokens in the same order to the
parser, and the same outcome (the stack after it, or the error and where) by either lexer.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

import rewriter
from fuzz.rewrite import mutate, seeds
from rewriter.syntax import validation
from rewriter.syntax.line_lexer import NoTerminal, can_start_with

ROOT = Path(__file__).resolve().parent.parent

# The characters each construct is asked about: ASCII, and two beyond it.
PROBES = [chr(code) for code in range(128)] + ["\u00e9", "\u4e2d"]
WORD = {c for c in PROBES if re.fullmatch(r"\w", c)}


@pytest.mark.parametrize(
    ("regexp", "flags", "expected"),
    [
        ("abc", 0, set("a")),
        ("[a-c_]x", 0, set("abc_")),
        ("(?:x|yz)", 0, set("xy")),
        ("[-+]?[0-9]+", 0, set("-+0123456789")),
        ("(?:^|(?<=\n))[ \t]*%", 0, set(" \t%")),
        ("a*b", 0, set("ab")),
        ("(?:a|)b", 0, set("ab")),
        ("x(?=<)", 0, set("x")),
        ("(?!y)[xy]z", 0, set("x")),
        (r"\{\-\#", 0, set("{")),
        ("(?P<n>q)r", 0, set("q")),
        (r"\w+", 0, WORD),  # Unicode letters too, as re's \w
        ("[^a]", 0, set(PROBES) - {"a"}),
        ("(?i:a)", 0, set("aA")),
        ("a", re.IGNORECASE, set("aA")),
        (".", 0, set(PROBES) - {"\n"}),
        ("a*", 0, set(PROBES)),  # can match nothing: lark refuses such terminals; any
        ("(?<=\n)x", 0, set("x")),  # a look-behind at a line's start
    ],
)
def test_the_characters_a_construct_can_start_with(regexp: str, flags: int, expected) -> None:
    assert {c for c in PROBES if can_start_with(regexp, flags, c)} == expected


def test_the_grammars_terminals_look_behind_at_a_newline_only() -> None:
    """The one context ``can_start_with`` tries besides none is a newline before the
    character: a look-behind at anything else would need another."""
    terminals = validation._tables().lexer.root_lexer.terminals
    behind = re.compile(r"\(\?<[=!](?:[^()\\]|\\.)*\)")
    found = [(t.name, b) for t in terminals for b in behind.findall(t.pattern.to_regexp())]
    assert found, "the grammar has look-behinds; this test would prove nothing otherwise"
    assert {b for _, b in found} == {"(?<=\n)"}, found


def _texts() -> list[str]:
    paths = sorted(ROOT.glob("samples/*/*.mlir")) + sorted(
        (ROOT / "tests/data/call_dense").glob("*.mlir")
    )
    return [path.read_text() for path in paths]


def test_no_terminal_of_the_grammar_matches_where_it_is_said_it_cannot_start() -> None:
    """Every place of the samples where a terminal matches starts with a character
    ``can_start_with`` takes (a look-ahead finds every place, overlapping or not)."""
    terminals = validation._tables().lexer.root_lexer.terminals
    texts = _texts()
    checked = 0
    for terminal in terminals:
        regexp = terminal.pattern.to_regexp()
        anywhere = re.compile(f"(?=(?:{regexp}))")
        for text in texts:
            for found in anywhere.finditer(text):
                char = text[found.start()]
                assert can_start_with(regexp, 0, char), (terminal.name, text[found.start() : 40])
                checked += 1
    assert checked > 100_000


Outcome = tuple[object, ...]


def _lexed_by(run_name: str, text: str, start: int, end: int, stack: tuple[int, ...]):
    """The tokens one lexer gives the parser for a line, and the outcome."""
    parser = validation._Parser(validation._tables())
    tokens: list[tuple[str, str, int | None]] = []
    feed = parser.feed

    def recorded(token) -> None:  # type: ignore[no-untyped-def]
        tokens.append((token.type, str(token), token.start_pos))
        feed(token)

    parser.feed = recorded  # type: ignore[method-assign]
    outcome: Outcome
    try:
        outcome = ("parsed", getattr(parser, run_name)(text, start, end, stack))
    except NoTerminal as stop:
        outcome = ("no terminal", stop.args[0])
    except validation.Unexpected as error:
        outcome = ("unexpected", error.offset, error.message)
    return tokens, outcome, parser.integers.first


def _lines_lexed(texts: list[str]) -> list[tuple[str, int, int, tuple[int, ...]]]:
    """Every line the validations of ``texts`` lex, with the stack it was lexed from."""
    lines = []
    run = validation._Parser.run

    def kept(self, text, start, end, stack):  # type: ignore[no-untyped-def]
        lines.append((text, start, end, stack))
        return run(self, text, start, end, stack)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(validation._Parser, "run", kept)
        for text in texts:
            validation.first_error(rewriter.syntax.source.Source(text, "t.mlir"))
    return lines


def _corpus() -> list[str]:
    texts = [data.decode("utf-8", "replace") for data in seeds()]
    texts += _texts()
    rewrites = []
    for text in texts:
        try:
            rewrites.append(rewriter.rewrite(text).text)
        except rewriter.RewriteError:
            pass
    rng = random.Random(13)
    mutated = [
        mutate(rng.choice(texts).encode(), rng).decode("utf-8", "replace") for _ in range(300)
    ]
    return texts + rewrites + mutated


@pytest.mark.slow
def test_every_line_lexes_to_lark_s_tokens_and_outcome() -> None:
    lines = _lines_lexed(_corpus())
    outcomes = {"parsed": 0, "unexpected": 0, "no terminal": 0}
    for text, start, end, stack in lines:
        tokens, outcome, first = _lexed_by("_run_fast", text, start, end, stack)
        lark_tokens, lark_outcome, lark_first = _lexed_by("_run_lark", text, start, end, stack)
        assert tokens == lark_tokens, text[start:end]
        if outcome[0] == "no terminal":  # lark's lexer stops at the same place
            assert lark_outcome[:2] == ("unexpected", outcome[1]), text[start:end]
        else:
            assert (outcome, first) == (lark_outcome, lark_first), text[start:end]
        outcomes[outcome[0]] += 1
    # all three kinds of outcome, each well represented
    assert outcomes["parsed"] > 2000 and min(outcomes.values()) > 50, outcomes
