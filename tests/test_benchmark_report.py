"""``benchmarks/report.py``: a script's ``--markdown`` writes what it printed into its own
section of benchmarks/README.md, and touches nothing else of the file."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import report  # noqa: E402

# Every script whose section the README holds.
WRITERS = [
    "run",
    "call_dense",
    "round_trip",
    "speed",
    "shape_sweep",
    "compile_speed",
    "compile_time",
    "call_overhead",
    "sort_speed",
    "op_complexity",
    "trig_speed",
    "math_speed",
    "sum_accuracy",
    "symbolic_batch",
    "wide_calls",
]


def test_every_writer_has_its_section_and_its_option():
    text = (ROOT / "benchmarks" / "README.md").read_text()
    for name in WRITERS:
        begin = f"<!-- {name}: written by benchmarks/{name}.py --markdown -->"
        assert text.count(begin) == 1 and text.count(f"<!-- end {name} -->") == 1, name
        source = (ROOT / "benchmarks" / f"{name}.py").read_text()
        assert '"--markdown"' in source and f'figures("{name}"' in source, name
    sections = set(re.findall(r"<!-- (\w+): written by", text))
    assert sections == set(WRITERS)


def test_a_section_is_replaced_and_the_rest_kept_byte_for_byte(tmp_path: Path, monkeypatch):
    readme = tmp_path / "README.md"
    before = "# B\n\ntext before\n<!-- x: written by benchmarks/x.py --markdown -->\nold\n"
    after = (
        "<!-- end x -->\n\n## y\n"
        "<!-- y: written by benchmarks/y.py --markdown -->\nkeep\n<!-- end y -->\n"
    )
    readme.write_text(before + after)
    monkeypatch.setattr(report, "README", readme)
    printed = "machine line\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\nnote after\n"
    report.write_section("x", "python benchmarks/x.py --calls 5", printed)
    assert readme.read_text() == (
        "# B\n\ntext before\n<!-- x: written by benchmarks/x.py --markdown -->\n"
        "`python benchmarks/x.py --calls 5` printed:\n\n"
        "machine line\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n\nnote after\n\n" + after
    )


def test_a_missing_section_is_an_error_and_writes_nothing(tmp_path: Path, monkeypatch):
    readme = tmp_path / "README.md"
    readme.write_text("# nothing here\n")
    monkeypatch.setattr(report, "README", readme)
    with pytest.raises(SystemExit, match="has no section"):
        report.write_section("x", "python benchmarks/x.py", "| a |\n")
    assert readme.read_text() == "# nothing here\n"


def test_figures_prints_the_machine_and_writes_what_the_block_printed(
    tmp_path: Path, monkeypatch, capsys
):
    readme = tmp_path / "README.md"
    readme.write_text("<!-- z: written by benchmarks/z.py --markdown -->\n<!-- end z -->\n")
    monkeypatch.setattr(report, "README", readme)
    monkeypatch.setattr(sys, "argv", ["benchmarks/z.py", "--markdown"])
    with report.figures("z", markdown=True):
        print(report.header("p", "q"))
        print(report.row(1, "2.50"))
    shown = capsys.readouterr().out
    written = readme.read_text()
    assert "| p | q |\n| --- | --- |\n| 1 | 2.50 |" in shown
    assert "| p | q |\n| --- | --- |\n| 1 | 2.50 |" in written
    assert re.search(r"\d{4}-\d\d-\d\d, .*, \d+ cores.*load average [\d.]+ at the start", written)
    assert re.search(r"load average [\d.]+ at the end", written)
    assert "`python benchmarks/z.py` printed:" in written
