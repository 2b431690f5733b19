"""How ``rewriter.iree`` calls a public function (rewriter/iree/calls.py).

A call goes through the VM's own ``VmContext.invoke`` with argument and result lists built
from what ``load`` read once, never through ``iree.runtime``'s ``FunctionInvoker`` (its
generic packing of each argument and ``DeviceArray`` of each result); an aligned argument
reaches IREE as the caller's own memory, any other as a copy, and every result is an array
of the declared dtype, whatever its rank, size or element type (a small one new, a large
one in the memory IREE wrote: tests/test_iree_results.py).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from kernel_library import assert_all_agree

import rewriter
from rewriter.iree import calls, load

pytestmark = [pytest.mark.iree, pytest.mark.jax]


def loaded(tmp_path, function, *arguments, driver: str | None = "local-task"):
    path = tmp_path / f"{function.__name__}.iree.mlir"
    exported = rewriter.export(function, *arguments).original
    path.write_text(rewriter.rewrite(exported, abi="iree").text)
    return load(path, imports={}, driver=driver)


def aligned_copy(array: np.ndarray) -> np.ndarray:
    """A copy of ``array`` at a 64-byte aligned address."""
    raw = np.empty(array.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    copy = raw[start : start + array.nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


def plus_one(x):
    return x + 1


def every_kind(x, u, b):
    """Results of several ranks, sizes and element types: f32, ui8 (i8 in IREE, its
    encoding ui8), i1, 0-d, and a result without elements."""
    return x + 1, u * 2, jnp.logical_not(b), x.sum(), x[:0] * 2


@pytest.mark.parametrize("driver", ["local-task", "local-sync"])
def test_a_call_does_not_go_through_the_function_invoker(tmp_path, monkeypatch, driver):
    import iree.runtime.function as function

    def refuse(self, *arguments, **keywords):
        raise AssertionError("FunctionInvoker called")

    monkeypatch.setattr(function.FunctionInvoker, "__call__", refuse)
    monkeypatch.setattr(function.ArgumentPacker, "pack", refuse, raising=False)
    model = loaded(tmp_path, plus_one, np.zeros(10, np.float32), driver=driver)
    x = np.arange(10, dtype=np.float32)
    np.testing.assert_array_equal(model.main(x), x + 1)


def test_results_of_every_kind_are_new_arrays_of_the_declared_dtype(tmp_path):
    x = np.linspace(-1, 1, 6, dtype=np.float32)
    u = np.array([1, 7, 200], np.uint8)
    b = np.array([True, False])
    model = loaded(tmp_path, every_kind, x, u, b)
    got = model.main(x, u, b)
    assert_all_agree(got, tuple(np.asarray(r) for r in every_kind(x, u, b)))
    for result in got:
        assert result.flags.owndata and result.flags.writeable
        assert not any(np.shares_memory(result, a) for a in (x, u, b))


def spy_on_arguments(monkeypatch) -> list[tuple[str, np.ndarray]]:
    """How IREE is given each argument of the modules loaded from now on, call by call:
    ("import", array) for a buffer on the array's own memory (``import_host_allocation``),
    ("copy", array) for a buffer IREE allocates and fills with a copy
    (``allocate_buffer_copy``)."""
    given: list[tuple[str, np.ndarray]] = []
    made = calls.memory_functions

    def spied(device):
        copied, imported = made(device)

        def record_copy(memory, usage, device, array, element_type):
            view = copied(memory, usage, device, array, element_type)
            given.append(("copy", array))  # when IREE took it: it refuses a strided one
            return view

        def record_import(array, *rest):
            given.append(("import", array))
            return imported(array, *rest)

        return record_copy, record_import

    monkeypatch.setattr(calls, "memory_functions", spied)
    return given


# f32 elements of an argument read in place when it can be
LARGE = calls.COPIED_BYTES // 4


def test_an_aligned_argument_is_read_in_its_own_memory_and_any_other_copied(tmp_path, monkeypatch):
    given = spy_on_arguments(monkeypatch)
    model = loaded(tmp_path, plus_one, np.zeros(LARGE, np.float32))
    x = aligned_copy(np.arange(LARGE, dtype=np.float32))
    unaligned = aligned_copy(np.arange(LARGE + 1, dtype=np.float32))[1:]
    read_only = aligned_copy(np.arange(LARGE, dtype=np.float32))
    read_only.flags.writeable = False
    strided = aligned_copy(np.arange(2 * LARGE, dtype=np.float32))[::2]
    for argument, how in (
        (x, "import"),
        (unaligned, "copy"),
        (read_only, "copy"),
        (strided, "copy"),
    ):
        given.clear()
        kept = argument.copy()
        np.testing.assert_array_equal(model.main(argument), kept + 1)
        ((kind, array),) = given
        assert kind == how
        if how == "import":
            assert array is argument  # the caller's own memory, no copy
        np.testing.assert_array_equal(argument, kept)


def test_an_argument_below_the_copied_size_is_copied_in_one_native_call(tmp_path, monkeypatch):
    """IREE's allocation and copy cost less than importing the memory below
    ``COPIED_BYTES``, aligned or not; a strided or Fortran-ordered one (which IREE
    refuses to copy) is made contiguous first."""
    given = spy_on_arguments(monkeypatch)
    model = loaded(tmp_path, plus_one, np.zeros((LARGE // 2 - 1, 2), np.float32))
    x = aligned_copy(np.arange(LARGE - 2, dtype=np.float32).reshape(-1, 2))
    strided = aligned_copy(np.arange(2 * LARGE - 4, dtype=np.float32).reshape(-1, 2))[::2]
    fortran = np.asfortranarray(x)
    for argument in (x, strided, fortran):
        given.clear()
        kept = argument.copy()
        np.testing.assert_array_equal(model.main(argument), kept + 1)
        ((kind, array),) = given
        assert kind == "copy" and array.flags.c_contiguous
        np.testing.assert_array_equal(argument, kept)


def set_one(x):
    return x.at[3].set(-1.0)


def test_a_module_that_writes_its_arguments_gets_copies(tmp_path, monkeypatch):
    """IREE computes a scatter in its operand's memory (``written_arguments.IN_PLACE_OPS``)."""
    given = spy_on_arguments(monkeypatch)
    model = loaded(tmp_path, set_one, np.zeros(LARGE, np.float32))
    x = aligned_copy(np.arange(LARGE, 0, -1).astype(np.float32))
    kept = x.copy()
    np.testing.assert_array_equal(model.main(x), np.asarray(set_one(jnp.asarray(kept))))
    assert [kind for kind, _ in given] == ["copy"]
    np.testing.assert_array_equal(x, kept)


