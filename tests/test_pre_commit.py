"""The hooks of .pre-commit-hooks.yaml, run by the real ``pre-commit`` in temporary git repos.

The hook repository is a copy of this checkout's working tree (tracked files and new ones
that are not ignored) committed in a temporary git repo, so uncommitted changes are what is
tested (``pre-commit try-repo`` would miss the untracked hooks file, and it installs the
hook environment afresh on every call). Every pre-commit call shares one PRE_COMMIT_HOME,
so the environment is built once per session; caches go to temporary directories too.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = [pytest.mark.toolchain("git"), pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
RMS_NORM = SAMPLES / "rms_norm" / "rms_norm.mlir"
RMS_NORM_REWRITTEN = SAMPLES / "rms_norm" / "rms_norm.rewritten.mlir"
TWO_TARGETS = SAMPLES / "two_targets" / "two_targets.mlir"
HOOKS_FILE = ROOT / ".pre-commit-hooks.yaml"

REWRITE = "stablehlo-rewrite"
CHECK = "stablehlo-rewrite-check"

# A call that cannot be rewritten (tuple results are not supported yet).
TUPLE_MODULE = (Path(__file__).resolve().parent / "data" / "tuple_call.mlir").read_text()


def call_line(text: str, target: str) -> int:
    """1-based line of the custom call to @target (computed, never copied from the tool)."""
    (line,) = [
        number
        for number, content in enumerate(text.split("\n"), 1)
        if f"stablehlo.custom_call @{target}(" in content
    ]
    return line


def truncated_in_function(text: str) -> bytes:
    """The export cut right after its custom call line: the function body is never closed."""
    lines = text.split("\n")
    return "\n".join(lines[: call_line(text, "rms_norm")]).encode("utf-8") + b"\n"


def git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=120
    ).stdout


# ---------------------------------------------------------------- session fixtures


@pytest.fixture(scope="session")
def environment(tmp_path_factory) -> dict[str, str]:
    """Environment for git and pre-commit: nothing read from or written to the user's home."""
    if importlib.util.find_spec("pre_commit") is None:
        pytest.fail(
            "pre-commit is not installed in this Python environment: pip install pre-commit"
        )
    base = tmp_path_factory.mktemp("pre-commit-home")
    gitconfig = base / "gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = rewriter tests\n\temail = tests@rewriter.invalid\n"
        "[commit]\n\tgpgsign = false\n[init]\n\tdefaultBranch = main\n"
    )
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GIT_", "PRE_COMMIT", "VIRTUALENV_"))
    }
    env.update(
        PRE_COMMIT_HOME=str(base / "pre-commit"),
        PRE_COMMIT_COLOR="never",
        XDG_CACHE_HOME=str(base / "cache"),  # pip's cache
        XDG_DATA_HOME=str(base / "data"),
        VIRTUALENV_OVERRIDE_APP_DATA=str(base / "virtualenv"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        GIT_CONFIG_GLOBAL=str(gitconfig),
        GIT_CONFIG_NOSYSTEM="1",
        NO_COLOR="1",
    )
    return env


@dataclass(frozen=True)
class HookRepo:
    path: Path
    rev: str


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory, environment) -> HookRepo:
    """This checkout's working tree, committed in a temporary git repo."""
    assert HOOKS_FILE.is_file(), f"{HOOKS_FILE} is missing"
    path = tmp_path_factory.mktemp("hook-repo") / "rewriter"
    # Tracked files and new ones not ignored (.pre-commit-hooks.yaml, a new module): what
    # `git add -A && git commit` would hold, without touching this checkout's index.
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    names = {name for name in listed if name and (ROOT / name).is_file()}
    assert HOOKS_FILE.name in names
    for name in sorted(names):
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, path / name)
    git("init", "-q", cwd=path, env=environment)
    git("add", "-A", cwd=path, env=environment)
    git("commit", "-q", "-m", "working tree of the checkout", cwd=path, env=environment)
    rev = git("rev-parse", "HEAD", cwd=path, env=environment).strip()
    return HookRepo(path, rev)


def run_pre_commit(
    cwd: Path, environment: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )


def config_text(hook_repo: HookRepo, hooks: list[dict]) -> str:
    # JSON is YAML: no quoting questions for paths or globs.
    return json.dumps(
        {"repos": [{"repo": str(hook_repo.path), "rev": hook_repo.rev, "hooks": hooks}]}
    )


@pytest.fixture(scope="session")
def installed(tmp_path_factory, environment, hook_repo) -> HookRepo:
    """The hook environment, installed once per session (pre-commit caches it per repo+rev)."""
    project = tmp_path_factory.mktemp("install")
    git("init", "-q", cwd=project, env=environment)
    (project / ".pre-commit-config.yaml").write_text(
        config_text(hook_repo, [{"id": REWRITE}, {"id": CHECK}])
    )
    git("add", "-A", cwd=project, env=environment)
    result = run_pre_commit(project, environment, "install-hooks")
    assert result.returncode == 0, result.stdout + result.stderr
    return hook_repo


