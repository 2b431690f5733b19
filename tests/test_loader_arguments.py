"""The argument matrix of both loaders (tests/argument_matrix.py): every dtype x every kind of
argument gives the documented result or a clear exception, never a crash.

One module with a function per element type is compiled once per path. The arguments that
convert run here and must come back as the parameter's dtype, with the values numpy's
conversion gives; the arguments that are refused run in a child process per path (a
crash there fails the cases, not pytest) and must raise the documented class of error
with a message naming the function and the argument. Both paths give the same messages.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from argument_matrix import DTYPES, cases, expected, function_name, module_text

ROOT = Path(__file__).resolve().parent.parent
MATRIX = Path(__file__).resolve().parent / "argument_matrix.py"
CASES = cases()
CONVERTED = [c for c in CASES if c.error is None]
REFUSED = [c for c in CASES if c.error is not None]
PATHS = [
    pytest.param("compiled", marks=[pytest.mark.toolchain, pytest.mark.iree]),
    pytest.param("iree", marks=[pytest.mark.iree]),
]


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> dict[str, Path]:
    """The module compiled for a path, on first use: a shared object or a .vmfb."""
    folder = tmp_path_factory.mktemp("arguments")
    source = folder / "arguments.mlir"
    source.write_text(module_text())
    built: dict[str, Path] = {}

    def get(kind: str) -> Path:
        if kind not in built:
            if kind == "compiled":
                from rewriter.compile import compile_module

                compile_module(source, folder / "libarguments.so")
                built[kind] = folder / "libarguments.so"
            else:
                from rewriter.iree import compile_module as compile_vmfb

                compile_vmfb(source, folder / "arguments.vmfb")
                built[kind] = folder / "arguments.vmfb"
        return built[kind]

    return get  # type: ignore[return-value]


@pytest.fixture(scope="module")
def loaded(artifacts):
    from argument_matrix import load

    modules = {}

    def get(kind: str):
        if kind not in modules:
            modules[kind] = load(kind, str(artifacts(kind)))
        return modules[kind]

    return get


@pytest.fixture(scope="module")
def refused_outcomes(artifacts):
    """[class, message] of every refused case, by id, as a child process saw them."""
    outcomes: dict[str, dict[str, list[str]]] = {}

    def get(kind: str) -> dict[str, list[str]]:
        if kind not in outcomes:
            run = subprocess.run(
                [sys.executable, str(MATRIX), kind, str(artifacts(kind))],
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},  # this checkout's package
                capture_output=True,
                text=True,
                timeout=600,
            )
            lines = [json.loads(line) for line in run.stdout.splitlines()]
            outcomes[kind] = {case_id: [name, message] for case_id, name, message in lines}
            if run.returncode != 0:  # a crash: the cases it did not reach fail below
                outcomes[kind]["<exit>"] = [str(run.returncode), run.stderr[-2000:]]
        return outcomes[kind]

    return get


def test_the_matrix_covers_every_dtype_both_ways():
    for element in DTYPES:
        assert any(c.element == element for c in CONVERTED)
        assert any(c.element == element for c in REFUSED)
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("kind", PATHS)
@pytest.mark.parametrize("case", CONVERTED, ids=lambda c: c.id)
def test_arguments_that_convert_exactly_are_taken(loaded, kind, case):
    function = loaded(kind)[function_name(case.element)]
    arguments = case.arguments()
    got = function(*arguments)
    want = expected(*arguments, case.element)
    assert len(got) == len(want)
    for one, other in zip(got, want, strict=True):
        assert one.dtype == DTYPES[case.element] and one.shape == other.shape
        assert one.tobytes() == np.ascontiguousarray(other).tobytes()


@pytest.mark.parametrize("kind", PATHS)
@pytest.mark.parametrize("case", REFUSED, ids=lambda c: c.id)
def test_arguments_that_do_not_convert_raise_a_clear_error(refused_outcomes, kind, case):
    outcomes = refused_outcomes(kind)
    assert case.id in outcomes, (
        f"the child process ended before this case: {outcomes.get('<exit>')}"
    )
    name, message = outcomes[case.id]
    assert name == case.error, message
    assert case.message in message


@pytest.mark.parametrize("kind", PATHS)
def test_the_child_process_ended_cleanly(refused_outcomes, kind):
    assert "<exit>" not in refused_outcomes(kind)


def test_both_paths_say_the_same(refused_outcomes):
    pytest.importorskip("iree.runtime")
    from mlir_tools import require_tool

    require_tool("clang-22")
    compiled, iree = refused_outcomes("compiled"), refused_outcomes("iree")
    assert compiled == iree
