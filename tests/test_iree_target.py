"""What ``rewriter.iree`` compiles for: this machine's CPU by default, another on request, and
f64 math that IREE's embedded linking cannot link.

The target is read from what ``iree-compile`` made of it: the ``cpu`` and ``cpu_features``
of the executables' ``hal.executable.target`` (dumped with
``--iree-hal-dump-executable-sources-to``) and the executable format recorded in the
``.vmfb`` (``iree-dump-module``: ``embedded-elf-x86_64``, ``embedded-elf-arm_64``,
``system-elf-x86_64``). No test here is timed; ``benchmarks/speed.py`` shows the speed.
"""

from __future__ import annotations

import platform
import re
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from mlir_tools import iree_tool

import rewriter
from rewriter.iree import BuildError, compile_module, load, target_flags
from rewriter.iree.build import CONST_EVAL_OFF, SYSTEM_LINKING, _flags_for_libm

ROOT = Path(__file__).resolve().parent.parent
# IREE's name of this machine's architecture in executable formats (embedded-elf-x86_64).
ARCH = {"x86_64": "x86_64", "AMD64": "x86_64", "aarch64": "arm_64", "arm64": "arm_64"}[
    platform.machine()
]
# Instruction sets that LLVM's host CPU description includes when the CPU has them.
VECTOR_FEATURES = ("avx", "avx2", "fma", "avx512f")


def small_program(x, w):
    return jnp.tanh(x) @ w + 1.0


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    """A small jax program (elementwise math and a matmul), rewritten with --abi iree."""
    x = np.ones((8, 16), np.float32)
    w = np.ones((16, 4), np.float32)
    text = jax.export.export(jax.jit(small_program))(x, w).mlir_module()
    path = tmp_path_factory.mktemp("target") / "small.iree.mlir"
    path.write_text(rewriter.rewrite(text, abi="iree").text)
    return path


def executable_targets(source: Path, folder: Path, **options) -> set[tuple[str, str]]:
    """(cpu, cpu_features) of every executable ``compile_module`` makes of ``source``."""
    dump = folder / "sources"
    compile_module(source, **options, extra_args=(f"--iree-hal-dump-executable-sources-to={dump}",))
    found = set()
    for path in dump.glob("*.mlir"):
        found |= set(re.findall(r'cpu = "([^"]*)", cpu_features = "([^"]*)"', path.read_text()))
    assert found, "no executable target in the dumped sources"
    return found


