"""Names written into C: valid identifiers in C99 and C++17 that nothing can redefine.

A name that reaches a header or an adapter (a parameter named after an FFI attribute, a
descriptor type, an include guard) comes from input the user may not control: an
attribute named ``new``, ``true``, ``NULL`` or ``INT32_MAX`` is a valid MLIR name and
breaks a C or C++ compiler, or, as an object-like macro, turns into something else. So
every such name is built here: only ``[A-Za-z0-9_]``, not starting with a digit, none of
the identifiers C and C++ reserve (a ``__`` anywhere, ``_`` and a capital at the start),
no keyword of C99, C11, C23 or C++17, and no object-like macro of the C standard library,
POSIX or GCC's GNU modes, since a user's file may include those headers before ours.
"""

from __future__ import annotations

import re

_C_KEYWORDS = frozenset(
    """
    auto break case char const continue default do double else enum extern float for goto
    if inline int long register restrict return short signed sizeof static struct switch
    typedef union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex
    _Generic _Imaginary _Noreturn _Static_assert _Thread_local alignas alignof bool
    constexpr false nullptr static_assert thread_local true typeof typeof_unqual _BitInt
    _Decimal32 _Decimal64 _Decimal128 asm
    """.split()
)

_CXX_KEYWORDS = frozenset(
    """
    and and_eq asm bitand bitor catch char8_t char16_t char32_t class compl concept consteval
    constinit const_cast co_await co_return co_yield decltype delete dynamic_cast explicit
    export friend mutable namespace new noexcept not not_eq operator or or_eq private
    protected public reinterpret_cast requires static_cast template this throw try typeid
    typename using virtual wchar_t xor xor_eq final override import module
    """.split()
)

# Object-like macros of the standard headers a C or C++ file commonly includes before ours
# (a function-like macro is expanded only before a parenthesis, which never follows a
# name we write), and the names GCC defines in its GNU modes.
_MACROS = frozenset(
    """
    NULL EOF BUFSIZ FILENAME_MAX FOPEN_MAX L_tmpnam TMP_MAX SEEK_SET SEEK_CUR SEEK_END
    stdin stdout stderr errno EDOM ERANGE EILSEQ EXIT_SUCCESS EXIT_FAILURE RAND_MAX
    MB_CUR_MAX CHAR_BIT SCHAR_MIN SCHAR_MAX UCHAR_MAX CHAR_MIN CHAR_MAX MB_LEN_MAX SHRT_MIN
    SHRT_MAX USHRT_MAX INT_MIN INT_MAX UINT_MAX LONG_MIN LONG_MAX ULONG_MAX LLONG_MIN
    LLONG_MAX ULLONG_MAX SIZE_MAX PTRDIFF_MIN PTRDIFF_MAX SIG_ATOMIC_MIN SIG_ATOMIC_MAX
    WCHAR_MIN WCHAR_MAX WINT_MIN WINT_MAX WEOF INTPTR_MIN INTPTR_MAX UINTPTR_MAX INTMAX_MIN
    INTMAX_MAX UINTMAX_MAX HUGE_VAL HUGE_VALF HUGE_VALL INFINITY NAN FP_INFINITE FP_NAN
    FP_NORMAL FP_SUBNORMAL FP_ZERO MATH_ERRNO MATH_ERREXCEPT math_errhandling FLT_MAX
    FLT_MIN FLT_EPSILON DBL_MAX DBL_MIN DBL_EPSILON LDBL_MAX LDBL_MIN LDBL_EPSILON
    FLT_DIG DBL_DIG FLT_RADIX FLT_ROUNDS DECIMAL_DIG M_E M_PI M_PI_2 M_PI_4 M_SQRT2
    M_LN2 M_LN10 M_LOG2E M_LOG10E M_1_PI M_2_PI M_2_SQRTPI M_SQRT1_2 CLOCKS_PER_SEC
    TIME_UTC SIGABRT SIGFPE SIGILL SIGINT SIGSEGV SIGTERM SIG_DFL SIG_ERR SIG_IGN LC_ALL
    LC_COLLATE LC_CTYPE LC_MONETARY LC_NUMERIC LC_TIME complex imaginary I noreturn
    assert offsetof va_arg va_start va_end va_copy setjmp ONCE_FLAG_INIT
    __bool_true_false_are_defined linux unix i386 _GNU_SOURCE main
    """.split()
)
_SIZED_MACRO = re.compile(
    r"U?INT(?:_LEAST|_FAST)?(?:8|16|32|64)_(?:MIN|MAX|C)|U?INTMAX_C"
    r"|(?:PRI|SCN)[diouxX](?:LEAST|FAST)?(?:8|16|32|64|MAX|PTR)"
)

RESERVED = _C_KEYWORDS | _CXX_KEYWORDS | _MACROS

_NOT_IN_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]+")
_UNDERSCORES = re.compile(r"__+")


def name_problem(name: str) -> str | None:
    """Why ``name`` may not be written into C as it is (see the module docstring), or None."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return "is no C identifier (letters, digits and _, not starting with a digit)"
    if name in _C_KEYWORDS or name in _CXX_KEYWORDS:
        return "is a C or C++ keyword"
    if name in _MACROS or _SIZED_MACRO.fullmatch(name):
        return "is a macro or name of the C standard library"
    if "__" in name or re.match(r"_[A-Z]", name):
        return "is reserved to the implementation (__, or _ and a capital letter)"
    return None


def is_safe_c_name(name: str) -> bool:
    """Whether ``name`` may be written into C as it is (see the module docstring)."""
    return name_problem(name) is None


def c_name_part(text: str, fallback: str = "f") -> str:
    """``text`` as the part of a name that follows a prefix and may be followed by
    ``_word`` (``model_`` + ``main`` + ``_alloc``): other characters become one ``_``, runs
    of ``_`` one, none at either end; ``fallback`` when nothing is left."""
    return _UNDERSCORES.sub("_", _NOT_IN_IDENTIFIER.sub("_", text)).strip("_") or fallback


def safe_c_name(text: str, fallback: str = "x") -> str:
    """``text`` made a name that ``is_safe_c_name`` accepts: other characters become one
    ``_``, runs of ``_`` one, ``_`` at either end goes, a leading digit gets ``fallback``
    before it, and a reserved word gets ``_`` after it (``new_``, ``INT32_MAX_``)."""
    name = c_name_part(text, "")
    if not name:
        return fallback
    if name[0].isdigit():
        name = f"{fallback}{name}"
    return name if is_safe_c_name(name) else f"{name}_"


def unique_c_name(text: str, taken: set[str], fallback: str = "x") -> str:
    """``safe_c_name(text)``, or it with ``_1``, ``_2``, ... (its own trailing ``_`` left
    out, so that no ``__`` appears); added to ``taken``."""
    base = safe_c_name(text, fallback)
    name, counter = base, 1
    while name in taken:
        name = f"{base.rstrip('_')}_{counter}"
        counter += 1
    taken.add(name)
    return name
