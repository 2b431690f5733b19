"""Make the helper modules in tests/ importable, the checkout's package take precedence, skip
(or, under CI=true, fail) tests whose native tools are missing, and share the session-wide
kernel library."""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS.parent))


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``toolchain(*tools)`` runs only when its tools are installed (a bare
    marker: ``mlir_tools.LLVM_TOOLS``, the compiled path's upstream MLIR and clang)."""
    from mlir_tools import LLVM_TOOLS, require_tool

    needed: dict[str, None] = {}
    for marker in item.iter_markers("toolchain"):
        needed.update(dict.fromkeys(marker.args or LLVM_TOOLS))
    for name in needed:
        require_tool(name)


@pytest.fixture(scope="session")
def _cache_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("rewriter-cache")


@pytest.fixture(autouse=True)
def _own_compile_cache(request: pytest.FixtureRequest, _cache_root: Path, monkeypatch) -> None:
    """Every test has a compile cache of its own ($REWRITER_CACHE_DIR, made when first
    written): the user's is never touched, and a compile in one test is never served by
    another test's (one that changed the pipeline's Python code, which the key does not
    cover)."""
    import hashlib

    name = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:16]
    monkeypatch.setenv("REWRITER_CACHE_DIR", str(_cache_root / name))


@pytest.fixture(autouse=True)
def _jax_x64_mode_kept():
    """A test that leaves jax's global x64 mode changed (a library that turns it on as it
    is imported: klujax) changes the tests after it, in whatever order pytest-xdist runs
    them: it is put back, and the test that changed it fails."""
    jax = sys.modules.get("jax")
    before = None if jax is None else jax.config.jax_enable_x64
    yield
    if jax is not None and jax.config.jax_enable_x64 != before:
        jax.config.update("jax_enable_x64", before)
        pytest.fail(f"the test left jax's x64 mode {not before}, not {before} as it found it")


@pytest.fixture(scope="session")
def kernel_library(tmp_path_factory) -> Path:
    """samples/kernels built once per session with cffi, its handlers registered with JAX."""
    from kernel_library import build_kernel_library, register_with_jax
    from mlir_tools import require_tool

    require_tool("gcc")  # cffi compiles the C++ kernels with the C compiler's driver
    require_tool("g++")

    path = build_kernel_library(tmp_path_factory.mktemp("kernels"))
    register_with_jax(path)
    return path


@pytest.fixture
def shaped_lines(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The lines validations shape (``LineShapes.of``) while the test runs, in order."""
    from rewriter.syntax import validation

    shaped: list[str] = []
    shape_of = validation.LineShapes.of

    def counted(self: validation.LineShapes, line: str, offset: int = -1) -> str:
        shaped.append(line)
        return shape_of(self, line, offset)

    monkeypatch.setattr(validation.LineShapes, "of", counted)
    return shaped


@pytest.fixture
def lexed_lines(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The lines validations lex (``_Parser.run``) while the test runs, in order: those
    no remembered outcome answered."""
    from rewriter.syntax import validation

    lexed: list[str] = []
    run = validation._Parser.run

    def counted(self: validation._Parser, text: str, start: int, end: int, stack: tuple[int, ...]):
        lexed.append(text[start:end])
        return run(self, text, start, end, stack)

    monkeypatch.setattr(validation._Parser, "run", counted)
    return lexed