def executable_formats(vmfb: Path) -> set[str]:
    """The executable formats a .vmfb holds, as iree-dump-module shows them."""
    done = subprocess.run(
        [iree_tool("iree-dump-module"), "--output=metadata", str(vmfb)],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(re.findall(r"`((?:embedded|system)-elf-\w+)`", done.stdout))


def host_vector_features() -> set[str]:
    """The instruction sets of ``VECTOR_FEATURES`` this CPU has, from /proc/cpuinfo."""
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        return set()
    flags = re.search(r"^flags\s*:(.*)$", cpuinfo.read_text(), re.MULTILINE)
    return set(flags.group(1).split()) & set(VECTOR_FEATURES) if flags else set()


# ---------------------------------------------------------------- the target CPU


def test_target_flags():
    assert target_flags() == ("--iree-llvmcpu-target-cpu=host",)
    assert target_flags("generic") == ("--iree-llvmcpu-target-cpu=generic",)
    assert target_flags(triple="aarch64-linux-gnu") == (
        "--iree-llvmcpu-target-triple=aarch64-linux-gnu",
        "--iree-llvmcpu-target-cpu=generic",
    )
    assert target_flags("cortex-a76", "aarch64-linux-gnu")[1] == (
        "--iree-llvmcpu-target-cpu=cortex-a76"
    )


def test_default_target_is_this_cpu(program, tmp_path):
    ((cpu, features),) = executable_targets(program, tmp_path)
    assert cpu not in ("", "generic")
    enabled = set(re.findall(r"\+([\w.-]+)", features))
    assert host_vector_features() <= enabled


def test_generic_cpu_gives_portable_code(program, tmp_path):
    ((cpu, features),) = executable_targets(program, tmp_path, cpu="generic")
    assert cpu == "generic"
    assert not set(re.findall(r"\+([\w.-]+)", features)) & set(VECTOR_FEATURES)


def test_a_named_cpu_is_passed_through(program, tmp_path):
    ((cpu, features),) = executable_targets(program, tmp_path, cpu="x86-64-v3")
    assert cpu == "x86-64-v3"
    assert {"avx2", "fma"} <= set(re.findall(r"\+([\w.-]+)", features))


def test_later_compile_args_override_the_target(program, tmp_path):
    """``extra_args`` (``load``'s ``compile_args``) come last, and the last flag wins."""
    dump = tmp_path / "override"
    compile_module(
        program,
        extra_args=(
            "--iree-llvmcpu-target-cpu=generic",
            f"--iree-hal-dump-executable-sources-to={dump}",
        ),
    )
    text = "".join(p.read_text() for p in dump.glob("*.mlir"))
    assert set(re.findall(r'cpu = "([^"]*)"', text)) == {"generic"}


def test_cross_compiling_for_another_triple(program, tmp_path):
    vmfb = tmp_path / "arm.vmfb"
    compile_module(program, vmfb, triple="aarch64-linux-gnu")
    assert executable_formats(vmfb) == {"embedded-elf-arm_64"}
    compile_module(program, tmp_path / "here.vmfb")
    assert executable_formats(tmp_path / "here.vmfb") == {f"embedded-elf-{ARCH}"}


def run_iree_cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rewriter.iree", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_cli_options_choose_the_target(program, tmp_path):
    """``--cpu`` and ``--target-triple`` give what the API gives; the default differs."""
    outputs = {}
    for name, options in {
        "default": [],
        "generic": ["--cpu", "generic"],
        "arm": ["--target-triple", "aarch64-linux-gnu"],
    }.items():
        outputs[name] = tmp_path / f"{name}.vmfb"
        done = run_iree_cli(program, "-o", outputs[name], *options)
        assert done.returncode == 0, done.stderr
    generic, _ = compile_module(program, cpu="generic")
    assert outputs["generic"].read_bytes() == generic
    assert outputs["default"].read_bytes() != generic
    assert executable_formats(outputs["arm"]) == {"embedded-elf-arm_64"}


# ---------------------------------------------------------------- f64 math


def f64_math(x, y):
    """f64 functions that reach libm: those IREE's embedded musl lacks (sin, cos, tan,
    tanh, atan2) and those it has (exp, log, pow, ...), on well-conditioned inputs."""
    return (
        jnp.sin(x),
        jnp.cos(x),
        jnp.tan(x * 0.15),
        jnp.tanh(x),
        jnp.arctan2(x, y),
        jnp.exp(x),
        jnp.log(y),
        jnp.power(y, x * 0.1),
        jnp.expm1(x),
        jnp.log1p(y),
        jnp.sinh(x),
        jnp.cosh(x),
        jnp.arcsin(x * 0.09),
        jnp.arctan(x),
        jax.scipy.special.erf(x),
        jax.nn.sigmoid(x),
    )


# The functions above agree with XLA:CPU to within a few ulps (sin, cos, log, atan2, log1p
# exactly; the others up to 4.7e-16 relative, about 2 ulps), expm1 and sinh (which jax
# computes with expm1) too since IREE's f64 expm1, exp(x) - 1, is rewritten
# (rewriter/compile/expm1_log1p.py; it was 720 ulps off near 0). 2e-15 leaves room for
# 4 ulps either side. f64 cbrt, sign(x) * pow(|x|, 1/3) and a Newton step
# (rewriter/iree/exact_math.py), is within 1 ulp too.
F64_RTOL = 2e-15


@pytest.mark.toolchain("ld")
def test_f64_libm_functions_run_in_iree(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.uniform(-10, 10, 1024)
    y = rng.uniform(1e-3, 50, 1024)
    with jax.enable_x64(True):
        text = jax.export.export(jax.jit(f64_math))(x, y).mlir_module()
        expected = [np.asarray(e) for e in jax.jit(f64_math)(x, y)]
    assert re.search(r"stablehlo\.sine .*f64", text)
    source = tmp_path / "f64.iree.mlir"
    source.write_text(rewriter.rewrite(text, abi="iree").text)
    vmfb = tmp_path / "f64.vmfb"
    compile_module(source, vmfb)
    # sin and friends are not in the embedded linking's libm: a system library it is.
    assert executable_formats(vmfb) == {f"system-elf-{ARCH}"}
    got = load(vmfb, imports={}).main(x, y)
    assert len(got) == len(expected)
    for one, other in zip(got, expected, strict=True):
        assert one.dtype == np.float64
        np.testing.assert_allclose(one, other, rtol=F64_RTOL, atol=0)


def test_a_missing_system_linker_is_said_before_iree_compile_runs(tmp_path, monkeypatch):
    """Without ``ld`` on $PATH IREE cannot link the system library libm's ``sin`` needs,
    and failed with "sh: 1: -o: not found": the build says what to install instead."""
    with jax.enable_x64(True):
        text = jax.export.export(jax.jit(jnp.sin))(np.linspace(-3, 3, 64)).mlir_module()
    source = tmp_path / "sin.iree.mlir"
    source.write_text(rewriter.rewrite(text, abi="iree").text)
    monkeypatch.setenv("PATH", str(tmp_path))  # no ld (iree-compile is the wheel's)
    monkeypatch.delenv("IREE_LLVM_SYSTEM_LINKER_PATH", raising=False)
    with pytest.raises(
        BuildError,
        match=r"with `ld`, which is not on PATH: install it with "
        r"`apt-get install binutils`",
    ):
        compile_module(source, tmp_path / "sin.vmfb", cache=False)


def test_f64_functions_of_the_embedded_libm_stay_embedded(tmp_path):
    x = np.linspace(-3, 3, 64)
    with jax.enable_x64(True):
        text = jax.export.export(jax.jit(lambda v: jnp.exp(v) + jnp.log1p(v * v)))(x)
        expected = np.asarray(jax.jit(lambda v: jnp.exp(v) + jnp.log1p(v * v))(x))
    source = tmp_path / "exp.iree.mlir"
    source.write_text(rewriter.rewrite(text.mlir_module(), abi="iree").text)
    vmfb = tmp_path / "exp.vmfb"
    compile_module(source, vmfb)
    assert executable_formats(vmfb) == {f"embedded-elf-{ARCH}"}
    np.testing.assert_allclose(load(vmfb, imports={}).main(x), expected, rtol=F64_RTOL, atol=0)


def test_a_chosen_linking_is_not_changed(tmp_path):
    """With ``--iree-llvmcpu-link-embedded=true`` given, the missing ``sin`` is an error."""
    x = np.linspace(-3, 3, 64)
    with jax.enable_x64(True):
        text = jax.export.export(jax.jit(jnp.sin))(x).mlir_module()
    source = tmp_path / "sin.iree.mlir"
    source.write_text(rewriter.rewrite(text, abi="iree").text)
    with pytest.raises(BuildError, match="undefined symbol: sin"):
        compile_module(source, extra_args=("--iree-llvmcpu-link-embedded=true",))


def positional_encoding(x):
    """f64 ``sin`` of a constant expression, as a transformer's positional encoding: IREE
    evaluates it at compile time in an executable it links embedded, which lacks ``sin``."""
    return x * jnp.sin(jnp.arange(x.size, dtype=x.dtype) * 0.01)


def _positional_encoding_source(tmp_path: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    x = np.linspace(-3, 3, 1000)
    with jax.enable_x64(True):
        text = jax.export.export(jax.jit(positional_encoding))(x).mlir_module()
        expected = np.asarray(jax.jit(positional_encoding)(x))
    assert re.search(r"stablehlo\.sine .*f64", text)
    source = tmp_path / "encoding.iree.mlir"
    source.write_text(rewriter.rewrite(text, abi="iree").text)
    return source, x, expected


@pytest.mark.toolchain("ld")
def test_f64_libm_functions_of_constant_expressions_run_in_iree(tmp_path):
    """Without constant evaluation at compile time (whose executables failed to link:
    "undefined symbol: sin"), the module computes the expression when it is loaded, in an
    executable of its own linked as a system library (the system's linker)."""
    source, x, expected = _positional_encoding_source(tmp_path)
    vmfb = tmp_path / "encoding.vmfb"
    compile_module(source, vmfb)
    np.testing.assert_array_equal(load(vmfb, imports={}).main(x), expected)


def test_a_chosen_constant_evaluation_is_not_changed(tmp_path):
    """With ``--iree-opt-const-eval=true`` given, the missing ``sin`` is an error."""
    source, _, _ = _positional_encoding_source(tmp_path)
    with pytest.raises(BuildError, match="undefined symbol: sin"):
        compile_module(source, extra_args=("--iree-opt-const-eval=true",))


def test_f64_cbrt_keeps_zeros_infinities_and_nan(tmp_path):
    """IREE cannot compile f64 cbrt; rewriter.iree computes sign(x) * pow(|x|, 1/3)
    (rewriter/iree/exact_math.py), which must keep cbrt's special values. pow calls no
    libm function (rewriter/compile/power.py): the module stays embedded."""
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 8.0, -27.0, 1e-300, -1e300])
    with jax.enable_x64(True):
        text = jax.export.export(jax.jit(jnp.cbrt))(x).mlir_module()
        expected = np.asarray(jax.jit(jnp.cbrt)(x))
    source = tmp_path / "cbrt.iree.mlir"
    source.write_text(rewriter.rewrite(text, abi="iree").text)
    vmfb = tmp_path / "cbrt.vmfb"
    compile_module(source, vmfb)
    assert executable_formats(vmfb) == {f"embedded-elf-{ARCH}"}
    got = load(vmfb, imports={}).main(x)
    np.testing.assert_allclose(got, expected, rtol=F64_RTOL, atol=0)
    assert np.array_equal(np.signbit(got), np.signbit(expected))


@pytest.fixture(scope="module")
def f32_atan2(tmp_path_factory) -> Path:
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    text = jax.export.export(jax.jit(jnp.arctan2))(x, x[::-1]).mlir_module()
    source = tmp_path_factory.mktemp("atan2") / "atan2.iree.mlir"
    source.write_text(rewriter.rewrite(text, abi="iree").text)
    return source


@pytest.mark.toolchain("ld")
def test_f32_atan2_is_linked_with_libm_from_the_start(f32_atan2, tmp_path):
    """f32 atan2 is computed with libm's f64 atan2 (IREE's own is 16 ulp off XLA's), which
    the embedded linking lacks: the module is a system library."""
    vmfb = tmp_path / "atan2.vmfb"
    compile_module(f32_atan2, vmfb)
    assert executable_formats(vmfb) == {f"system-elf-{ARCH}"}


@pytest.mark.parametrize(
    ("options", "form"),
    [
        ({"extra_args": ("--iree-llvmcpu-link-embedded=true",)}, f"embedded-elf-{ARCH}"),
        ({"triple": "aarch64-linux-gnu"}, "embedded-elf-arm_64"),
    ],
)
def test_f32_atan2_stays_iree_s_own_where_no_system_library_can_be(
    f32_atan2, tmp_path, options, form
):
    """With embedded linking chosen, or cross-compiled, libm's atan2 cannot be linked: the
    module keeps IREE's f32 atan2 and compiles."""
    vmfb = tmp_path / "atan2.vmfb"
    compile_module(f32_atan2, vmfb, **options)
    assert executable_formats(vmfb) == {form}


def _lld_error(*callers: str, symbol: str = "sin") -> str:
    """iree-lld's error for ``symbol``, referenced from executables ``callers``."""
    references = "".join(
        f">>> referenced by -:5\n>>>               /tmp/module_linked-275bd6.o:({caller})\n"
        for caller in callers
    )
    return f"iree-lld: error: undefined symbol: {symbol}\n{references}Linking failed\n"


@pytest.mark.parametrize(
    ("stderr", "chosen", "flags"),
    [
        (_lld_error("main_dispatch_0_elementwise_1000_f64"), [], [SYSTEM_LINKING]),
        (_lld_error("jit_eval_39_dispatch_0_elementwise_1000_f64"), [], [CONST_EVAL_OFF]),
        (
            _lld_error("jit_eval_1_dispatch_0", "main_dispatch_2"),
            [],
            [CONST_EVAL_OFF, SYSTEM_LINKING],
        ),
        (_lld_error(), [], [SYSTEM_LINKING]),  # no caller named
        (_lld_error("main_dispatch_0", symbol="rw_kernel"), [], []),  # not libm's
        (_lld_error("jit_eval_3_dispatch_0"), ["--iree-opt-const-eval=true"], []),
        (_lld_error("main_dispatch_0"), [SYSTEM_LINKING], []),  # a retry's, or the caller's
        ("error: something else\n", [], []),
    ],
)
def test_flags_for_libm_follow_the_executables_that_call_it(stderr, chosen, flags):
    assert _flags_for_libm(stderr, ["iree-compile", *chosen]) == flags
