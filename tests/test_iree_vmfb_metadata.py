"""What ``rewriter.iree.load`` reads of a ``.vmfb``: its metadata (import signatures, BLAS
products, the driver's figures) comes from one run of ``iree-dump-module`` per load, which
starts a process (0.17 to 0.34 s on a busy 2-core machine)."""

from __future__ import annotations

import numpy as np
import pytest

import rewriter
from rewriter.iree import LoadError, build, compile_module, load

pytestmark = [pytest.mark.iree, pytest.mark.jax]


def plus_one(x):
    return x + 1


def compiled(tmp_path):
    source = tmp_path / "plus_one.iree.mlir"
    exported = rewriter.export(plus_one, np.zeros(8, np.float32)).original
    source.write_text(rewriter.rewrite(exported, abi="iree").text)
    vmfb = tmp_path / "plus_one.vmfb"
    compile_module(source, vmfb)
    return vmfb


def count_dumps(monkeypatch) -> list[list[str]]:
    """The iree-dump-module commands run from now on (they still run)."""
    runs: list[list[str]] = []
    run = build._run

    def counted(command):
        if "iree-dump-module" in command[0]:
            runs.append(command)
        return run(command)

    monkeypatch.setattr(build, "_run", counted)
    return runs


@pytest.mark.parametrize("driver", [None, "local-task"])
def test_loading_a_vmfb_runs_iree_dump_module_once(tmp_path, monkeypatch, driver):
    vmfb = compiled(tmp_path)
    runs = count_dumps(monkeypatch)
    model = load(vmfb, imports={}, driver=driver)
    assert len(runs) == 1, runs
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(model.main(x), x + 1)


def test_a_file_that_is_no_vmfb_is_refused_before_anything_runs(tmp_path, monkeypatch):
    fake = tmp_path / "fake.vmfb"
    fake.write_bytes(b"not a module")
    runs = count_dumps(monkeypatch)
    with pytest.raises(LoadError, match=r"fake\.vmfb: not an IREE module"):
        load(fake, imports={})
    assert len(runs) == 1


def test_a_missing_vmfb_cannot_be_read(tmp_path):
    with pytest.raises(LoadError, match=r"none\.vmfb: cannot read: No such file"):
        load(tmp_path / "none.vmfb", imports={})
