"""Which integer literals MLIR's parser takes for an integer type, as it decides it.

Found by trial against jaxlib's MLIR (``tests/test_integers.py`` holds the rule to it for
every width and edge): a signless ``iN`` takes ``-2^(N-1)`` to ``2^N - 1`` (the bits, read
either way), ``siN`` takes ``-2^(N-1)`` to ``2^(N-1) - 1``, ``uiN`` takes ``0`` to
``2^N - 1`` and no literal with a minus sign; ``-0`` is taken by none of them.
Hexadecimal literals are unsigned bits: ``0xFF : i8`` is fine, ``0x80 : si8`` is not.
Out of range, jaxlib rejects the module ("integer constant out of range for attribute"),
so the rewrite and ``--validate`` report it at the literal instead of writing a module
that will not load.
"""

from __future__ import annotations

import re

_INTEGER_TYPE = re.compile(r"(s|u)?i([0-9]+)")


def integer_type_width(type_: str) -> tuple[str, int] | None:
    """``("s" | "u" | "", width)`` of an integer type name, or None for other types."""
    match = _INTEGER_TYPE.fullmatch(type_)
    return (match.group(1) or "", int(match.group(2))) if match else None


def digits_always_taken(type_: str) -> int:
    """How many decimal digits a literal of ``type_`` without a sign may have and always
    be taken (``99 : i8``): a quick yes before ``range_error``. 0 for other types."""
    kind = integer_type_width(type_)
    if kind is None:
        return 0
    signedness, width = kind
    high = ((1 << width) >> 1) - 1 if signedness == "s" else (1 << width) - 1
    return len(str(high + 1)) - 1


def negative_digits_always_taken(type_: str) -> int:
    """How many decimal digits, the first not 0, a literal of ``type_`` after a minus sign
    may have and always be taken (``-99 : i8``): the quick yes for negative literals. 0
    for unsigned and other types, which take none (or are not this rule's business)."""
    kind = integer_type_width(type_)
    if kind is None or kind[0] == "u":
        return 0
    half = (1 << kind[1]) >> 1  # the largest magnitude taken after a minus sign
    return len(str(half)) - 1 if half else 0


def range_error(literal: str, type_: str) -> str | None:
    """Why MLIR rejects ``literal : type_``, or None when it takes it (or it is no integer
    literal of an integer type: ``1.5``, ``f32`` are not this rule's business)."""
    kind = integer_type_width(type_)
    if kind is None:
        return None
    signedness, width = kind
    text = literal.strip()
    negative = text.startswith("-")
    digits = text.lstrip("+-")
    try:
        value = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 10)
    except ValueError:
        return None
    if negative and signedness == "u":
        return f"negative integer literal {literal} not valid for unsigned integer type {type_}"
    half = (1 << width) >> 1  # 2^(N-1); 0 for i0
    low = 0 if signedness == "u" else -half
    high = half - 1 if signedness == "s" else (1 << width) - 1
    # MLIR negates the magnitude in N bits and wants the sign bit set: so not -0.
    fits = 0 < value <= half if negative else value <= high
    if fits:
        return None
    return f"integer constant {literal} out of range for {type_} ({low} to {high})"
