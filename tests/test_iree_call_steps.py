"""What a call of ``rewriter.iree`` does in Python, step by step (rewriter/iree/calls.py):
an array of the declared dtype and static shape is taken without ``convert``'s calls, any
other value goes through ``convert`` (its checks and messages); a module that imports
nothing from Python invokes IREE directly, one that does through ``CallErrors``, which
hands on the implementation's exception."""

from __future__ import annotations

import types

import numpy as np
import pytest

import rewriter
from rewriter.iree import call_errors, calls, load

pytestmark = [pytest.mark.iree, pytest.mark.jax]


def plus_one(x):
    return x + 1


def loaded(tmp_path, function, *arguments, imports=None):
    path = tmp_path / f"{function.__name__}.iree.mlir"
    exported = rewriter.export(function, *arguments).original
    path.write_text(rewriter.rewrite(exported, abi="iree").text)
    return load(path, imports=imports or {}, driver="local-sync")


def test_an_array_of_the_declared_type_is_not_converted(tmp_path, monkeypatch):
    model = loaded(tmp_path, plus_one, np.zeros(4, np.float32))
    converted = []
    convert = calls.convert

    def counted(value, parameter):
        converted.append(value)
        return convert(value, parameter)

    monkeypatch.setattr(calls, "convert", counted)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(model.main(x), x + 1)
    assert converted == []
    for other in ([0.0, 1.0, 2.0, 3.0], np.arange(4, dtype=np.float64)):
        np.testing.assert_array_equal(model.main(other), x + 1)
    assert len(converted) == 2
    with pytest.raises(ValueError, match=r"has shape \(5,\), expected"):
        model.main(np.zeros(5, np.float32))
    with pytest.raises(TypeError, match="takes 1 arrays, got 2"):
        model.main(x, x)


def test_a_module_without_python_imports_invokes_iree_directly(tmp_path, monkeypatch):
    def refuse(*arguments, **keywords):
        raise AssertionError("CallErrors.run called")

    monkeypatch.setattr(call_errors.CallErrors, "run", refuse)
    model = loaded(tmp_path, plus_one, np.zeros(4, np.float32))
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(model.main(x), x + 1)


def test_the_function_is_the_calls_closure_until_the_module_is_closed(tmp_path):
    """No wrapper between the caller and the function ``Call`` made (a closure: a call
    reads no attribute of an object of rewriter's); ``close`` lets go of IREE's objects
    (the context, the function, the device and their methods) and the function (a
    reference kept to it too) then says so."""
    import iree.runtime as rt

    from rewriter.compile.load_errors import LoadError

    model = loaded(tmp_path, plus_one, np.zeros(4, np.float32))
    main = model.main
    call = model._handles["main"]
    assert isinstance(call, calls.Call) and main is call.function
    assert isinstance(main, types.FunctionType)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(main(x), x + 1)

    def held(function) -> list[object]:
        """The IREE objects ``function``'s closure holds, itself or by a bound method."""
        owners = (
            getattr(c.cell_contents, "__self__", c.cell_contents) for c in function.__closure__
        )
        kinds = (rt.VmContext, rt.VmFunction, rt.HalDevice, rt.HalAllocator)
        return [o for o in owners if isinstance(o, kinds)]

    assert len(held(main)) >= 3  # the context (invoke), the function, the device
    model.close()
    assert held(main) == []
    with pytest.raises(LoadError, match="main: the module was closed; load it again"):
        main(x)
