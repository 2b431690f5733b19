"""The external tools of the compiled path, and running one stage of it.

StableHLO -> linalg -> bufferized loops happens in IREE's iree-opt (pip
``iree-base-compiler``); before fusion, a cheap elementwise loop that several loops read
gets a copy for each (``producer_copies.py``). Between bufferization and loops, in IREE's
Python bindings: the matrix products and 2-D convolutions become BLAS calls and the sorts
jax writes calls of a stable sort (``library_calls.py``, ``sorts.py``); reductions over
outer dimensions get a contiguous innermost loop (``loop_order.py``); f64 exp and tanh
become polynomials rather than libm calls (``f64_math.py``), a short loop of elementwise
updates one pass with the loop inside each element (``carried_elementwise.py``), an argmax
or argmin over a 1-D array two reductions (``index_extrema.py``), f32 and f64 maximum and
minimum LLVM's intrinsics (``float_extrema.py``), and sums along the innermost loop
reassociable (``vector_sums.py``): what LLVM then vectorizes. Then copies between views
become loops (``iree-codegen-memrefcopy-to-linalg``) rather than calls of MLIR's
element-by-element ``memrefCopy``. LLVM dialect, LLVM IR and the shared object come from
upstream MLIR and clang (Debian ``mlir-22-tools`` and ``clang-22``). The two MLIR versions
only agree on the generic op form, so the hand-over between them is printed generically,
its i1 constants bit-packed (``bit_packed_i1``).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from ..abi import bridge_dir
from ..inputs.streams import run_tool
from ..inputs.temporary import temporary_file
from .link_items import link_arguments
from .parallel_loops import async_passes, own_blocks

LLVM_VERSION = 22

INSTALL_HINTS = {
    "iree-opt": "pip install iree-base-compiler",
    f"mlir-opt-{LLVM_VERSION}": f"apt-get install mlir-{LLVM_VERSION}-tools",
    f"mlir-translate-{LLVM_VERSION}": f"apt-get install mlir-{LLVM_VERSION}-tools",
    f"clang-{LLVM_VERSION}": f"apt-get install clang-{LLVM_VERSION}",
    # a static library (-o NAME.a) only
    f"llvm-objcopy-{LLVM_VERSION}": f"apt-get install llvm-{LLVM_VERSION}",
    f"llvm-ar-{LLVM_VERSION}": f"apt-get install llvm-{LLVM_VERSION}",
}
# What every compile needs; a static library needs STATIC_TOOLS too.
PIPELINE_TOOLS: tuple[str, ...] = ("iree-opt", f"mlir-opt-{LLVM_VERSION}")
PIPELINE_TOOLS += (f"mlir-translate-{LLVM_VERSION}", f"clang-{LLVM_VERSION}")
STATIC_TOOLS = (f"llvm-objcopy-{LLVM_VERSION}", f"llvm-ar-{LLVM_VERSION}")

# The barriers that keep a sort whole (sorts.keep_marked_sorts_whole) have done their work
# once the input pipeline is over: iree-util-drop-compiler-hints removes them. Unit
# dimensions are folded before fusion (as IREE's own dispatch creation does): jax's
# ``x[i]`` indexes with ``i`` made ``N x 1``, and the reshapes between ``N`` and ``N x 1``
# kept the index arithmetic, the gather and what uses it as separate loops, each writing
# a buffer of N elements (the compiled ``x[i] + v`` made three passes, one at the end).
# An elementwise loop read by several others is then fused with them into one loop of
# several results: ``x.at[i].add(v)``'s wrapped indices, read by the clamp of the indices
# and by the masking of the updates (scatter_masks.py), made three loops that each wrote
# N elements; one loop reads the indices once and writes both.
# An expansion of a shape is moved above the elementwise ops it follows, so that they fuse
# into the op after it: the squares of ``(x * x).sum()`` summed in blocks
# (two_level_sums.py) are not written to memory and read again.
BUFFERIZE = (
    "builtin.module("
    "iree-util-drop-compiler-hints, "
    "func.func(iree-dispatch-creation-fold-unit-extent-dims-for-func, "
    "iree-dispatch-creation-bubble-up-expand-shapes, "
    "iree-dispatch-creation-elementwise-op-fusion, "
    "iree-dispatch-creation-fuse-multi-use-elementwise-producer), "
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops})"
)
# IREE's own ops (sort, scan, scatter, ...) become loops after the library calls, which
# replace some of them (sorts.py).
LOOPS = (
    "builtin.module(func.func(iree-linalg-ext-to-loops, iree-codegen-memrefcopy-to-linalg, "
    "iree-codegen-math-transform), convert-linalg-to-loops, "
    "func.func(iree-convert-unsupported-float-arith{enable-ext-trunc-emulation}))"
)
# On several threads the linalg ops become scf.parallel loops (parallel_loops.py).
PARALLEL_LOOPS = LOOPS.replace("convert-linalg-to-loops", "convert-linalg-to-parallel-loops")

# ownership-based deallocation makes the compiled code free what it allocates; results
# returned to the caller are owned by the caller (cloned where needed). Complex arithmetic
# becomes arith and math on the parts (complex-to-standard) before math is lowered; what is
# left (create, re, im, constants) goes to LLVM structs. bf16 arithmetic and math are done
# in f32 and rounded after each op (f16 is left to LLVM, which does the same), and bf16
# conversions become integer ops: LLVM would call __truncsfbf2, which libgcc before GCC 13
# lacks.
LOWER_TO_LLVM = (
    "builtin.module("
    "ownership-based-buffer-deallocation, canonicalize, buffer-deallocation-simplification, "
    "bufferization-lower-deallocations, convert-bufferization-to-memref, convert-scf-to-cf, "
    "expand-strided-metadata, lower-affine, convert-complex-to-standard, "
    "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}, "
    "math-extend-to-supported-types{extra-types=f16 target-type=f32}, "
    "convert-math-to-llvm, convert-math-to-libm, arith-expand{include-bf16}, "
    "finalize-memref-to-llvm, convert-arith-to-llvm, convert-complex-to-llvm, "
    "convert-func-to-llvm, convert-cf-to-llvm, reconcile-unrealized-casts)"
)


def _recomputed_producers(text: str) -> str:
    """``producer_copies.recomputed_producers``, imported when a compile runs this stage:
    a compile served from the cache imports no stage's module (tests/test_cached_startup.py)."""
    from .producer_copies import recomputed_producers

    return recomputed_producers(text)