# ---------------------------------------------------------------- a repo of artifacts


@dataclass
class Artifacts:
    """A git repository of exported artifacts with a .pre-commit-config.yaml."""

    path: Path
    environment: dict[str, str]
    hook_repo: HookRepo

    def configure(self, hooks: list[dict]) -> None:
        self.write(".pre-commit-config.yaml", config_text(self.hook_repo, hooks).encode())

    def write(self, name: str, data: bytes) -> Path:
        destination = self.path / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(data)
        git("add", "--", name, cwd=self.path, env=self.environment)
        return destination

    def remove(self, name: str) -> None:
        git("rm", "-q", "-f", "--", name, cwd=self.path, env=self.environment)

    def run(self, *args: str) -> tuple[int, str]:
        """``pre-commit run ARGS --all-files``: exit status and all output."""
        result = run_pre_commit(self.path, self.environment, "run", *args, "--all-files")
        return result.returncode, result.stdout + result.stderr

    def snapshot(self) -> dict[str, bytes]:
        return {
            str(path.relative_to(self.path)): path.read_bytes()
            for path in sorted(self.path.rglob("*"))
            if path.is_file() and ".git" not in path.relative_to(self.path).parts
        }

    def untracked(self) -> list[str]:
        status = git(
            "status", "--porcelain", "--untracked-files=all", cwd=self.path, env=self.environment
        )
        return [line for line in status.splitlines() if line.startswith("??")]


@pytest.fixture
def artifacts(tmp_path, environment, installed) -> Artifacts:
    path = tmp_path / "exports-repo"
    path.mkdir()
    git("init", "-q", cwd=path, env=environment)
    return Artifacts(path, environment, installed)


DIAGNOSTIC = re.compile(r"^(?P<file>\S+?):(?P<line>\d+):(?P<col>\d+): error: ", re.MULTILINE)


# ---------------------------------------------------------------- tests


def test_manifest_declares_both_hooks_for_mlir_files() -> None:
    import yaml

    hooks = {hook["id"]: hook for hook in yaml.safe_load(HOOKS_FILE.read_text())}
    assert set(hooks) == {REWRITE, CHECK}
    assert hooks[REWRITE]["entry"] == "stablehlo-rewrite --in-place"
    assert hooks[CHECK]["entry"] == "stablehlo-rewrite --check"
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert re.search(hook["files"], "exports/model.mlir")
        assert not re.search(hook["files"], "exports/model.mlir.bak")


def test_rewrite_hook_rewrites_several_artifacts_and_reports_a_broken_one(
    artifacts: Artifacts,
) -> None:
    artifacts.configure([{"id": REWRITE}])
    rms_text = RMS_NORM.read_text(encoding="utf-8")
    broken = truncated_in_function(rms_text)
    needs = artifacts.write("exports/needs_rewrite.mlir", RMS_NORM.read_bytes())
    done = artifacts.write("exports/already_rewritten.mlir", RMS_NORM_REWRITTEN.read_bytes())
    bad = artifacts.write("exports/truncated.mlir", broken)

    status, output = artifacts.run()
    assert status == 1, output
    assert "- hook id: stablehlo-rewrite" in output
    assert "files were modified by this hook" in output, output
    assert "Traceback" not in output, output
    # The broken file's diagnostic, MLIR style; no other file has one.
    files = {match["file"] for match in DIAGNOSTIC.finditer(output)}
    assert files == {"exports/truncated.mlir"}, output
    # The others were still processed; nothing was corrupted or left behind.
    assert needs.read_bytes() == RMS_NORM_REWRITTEN.read_bytes()
    assert done.read_bytes() == RMS_NORM_REWRITTEN.read_bytes()
    assert bad.read_bytes() == broken
    assert artifacts.untracked() == []

    # Still broken: fails again, but this time changes nothing.
    before = artifacts.snapshot()
    status, output = artifacts.run()
    assert status == 1, output
    assert "files were modified by this hook" not in output, output
    assert artifacts.snapshot() == before

    # Without the broken file, the second run passes and changes nothing.
    artifacts.remove("exports/truncated.mlir")
    before = artifacts.snapshot()
    status, output = artifacts.run()
    assert status == 0, output
    assert artifacts.snapshot() == before


def test_rewrite_hook_passes_when_nothing_needs_rewriting(artifacts: Artifacts) -> None:
    artifacts.configure([{"id": REWRITE}])
    artifacts.write("a.rewritten.mlir", RMS_NORM_REWRITTEN.read_bytes())
    artifacts.write("notes.txt", b"not an artifact: stablehlo.custom_call @rms_norm(\n")
    before = artifacts.snapshot()
    status, output = artifacts.run()
    assert status == 0, output
    assert artifacts.snapshot() == before


def test_rewrite_hook_with_many_files_in_parallel(artifacts: Artifacts) -> None:
    """More files than one process takes: pre-commit may split them over several calls."""
    artifacts.configure([{"id": REWRITE}])
    names = [f"models/m{index}.mlir" for index in range(11)]
    for name in names:
        artifacts.write(name, RMS_NORM.read_bytes())
    status, output = artifacts.run()
    assert status == 1, output
    for name in names:
        assert (artifacts.path / name).read_bytes() == RMS_NORM_REWRITTEN.read_bytes(), name
    status, output = artifacts.run()
    assert status == 0, output


