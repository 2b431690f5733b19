"""What both loaders take as an XLA FFI handler, and which implementation serves an import.

``handler_address`` refuses, before any C call, what can be told apart from a handler: a
Python callable, a cffi function, a bundle without ``execute``, an address of 0 or one
where no code of the process is. ``rewriter.iree.load`` finds each import's implementation
by the import's target as well as by its name, so that one ``{target: handler}`` mapping
serves both loaders (tests/test_one_handler_mapping.py runs it for real).
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import cffi
import pytest

from rewriter.compile import LoadError
from rewriter.compile.handlers import handler_address, is_ffi_handler
from rewriter.iree.implementations import implementations
from rewriter.iree.signatures import ImportSignature

ABORT = ctypes.CDLL(None).abort  # a C function of this process: code, but no handler
ABORT_ADDRESS = ctypes.cast(ABORT, ctypes.c_void_p).value


def capsule_of(address: int) -> object:
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = (
        ctypes.py_object,
        [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p],
    )
    return new(address, None, None)


def cffi_function():
    ffi = cffi.FFI()
    ffi.cdef("void abort(void);")
    return ffi.dlopen(None).abort


DATA = ctypes.create_string_buffer(64)  # memory of this process that holds no code


@pytest.mark.parametrize(
    ("handler", "error", "message"),
    [
        (
            {},
            TypeError,
            r"bundle is \{'execute': handler\}; this one has no 'execute' \(keys: none\)",
        ),
        ({"run": ABORT}, TypeError, r"has no 'execute' \(keys: 'run'\)"),
        ({"execute": ABORT, "prepare": 1}, ValueError, "only the execute stage runs"),
        (0, ValueError, "the address 0 is no XLA FFI handler"),
        (42, ValueError, "0x2a is no XLA FFI handler: no code of this process is there"),
        pytest.param(
            ctypes.addressof(DATA),
            ValueError,
            "is no XLA FFI handler: no code of this process",
            id="an-address-of-data",  # an id of its own: the address differs by process
        ),
        (-5, ValueError, "-5 is no address"),
        (2**64, ValueError, "is no address"),
        (True, TypeError, "a C function, not a bool"),
        (lambda frame: None, TypeError, r"a Python callable \(function\) is no XLA FFI handler"),
        (len, TypeError, r"a Python callable \(builtin_function_or_method\) is no XLA FFI"),
        (ctypes.CFUNCTYPE(None)(), ValueError, "the ctypes function is a NULL pointer"),
        ("RmsNorm", TypeError, "not str"),
        (None, TypeError, "not NoneType"),
    ],
)
def test_what_cannot_be_a_handler_is_refused_before_any_call(handler, error, message):
    with pytest.raises(error, match=message):
        handler_address(handler)


def test_a_cffi_function_is_no_handler():
    with pytest.raises(TypeError, match="a cffi function is no XLA FFI handler here"):
        handler_address(cffi_function())
    assert not is_ffi_handler(cffi_function())


def test_what_can_be_a_handler_gives_its_address():
    for handler in (ABORT, ABORT_ADDRESS, capsule_of(ABORT_ADDRESS), {"execute": ABORT}):
        assert is_ffi_handler(handler)
        assert handler_address(handler) == ABORT_ADDRESS
    with pytest.raises(ValueError, match="the capsule holds no pointer|no code"):
        handler_address(capsule_of(ctypes.addressof(DATA)))


def test_python_callables_and_bools_are_not_taken_for_handlers():
    assert not is_ffi_handler(lambda x: x)
    assert not is_ffi_handler(True)
    assert is_ffi_handler({})  # a bundle, which handler_address then refuses


def signature(name: str, target: str | None) -> ImportSignature:
    """An import of ``tensor<4xf32> -> tensor<4xf32>`` calling ``target`` (None: legacy)."""
    facts = (
        '{attributes = {}, operands = ["f32[4]{0}"], results = ["f32[4]{0}"], '
        f'target = "{target}"}}'
        if target is not None
        else ""
    )
    return ImportSignature("ffi", name, ("tensor<4xf32>",), ("tensor<4xf32>",), (0,), (), facts)


PATH = Path("m.vmfb")
T, T_1 = signature("T", "T"), signature("T_1", "T")  # one target, two signatures


def test_an_import_is_served_by_its_target_or_its_name():
    assert implementations(PATH, [T, T_1], {"T": "h"}) == {"T": "h", "T_1": "h"}
    # a name is more specific than a target
    assert implementations(PATH, [T, T_1], {"T": "h", "T_1": "g"}) == {"T": "h", "T_1": "g"}
    assert implementations(PATH, [T, T_1], {"T_1": "g", "T": "h", "other": 1}) == {
        "T": "h",
        "T_1": "g",
    }
    legacy = signature("legacy", None)
    assert implementations(PATH, [legacy], {"legacy": "k"}) == {"legacy": "k"}


def test_a_key_that_is_a_target_means_the_target():
    """``a_b`` is the import name of target ``a.b`` and the target of ``a_b_1``: the key
    serves target ``a_b`` only, and ``a.b`` needs its own key."""
    dotted, plain = signature("a_b", "a.b"), signature("a_b_1", "a_b")
    assert implementations(PATH, [dotted, plain], {"a.b": "h", "a_b": "g"}) == {
        "a_b": "h",
        "a_b_1": "g",
    }
    with pytest.raises(LoadError, match=r"no implementation for ffi\.a_b \(target a\.b\)"):
        implementations(PATH, [dotted, plain], {"a_b": "g"})


def test_missing_implementations_are_named_with_what_was_given():
    with pytest.raises(LoadError) as error:
        implementations(PATH, [T, T_1, signature("x", "lapack_spotrf_ffi")], {"t": 1})
    message = str(error.value)
    assert message.startswith(
        "m.vmfb: no implementation for ffi.T (target T), ffi.T_1 (target T), ffi.x (target "
        "lapack_spotrf_ffi)"
    )
    assert "jaxlib's CPU handlers serve lapack_spotrf_ffi: imports=rewriter.compile." in message
    assert "given for targets it does not call: t" in message


def test_imports_must_be_a_mapping_of_names():
    with pytest.raises(TypeError, match="imports is a mapping of targets or import names to"):
        implementations(PATH, [T], [("T", "h")])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"imports maps targets or import names \(str\) to"):
        implementations(PATH, [T], {1: "h"})  # type: ignore[dict-item]
