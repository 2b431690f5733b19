"""Names written into a model's C header: valid C99 and C++17 identifiers that are no keyword,
no standard macro or library name a header may define, and not reserved to the
implementation. ``c_identifier`` makes one of any text; ``name_problem`` says why a name
cannot be used as it is.
"""

from __future__ import annotations

import re

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# C99 and C11 keywords, C++17 keywords and alternative tokens.
KEYWORDS = frozenset(
    """
    auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef
    union unsigned void volatile while _Bool _Complex _Imaginary _Alignas _Alignof _Atomic
    _Generic _Noreturn _Static_assert _Thread_local
    alignas alignof and and_eq asm bitand bitor bool catch char16_t char32_t class compl
    constexpr const_cast decltype delete dynamic_cast explicit export false friend mutable
    namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    reinterpret_cast static_assert static_cast template this thread_local throw true try
    typeid typename using virtual wchar_t xor xor_eq
    """.split()
)

# Macros (and names used as macros) of the standard headers a model's header or a user's
# program includes: a function of that name would be replaced by the preprocessor.
STANDARD_MACROS = frozenset(
    """
    NULL EOF BUFSIZ FILENAME_MAX FOPEN_MAX L_tmpnam SEEK_CUR SEEK_END SEEK_SET TMP_MAX
    stdin stdout stderr errno assert offsetof setjmp va_arg va_copy va_end va_start
    complex imaginary I bool true false noreturn static_assert alignas alignof
    EXIT_FAILURE EXIT_SUCCESS RAND_MAX MB_CUR_MAX CHAR_BIT INT_MAX INT_MIN
    EDOM EILSEQ ERANGE HUGE_VAL HUGE_VALF HUGE_VALL INFINITY NAN
    fpclassify isfinite isinf isnan isnormal signbit isgreater isless
    SIGABRT SIGFPE SIGILL SIGINT SIGSEGV SIGTERM SIG_DFL SIG_ERR SIG_IGN
    CLOCKS_PER_SEC LC_ALL LC_COLLATE LC_CTYPE LC_MONETARY LC_NUMERIC LC_TIME
    main
    """.split()
)


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a C99/C++17 identifier of a header, or None."""
    if not _IDENTIFIER.fullmatch(name):
        return "is no C identifier (letters, digits and _, not starting with a digit)"
    if name in KEYWORDS:
        return "is a C or C++ keyword"
    if name in STANDARD_MACROS:
        return "is a macro or name of the C standard library"
    if name.startswith("__") or re.match(r"_[A-Z]", name) or "__" in name:
        return "is reserved to the implementation (__ or _ and a capital letter)"
    return None


def c_identifier(text: str) -> str:
    """``text`` as an identifier: characters outside ``[A-Za-z0-9_]`` become ``_``, runs of
    ``_`` one, a leading digit or reserved start gets ``m``; a keyword or macro gets ``_``."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", text)
    name = re.sub(r"_{2,}", "_", name) or "m"
    if not re.match(r"[A-Za-z]", name):
        name = "m" + name
    if name_problem(name):
        name += "_"
    return name


def c_name_part(text: str) -> str:
    """``text`` as a part of a name that follows a prefix and may be followed by ``_word``:
    characters outside ``[A-Za-z0-9_]`` become ``_``, runs of ``_`` one, none at either end
    (``main``, ``jit_f``; ``"f.g"`` is ``f_g``); ``f`` when nothing is left."""
    name = re.sub(r"_{2,}", "_", re.sub(r"[^A-Za-z0-9_]", "_", text)).strip("_")
    return name or "f"