def test_check_hook_lists_calls_and_writes_nothing(artifacts: Artifacts) -> None:
    artifacts.configure([{"id": CHECK}])
    rms_text = RMS_NORM.read_text(encoding="utf-8")
    artifacts.write("exports/needs_rewrite.mlir", RMS_NORM.read_bytes())
    artifacts.write("exports/already_rewritten.mlir", RMS_NORM_REWRITTEN.read_bytes())
    artifacts.write("exports/tuple.mlir", TUPLE_MODULE.encode())
    artifacts.write("exports/truncated.mlir", truncated_in_function(rms_text))
    before = artifacts.snapshot()

    status, output = artifacts.run()
    assert status == 1, output
    assert "- hook id: stablehlo-rewrite-check" in output
    assert "files were modified by this hook" not in output, output
    assert "Traceback" not in output, output
    lines = output.splitlines()
    line = call_line(rms_text, "rms_norm")
    expected = f"exports/needs_rewrite.mlir:{line}: @rms_norm: would be rewritten as @rms_norm"
    assert expected in lines, output
    tuple_line = call_line(TUPLE_MODULE, "pack")
    assert any(
        text.startswith(f"exports/tuple.mlir:{tuple_line}: @pack: cannot be rewritten: ")
        and "tuple" in text
        for text in lines
    ), output
    assert not any(text.startswith("exports/already_rewritten.mlir:") for text in lines), output
    files = {match["file"] for match in DIAGNOSTIC.finditer(output)}
    assert "exports/truncated.mlir" in files, output
    assert artifacts.snapshot() == before
    assert artifacts.untracked() == []


def test_check_hook_passes_on_rewritten_artifacts(artifacts: Artifacts) -> None:
    artifacts.configure([{"id": CHECK}])
    artifacts.write("one.mlir", RMS_NORM_REWRITTEN.read_bytes())
    artifacts.write("sub/two.mlir", RMS_NORM_REWRITTEN.read_bytes())
    before = artifacts.snapshot()
    status, output = artifacts.run()
    assert status == 0, output
    assert artifacts.snapshot() == before


def test_args_are_the_command_line_options(artifacts: Artifacts) -> None:
    expected = subprocess.run(
        [sys.executable, "-m", "rewriter", "--target", "offset", str(TWO_TARGETS)],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=120,
    ).stdout
    assert "custom_call @scale(" in expected.decode()
    assert "custom_call @offset(" not in expected.decode()

    artifacts.configure([{"id": REWRITE, "args": ["--target", "offset"]}])
    model = artifacts.write("two_targets.mlir", TWO_TARGETS.read_bytes())
    status, output = artifacts.run()
    assert status == 1, output
    assert model.read_bytes() == expected
    rewritten = model.read_text(encoding="utf-8")
    assert "stablehlo.custom_call @scale(" in rewritten
    assert "stablehlo.custom_call @offset(" not in rewritten
    assert "func.call @offset(" in rewritten and "func.call @scale(" not in rewritten
    status, output = artifacts.run()
    assert status == 0, output

    # The check hook with the same args passes; without them, it still lists @scale.
    artifacts.configure([{"id": CHECK, "args": ["--target", "offset"]}])
    status, output = artifacts.run()
    assert status == 0, output
    artifacts.configure([{"id": CHECK}])
    status, output = artifacts.run()
    assert status == 1, output
    scale = (
        f"two_targets.mlir:{call_line(rewritten, 'scale')}: @scale: would be rewritten as @scale"
    )
    assert scale in output.splitlines(), output
    assert "@offset" not in output, output
    assert model.read_bytes() == expected


def readme_config() -> dict:
    import yaml

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Pre-commit\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)
    return yaml.safe_load(block)


def test_readme_config_works_as_given(artifacts: Artifacts) -> None:
    """The README's .pre-commit-config.yaml, with only repo and rev filled in."""
    config = readme_config()
    (repo,) = config["repos"]
    assert "URL of this repository" in repo["repo"]
    repo["repo"], repo["rev"] = str(artifacts.hook_repo.path), artifacts.hook_repo.rev
    artifacts.write(".pre-commit-config.yaml", json.dumps(config).encode())
    model = artifacts.write("model.mlir", RMS_NORM.read_bytes())

    status, output = artifacts.run("--hook-stage", "manual", CHECK)
    assert status == 1, output
    assert "would be rewritten as @rms_norm" in output, output
    assert model.read_bytes() == RMS_NORM.read_bytes()

    status, output = artifacts.run()
    assert status == 1, output
    assert model.read_bytes() == RMS_NORM_REWRITTEN.read_bytes()
    status, output = artifacts.run()
    assert status == 0, output
    status, output = artifacts.run("--hook-stage", "manual", CHECK)
    assert status == 0, output