# A constant of i1 elements written in hex: `dense<"0x0100...">` with its type.
_I1_HEX = re.compile(r'dense<"0x([0-9A-Fa-f]*)">(\s*:\s*(?:tensor|vector|memref)<([0-9x]*)xi1>)')


def bit_packed_i1(text: str) -> str:
    """``text`` with every i1 constant in hex written as ``mlir-opt-22`` reads it.

    IREE's MLIR prints an i1 constant of more than a few elements as hex with one byte per
    element (`dense<"0x01000001..."> : tensor<128xi1>`); upstream MLIR 22 reads i1 hex data
    bit-packed, eight elements a byte, the first in the lowest bit, and refuses the other
    ("elements hex data size is invalid for provided type"). Data of one byte per element
    is packed; up to eight elements, where one packed byte could be taken for a splat, the
    elements are written as a list (`dense<[true, false, ...]>`). Anything else is left.
    """

    def packed(match: re.Match[str]) -> str:
        data = bytes.fromhex(match.group(1))
        count = 1
        for size in filter(None, match.group(3).split("x")):
            count *= int(size)
        if len(data) != count or count < 2 or any(byte > 1 for byte in data):
            return match.group(0)
        if count <= 8:
            listed = ", ".join("true" if byte else "false" for byte in data)
            return f"dense<[{listed}]>{match.group(2)}"
        bits = bytearray((count + 7) // 8)
        for index, byte in enumerate(data):
            bits[index // 8] |= byte << (index % 8)
        return f'dense<"0x{bits.hex().upper()}">{match.group(2)}'

    return _I1_HEX.sub(packed, text)


# An LLVM IR multiply, add or subtract of floats (scalars or vectors), and its flags.
_FLOAT_OP = re.compile(
    r"(= f(?:mul|add|sub) )((?:(?:nnan|ninf|nsz|arcp|contract|afn|reassoc|fast) )*)"
)


def contractible(text: str) -> str:
    """``text`` (LLVM IR) with every float multiply, add and subtract marked ``contract``,
    so that LLVM fuses a multiply and the add or subtract of its product into one FMA
    where the CPU has one, as XLA's CPU compiler has LLVM do everywhere
    (``AllowFPOpFusion = Fast``: "always allow FMA fusion"). Without it ``a * b + c``
    rounds twice here and once under ``jax.jit``: the real part of a complex product
    differed from XLA's in the last bit (f32 and f64). clang's ``-ffp-contract=fast`` does
    not reach IR that clang reads as IR; the flag on each instruction does."""

    def marked(match: re.Match[str]) -> str:
        flags = match.group(2).split()
        if "contract" in flags or "fast" in flags:
            return match.group(0)
        return f"{match.group(1)}{match.group(2)}contract "

    return _FLOAT_OP.sub(marked, text)


class ToolchainError(Exception):
    """A tool is missing or a stage failed; the message says which and what to do."""


@dataclass(frozen=True)
class Stage:
    name: str
    tool: str
    arguments: tuple[str, ...]  # "{in}" and "{out}" are replaced by the stage's files
    output_suffix: str
    # applied to the tool's output text, which the stage's file then holds
    then: Callable[[str], str] | None = None


@dataclass(frozen=True)
class TextStage:
    """A stage done in this process: module text in, module text out."""

    name: str
    transform: Callable[[str], str]
    output_suffix: str = ".mlir"


def stages(
    library_calls: Callable[[str], str], locations: bool = False, threads: int = 1
) -> tuple[Stage | TextStage, ...]:
    """The stages in order; ``library_calls`` rewrites the bufferized module (BLAS calls,
    sorts). With ``locations`` the first two stages print them: the sorts that
    ``library_calls`` replaces are marked by their location (``sorts.py``). With
    ``threads`` above 1 the large parallel loops run on that many threads
    (``parallel_loops.py``); 1 is the one-thread pipeline."""
    first: tuple[Stage | TextStage, ...] = STAGES[:2]
    if locations:
        first = tuple(
            replace(s, arguments=("--mlir-print-debuginfo", *s.arguments)) for s in STAGES[:2]
        )
    last = STAGES[2:] if threads <= 1 else _threaded(threads)
    return (*first, TextStage("library-calls", library_calls), *last)


class _LoopBuffers:
    """One compile's ``loop_buffers.separate_buffers`` of its generic-form module, kept for
    its LLVM IR: the split loops' pointers are ``noalias`` when it passed. Imported when a
    compile runs these stages (tests/test_cached_startup.py)."""

    def __init__(self) -> None:
        self.apart = False

    def check(self, text: str) -> str:
        from .loop_buffers import separate_buffers

        self.apart = separate_buffers(text)
        return bit_packed_i1(text)

    def mark(self, text: str) -> str:
        text = own_blocks(contractible(text))
        if not self.apart:
            return text
        from .loop_buffers import noalias_bodies

        return noalias_bodies(text)


def _threaded(threads: int) -> tuple[Stage, ...]:
    """The stages after the library calls, with the loops on ``threads`` threads."""
    loops, lower, translate = STAGES[2:]
    lowering = LOWER_TO_LLVM.replace(
        "convert-bufferization-to-memref, ",
        f"convert-bufferization-to-memref, {async_passes(threads)}",
    )
    buffers = _LoopBuffers()
    return (
        replace(
            loops,
            arguments=tuple(a.replace(LOOPS, PARALLEL_LOOPS) for a in loops.arguments),
            then=buffers.check,
        ),
        replace(lower, arguments=(f"--pass-pipeline={lowering}", "{in}", "-o", "{out}")),
        replace(translate, then=buffers.mark),
    )


STAGES = (
    Stage(
        "stablehlo-to-linalg",
        "iree-opt",
        ("--iree-stablehlo-input-transformation-pipeline", "{in}", "-o", "{out}"),
        ".mlir",
        then=_recomputed_producers,
    ),
    Stage(
        "bufferize", "iree-opt", (f"--pass-pipeline={BUFFERIZE}", "{in}", "-o", "{out}"), ".mlir"
    ),
    Stage(
        "generic-form",
        "iree-opt",
        (f"--pass-pipeline={LOOPS}", "--mlir-print-op-generic", "{in}", "-o", "{out}"),
        ".mlir",
        then=bit_packed_i1,
    ),
    Stage(
        "lower-to-llvm",
        f"mlir-opt-{LLVM_VERSION}",
        (f"--pass-pipeline={LOWER_TO_LLVM}", "{in}", "-o", "{out}"),
        ".mlir",
    ),
    Stage(
        "translate",
        f"mlir-translate-{LLVM_VERSION}",
        ("--mlir-to-llvmir", "{in}", "-o", "{out}"),
        ".ll",
        then=contractible,
    ),
)


TOOL_PATH_VARIABLE = "REWRITER_TOOL_PATH"


def search_path() -> str:
    """Where tools are looked for: $REWRITER_TOOL_PATH if set, else $PATH, the folder of
    this Python's scripts (pip's iree-opt) and Debian's /usr/lib/llvm-22/bin."""
    if TOOL_PATH_VARIABLE in os.environ:
        return os.environ[TOOL_PATH_VARIABLE]
    folders = [
        os.environ.get("PATH", ""),
        str(Path(sys.executable).parent),
        f"/usr/lib/llvm-{LLVM_VERSION}/bin",
    ]
    return os.pathsep.join(folder for folder in folders if folder)


def first_tool_found(
    candidates: Iterable[tuple[str, str | None]], missing: Callable[[], Exception]
) -> str:
    """Absolute path of the first ``(name, search path)`` candidate found (a None search
    path is $PATH), tried in order; else raise ``missing()``. Both runners look tools up
    with it: what differs between them is only where they look and what they say."""
    for name, path in candidates:
        found = shutil.which(name, path=path)
        if found:
            return found
    raise missing()


def find_tool(name: str) -> str:
    """Absolute path of ``name``; a ToolchainError naming the package when it is missing.
    ``mlir-opt-22`` may also be Debian's unversioned ``/usr/lib/llvm-22/bin/mlir-opt``,
    and ``iree-opt`` is first the binary of the IREE whose Python bindings this process
    imports (``wheel_tools``), unless $REWRITER_TOOL_PATH is set (an explicit search path
    is taken literally)."""
    candidates: list[tuple[str, str | None]] = [(name, search_path())]
    if name == "iree-opt" and TOOL_PATH_VARIABLE not in os.environ:
        folder = wheel_tools()
        if folder is not None:
            candidates.insert(0, (name, folder))
    if name.endswith(f"-{LLVM_VERSION}") and TOOL_PATH_VARIABLE not in os.environ:
        candidates.append((name.rsplit("-", 1)[0], f"/usr/lib/llvm-{LLVM_VERSION}/bin"))
    return first_tool_found(
        candidates,
        lambda: ToolchainError(f"{name} not found: install it with `{INSTALL_HINTS[name]}`"),
    )


@functools.cache
def wheel_tools() -> str | None:
    """The folder of the binaries of the ``iree-base-compiler`` that this Python imports
    (``iree/compiler/_mlir_libs``), found without importing it; None without one.

    Its ``iree-opt`` is the IREE of the bindings that run the library-calls stage, which
    read what ``iree-opt`` printed, so the two are one version (``rewriter.iree`` takes its
    ``iree-compile`` for the same reason); and it starts in 0.01 s, where pip's
    ``iree-opt`` on $PATH is a Python script that starts Python, imports ``iree.compiler``
    and then runs this binary (0.2 s a stage, three stages a compile).
    """
    try:
        spec = importlib.util.find_spec("iree.compiler")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        tools = Path(folder) / "_mlir_libs"
        if (tools / "iree-opt").is_file():
            return str(tools)
    return None


def check_tools(names: tuple[str, ...] = PIPELINE_TOOLS) -> None:
    """Fail early, naming every missing tool of ``names`` at once."""
    missing = []
    for name in names:
        try:
            find_tool(name)
        except ToolchainError as error:
            missing.append(str(error))
    if missing:
        raise ToolchainError("\n".join(missing))


def run_stage(stage: Stage | TextStage, source: Path, output: Path) -> None:
    """Run one stage; on failure raise with the tool's own diagnostics."""
    if isinstance(stage, TextStage):
        output.write_text(stage.transform(source.read_text(encoding="utf-8")), encoding="utf-8")
        return
    command = [find_tool(stage.tool)] + [
        a.replace("{in}", str(source)).replace("{out}", str(output)) for a in stage.arguments
    ]
    _run(stage.name, command)
    if stage.then is not None:
        output.write_text(stage.then(output.read_text(encoding="utf-8")), encoding="utf-8")


def link_shared_object(
    inputs: list[Path],
    output: Path,
    link: list[str],
    optimize: str = "-O2",
    flags: list[str] | None = None,
    exports: tuple[str, ...] = (),
    arguments: list[str] | None = None,
    only_exports: bool = False,
) -> None:
    """clang: LLVM IR and C sources into one shared object, linked against ``link`` and
    the linker ``arguments`` (the BLAS's, ``-Bsymbolic``).

    Only the entry points, the metadata and ``exports`` are exported (only ``exports`` with
    ``only_exports``): helpers such as MLIR's ``dealloc_helper`` stay local, so two loaded
    modules cannot bind to each other's. The version script that says so is a temporary
    file, never one beside ``output``.
    """
    command = [
        find_tool(f"clang-{LLVM_VERSION}"),
        optimize,
        "-fPIC",
        "-shared",
        "-Wno-override-module",
        *(flags or []),
        *map(str, inputs),
        "-o",
        str(output),
    ]
    for library in link:
        command += link_arguments(library)  # a path or a -l name: link_items.py
    command += arguments or []
    command.append("-lm")
    loader = (
        ()
        if only_exports
        else ("_mlir_ciface_rw_entry_*", "_mlir_ciface_rw_check_*", "rw_model_metadata")
    )
    exported = "".join(f" {name};" for name in (*loader, *exports))
    with temporary_file("rewriter-", ".exports") as version_script:
        version_script.write_text(f"{{ global:{exported} local: *; }};\n")
        _run("link", [*command, f"-Wl,--version-script={version_script}"])


class ObjectReuse(Protocol):
    """Where objects of sources that many compiles share are kept (``cache.ObjectCache``)."""

    def lookup(self, source: Path, arguments: list[str], target: Path) -> bool: ...

    def store(self, source: Path, arguments: list[str], built: Path) -> None: ...


# The module's own LLVM IR (``mlir-translate``'s) is compiled with LLVM's full unrolling
# limited to loops of 8 iterations: at -O3 it unrolled the conv of
# ``benchmarks/compile_time.py`` into one long block on which the machine schedulers took 5
# of the compile's 6 s; limited, the compile takes 0.8 s and the conv runs no slower (1.07
# against 1.41 ms a call; the block, a gather of 4M alike).
LLVM_IR_FLAGS = ["-mllvm", "-unroll-full-max-count=8"]


def compile_objects(
    inputs: list[Path],
    folder: Path,
    optimize: str,
    flags: list[str],
    reuse: ObjectReuse | None = None,
    shared: Path | None = None,
) -> list[Path]:
    """``inputs`` with every LLVM IR file and C source compiled into an object in
    ``folder``, each by a ``clang -c`` of its own with the arguments the one command of
    ``link_shared_object`` or ``relocatable_object`` gives it, all at once (a machine's
    cores take them in parallel); objects and libraries pass through. The object of a
    source under ``shared`` (the package's C files, compiled alike by many modules) is
    taken from ``reuse`` when it has one, and given to it when it had none."""
    clang = find_tool(f"clang-{LLVM_VERSION}")
    folder.mkdir(parents=True, exist_ok=True)
    arguments = [optimize, "-fPIC", "-Wno-override-module", *flags]
    translated = [*arguments, *LLVM_IR_FLAGS]
    objects: list[Path] = []
    commands: list[list[str]] = []
    kept: list[tuple[Path, Path]] = []
    for index, source in enumerate(inputs):
        if source.suffix not in (".c", ".ll"):
            objects.append(source)
            continue
        built = folder / f"{index}-{source.stem}.o"
        objects.append(built)
        reusable = reuse is not None and shared is not None and source.parent == shared
        if reusable and reuse is not None and reuse.lookup(source, arguments, built):
            continue
        chosen = translated if source.suffix == ".ll" else arguments
        commands.append([clang, *chosen, "-c", str(source), "-o", str(built)])
        if reusable:
            kept.append((source, built))
    _run_together("link", commands)
    for source, built in kept:
        if reuse is not None:
            reuse.store(source, arguments, built)
    return objects


def relocatable_object(inputs: list[Path], output: Path, optimize: str, flags: list[str]) -> None:
    """clang -r: LLVM IR, C sources and objects into one relocatable object ``output``."""
    command = [
        find_tool(f"clang-{LLVM_VERSION}"),
        optimize,
        "-fPIC",
        "-Wno-override-module",
        *flags,
        "-r",
        "-nostdlib",
        *map(str, inputs),
        "-o",
        str(output),
    ]
    _run("link", command)


# The C library's allocation functions, and what a model with the C API calls instead
# (abi/rewriter_workspace.c: a caller's workspace, else malloc).
ALLOCATORS = ("malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "strdup")


def use_workspace_allocators(object_file: Path) -> None:
    """Make every call of an allocation function in ``object_file`` one of the workspace's
    (``rw_ws_malloc`` for ``malloc``, ...), with llvm-objcopy."""
    rename_symbols(object_file, {name: f"rw_ws_{name}" for name in ALLOCATORS}, "workspace")


def rename_symbols(object_file: Path, renames: dict[str, str], stage: str) -> None:
    """Rename symbols of the relocatable ``object_file`` (definitions and references
    alike: ``llvm-objcopy --redefine-syms``); ``stage`` names the step in errors."""
    listing = object_file.parent / f"{object_file.name}.{stage}"
    listing.write_text("".join(f"{old} {new}\n" for old, new in renames.items()))
    _run(
        stage,
        [
            find_tool(f"llvm-objcopy-{LLVM_VERSION}"),
            f"--redefine-syms={listing}",
            str(object_file),
        ],
    )


def archive_static_library(
    inputs: list[Path],
    output: Path,
    optimize: str,
    flags: list[str],
    exports: list[str],
    member: str,
) -> None:
    """clang, llvm-objcopy and llvm-ar: LLVM IR, C sources and objects into one relocatable
    object ``member`` (``clang -r``) whose globals but ``exports`` are made local, archived
    as ``output``. Two such libraries link into one program: nothing but their exports can
    clash."""
    combined = output.parent / member
    relocatable_object(inputs, combined, optimize, flags)
    kept = output.parent / f"{member}.exports"
    kept.write_text("".join(f"{name}\n" for name in exports))
    _run(
        "localize",
        [find_tool(f"llvm-objcopy-{LLVM_VERSION}"), f"--keep-global-symbols={kept}", str(combined)],
    )
    output.unlink(missing_ok=True)
    _run("archive", [find_tool(f"llvm-ar-{LLVM_VERSION}"), "rcsD", str(output), str(combined)])


def workspace_source() -> Path:
    """``abi/rewriter_workspace.c``: the allocation functions of a model with the C API."""
    return Path(bridge_dir()) / "rewriter_workspace.c"


def memref_copy_source() -> Path:
    """``abi/memref_copy.c``: MLIR's ``memrefCopy`` (what ``memref.copy`` between views that
    no loop took lowers to), compiled into the module that calls it, so that the module
    needs no ``libmlir_c_runner_utils`` where it runs."""
    return Path(bridge_dir()) / "memref_copy.c"


def _run_together(stage: str, commands: list[list[str]]) -> None:
    """Run ``commands`` at once, each as ``_run`` runs one: the first that fails raises with
    its diagnostics, once all have ended; whatever ends this process meanwhile ends them
    (SIGTERM, then SIGKILL 5 s later)."""
    import subprocess

    if len(commands) <= 1:
        for command in commands:
            _run(stage, command)
        return
    processes: list[subprocess.Popen[str]] = []
    try:
        for command in commands:
            processes.append(
                subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            )
        ended = [(process, *process.communicate()) for process in processes]
    except BaseException:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=5)
            except BaseException:
                process.kill()
        raise
    for command, (process, _, stderr) in zip(commands, ended, strict=True):
        if process.returncode != 0:
            raise ToolchainError(
                f"stage '{stage}' failed ({Path(command[0]).name} exited with "
                f"{process.returncode}):\n{stderr.strip()}"
            )


def _run(stage: str, command: list[str]) -> None:
    process = run_tool(command)  # a signal that ends us ends the tool cleanly
    if process.returncode != 0:
        raise ToolchainError(
            f"stage '{stage}' failed ({Path(command[0]).name} exited with "
            f"{process.returncode}):\n{process.stderr.strip()}"
        )