def add_at(x, i, v):
    return x.at[i].add(v)


def test_only_the_argument_a_scatter_writes_gets_a_copy(tmp_path, monkeypatch):
    """``x.at[i].add(v)``: IREE may write into ``x`` alone (``written_arguments.py``); the
    indices and the updates are read in their own memory, and none of the three changes."""
    x = aligned_copy(np.arange(LARGE, dtype=np.float32))
    i = aligned_copy((np.arange(LARGE, dtype=np.int32) * 7) % LARGE)
    i[:2] = 3
    v = aligned_copy(np.linspace(1.0, 4.0, LARGE, dtype=np.float32))
    given = spy_on_arguments(monkeypatch)
    model = loaded(tmp_path, add_at, x, i, v)
    kept = [a.copy() for a in (x, i, v)]
    expected = np.asarray(add_at(*(jnp.asarray(a) for a in kept)))
    np.testing.assert_array_equal(model.main(x, i, v), expected)
    assert [kind for kind, _ in given] == ["copy", "import", "import"]
    assert given[1][1] is i and given[2][1] is v
    for argument, before in zip((x, i, v), kept, strict=True):
        np.testing.assert_array_equal(argument, before)


def test_result_shapes_are_read_once_at_load_when_static(tmp_path):
    """A static result's shape and size come from IREE's declaration, read at load; a
    dynamic one is read from each result's buffer view."""
    model = loaded(tmp_path, every_kind, np.zeros(6, np.float32), np.zeros(3, np.uint8),
                   np.zeros(2, bool))  # fmt: skip
    assert model._handles["main"].results == (
        (np.dtype(np.float32), (6,), 6),
        (np.dtype(np.uint8), (3,), 3),
        (np.dtype(np.bool_), (2,), 2),
        (np.dtype(np.float32), (), 1),
        (np.dtype(np.float32), (0,), 0),
    )
