"""``LineLexer`` lexes as lark's contextual lexer does (``rewriter/syntax/line_lexer.py``).

The argument rests on ``first_characters`` never leaving out a character a terminal can
start with: that is checked on constructs one by one, and for every terminal of the
grammar at every place of the samples where it matches. The lexers are then compared
line by line: every line a validation lexes, of the samples, of jax's back-compat
corpus, of the call-dense exports, of their rewrites and of mutations of them, from the
stack the validation met it at, gives the same tokens in the same order to the parser,
and the same outcome (the stack after it, or the error and where) by either lexer.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

import rewriter
from fuzz.rewrite import mutate, seeds
from rewriter.syntax import validation
from rewriter.syntax.line_lexer import NoTerminal, first_characters

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("regexp", "expected"),
    [
        ("abc", "a"),
        ("[a-c_]x", "abc_"),
        ("(?:x|yz)", "xy"),
        ("[-+]?[0-9]+", "-+0123456789"),
        ("(?:^|(?<=\n))[ \t]*%", " \t%"),
        ("a*b", "ab"),
        ("(?:a|)b", "ab"),
        ("x(?=<)", "x"),
        ("(?!y)[xy]z", "xy"),
        (r"\{\-\#", "{"),
        ("(?P<n>q)r", "q"),
        (r"\w+", None),  # a category: any
        ("[^a]", None),  # a negated class: any
        ("(?i:a)", None),  # case-insensitive: any
        (".", None),
        ("a*", None),  # can match nothing: lark refuses such terminals, so any
        ("[\u0000-\uffff]", None),  # too wide to list
    ],
)
def test_first_characters_of_each_construct(regexp: str, expected: str | None) -> None:
    assert first_characters(regexp) == (None if expected is None else frozenset(expected))


def test_first_characters_with_flags_are_any() -> None:
    assert first_characters("a", re.IGNORECASE) is None


def _texts() -> list[str]:
    paths = sorted(ROOT.glob("samples/*/*.mlir")) + sorted(
        (ROOT / "tests/data/call_dense").glob("*.mlir")
    )
    return [path.read_text() for path in paths]


def test_no_terminal_of_the_grammar_matches_where_its_first_characters_say_it_cannot() -> None:
    """Every place of the samples where a terminal matches starts with one of its first
    characters (a look-ahead finds every place, overlapping or not)."""
    terminals = validation._tables().lexer.root_lexer.terminals
    texts = _texts()
    checked = 0
    for terminal in terminals:
        regexp = terminal.pattern.to_regexp()
        first = first_characters(regexp)
        if first is None:
            continue
        anywhere = re.compile(f"(?=(?:{regexp}))")
        for text in texts:
            for found in anywhere.finditer(text):
                assert text[found.start()] in first, (terminal.name, text[found.start() : 40])
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
