"""Rule 5 and SSA names (``rewriter/plan/naming.py``): each case derived by hand in its
docstring. C names in generated headers are ``tests/test_c_names.py``'s."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewriter.plan.naming import NamePool, SymbolNamer, ValueNamer, c_identifier, ssa_base


def test_a_name_pool_hands_out_the_first_free_suffix():
    """Taken: x and x_1. The first claim of x skips both and gives x_2; the next goes on
    from there (x_3); an untaken base is handed out as it is, then with _1."""
    pool = NamePool({"x", "x_1"})
    assert [pool.claim(b) for b in ("x", "x", "y", "y")] == ["x_2", "x_3", "y", "y_1"]
    assert pool.claim_all(["x", "z"], "%") == ["%x_4", "%z"]


@pytest.mark.parametrize(
    ("target", "identifier"),
    [("lapack.potrf", "lapack_potrf"), ("3d-conv", "_3d_conv"), ("", "_"), ("ok_1", "ok_1")],
)
def test_c_identifier_replaces_what_c_does_not_take(target, identifier):
    """Rule 5: characters outside [A-Za-z0-9_] become ``_``; a leading digit gets a ``_``
    in front; the empty target becomes ``_``."""
    assert c_identifier(target) == identifier


def test_symbol_names_follow_rule_5_in_call_order():
    """Existing symbol: main. Targets: scale, my.kernel, main.
    - my.kernel is no C identifier: my_kernel, and the reason says so;
    - scale with its first signature keeps its name; a second signature takes scale_1;
      the first signature again gets scale back, with no second explanation;
    - main is taken by the module's own function: main_1."""
    namer = SymbolNamer({"main"}, ["scale", "my.kernel", "main"])
    assert namer.name("my.kernel", "a") == ("my_kernel", "'my.kernel' is not a valid C identifier")
    assert namer.name("scale", "a") == ("scale", None)
    assert namer.name("scale", "b") == (
        "scale_1",
        "'scale' is called with several signatures; each gets its own extern",
    )
    assert namer.name("scale", "a") == ("scale", None)
    assert namer.name("main", "a") == (
        "main_1",
        "a symbol named 'main' already exists in the module",
    )


def test_a_valid_target_keeps_its_name_whatever_the_call_order():
    """Targets a.b and a_b: a_b is reserved for its own calls before any name is handed
    out, so a.b, called first, cannot take a_b and gets a_b_1."""
    namer = SymbolNamer(set(), ["a.b", "a_b"])
    assert namer.name("a.b", "s") == (
        "a_b_1",
        "'a.b' is not a valid C identifier, and @a_b is taken",
    )
    assert namer.name("a_b", "s") == ("a_b", None)


def test_with_a_prefix_only_the_prefixed_name_must_be_free():
    """--abi iree names externs ffi.S: a function named scale does not clash with ffi.scale."""
    namer = SymbolNamer({"scale"}, ["scale"], prefix="ffi.")
    assert namer.name("scale", "s") == ("ffi.scale", None)


def test_value_names_come_from_the_attribute_path():
    """SSA name bases: dots become ``_``, characters SSA names do not take become ``_``,
    a leading digit gets a ``_``. factor is taken in the file, so the first is factor_1."""
    namer = ValueNamer({"factor"})
    assert namer.fresh("factor") == "%factor_1"
    assert namer.fresh("backend.eps") == "%backend_eps"
    assert namer.fresh("0x") == "%_0x"
    assert namer.fresh_from([ssa_base("factor")] * 2) == ["%factor_2", "%factor_3"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=6), min_size=1, max_size=5))
def test_value_names_never_start_with_a_digit(hints):
    """So the file's names that do (``%0`` ... ``%N``, most of an export's) can never clash
    with them, and the scan does not collect them."""
    names = ValueNamer(set()).fresh_from([ssa_base(hint) for hint in hints])
    assert all(name.startswith("%") and not name[1:2].isdigit() for name in names)


def _first_free(taken: set[str], base: str) -> str:
    """The definition: the first of ``base``, ``base_1``, ... not taken."""
    name, counter = base, 0
    while name in taken:
        counter += 1
        name = f"{base}_{counter}"
    return name


# Bases and taken names from a few stems and suffixes, so that they collide: a base that
# is another base's candidate (x_1), taken names among the candidates, added ones later.
_NAMES = st.sampled_from(["x", "x_1", "x_2", "x_1_1", "y", "y_3", "x_01", "_", "_1", "z"])


@settings(max_examples=400, deadline=None)
@given(
    st.sets(_NAMES, max_size=4),
    st.lists(st.tuples(st.booleans(), st.lists(_NAMES, min_size=1, max_size=3)), max_size=12),
)
def test_a_name_pool_hands_out_the_first_free_name(taken, steps):
    """Each name handed out is the first of its base's candidates that is taken neither
    outside, nor by ``add``, nor by an earlier claim (the stems' short cut included), for
    bases that are one another's candidates and names added between claims."""
    pool = NamePool(set(taken))
    seen = set(taken)
    for is_add, names in steps:
        if is_add:
            pool.add(names[0])
            seen.add(names[0])
            continue
        expected = []
        for base in names:
            expected.append(_first_free(seen, base))
            seen.add(expected[-1])
        assert pool.claim_all(names, "%") == [f"%{name}" for name in expected]
