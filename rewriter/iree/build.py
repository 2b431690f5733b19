"""Compile a module rewritten with ``--abi iree`` into a ``.vmfb``, and read one back.

``iree-compile`` (pip ``iree-base-compiler``) does the work, for the llvm-cpu backend. Its
flags, and why:

- ``--iree-input-type=stablehlo``: jax exports are StableHLO;
- ``--iree-input-demote-f64-to-f32=false``: IREE demotes f64 by default and then refuses
  an import that takes or returns f64 ("external functions with types that are being
  demoted are not allowed"); jax programs that use f64 mean it;
- ``--iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu``:
  CPU code, run by ``iree.runtime``'s ``local-task`` driver;
- ``--iree-llvmcpu-target-cpu=host`` (``target_flags``): for the CPU this runs on, with its
  vector width and instruction set. IREE's own default is a generic CPU of the
  architecture (SSE2 on x86-64), several times slower on matmul-heavy programs;
  ``cpu="generic"`` asks for that portable code again, and ``triple=`` cross-compiles.

A module whose f64 math needs a libm function that IREE's embedded linking lacks (``sin``,
``cos``, ``tanh``, ``atan2`` on f64, ...: "iree-lld: error: undefined symbol: sin") is
compiled again with ``--iree-llvmcpu-link-embedded=false``: its executables become system
shared libraries, and those functions come from the C library of the process that loads
them (``iree.runtime`` in Python). When the executables that need them are those IREE
compiles to evaluate the module's constant expressions (a positional encoding's
``sin(arange(n) * w)`` in f64), which it links embedded whatever the flags, the module is
compiled again with ``--iree-opt-const-eval=false``: it computes them when it is loaded.
f32 ``atan2`` and f64 ``cbrt``, which IREE gets wrong or cannot compile, are rewritten
first (``exact_math.py``); f32 ``atan2`` becomes libm's f64 ``atan2``, so its module is
linked as a system library from the start (and when that cannot be, cross-compiling or
with embedded linking chosen, IREE's f32 ``atan2`` stays);
f32 ``sin``, ``cos`` and ``tan`` are computed in f64 by reductions and polynomials that
need no libm (``rewriter/compile/f32_in_f64.py``), but those of a dynamic shape become
libm's f64 ones, on the same condition; a module with any of them is still linked as a
system library from the start.
Pads of complex elements, which IREE cannot compile, are done on the real and imaginary
parts apart (``complex_pads.py``). The ``lax.top_k`` of f32 is compiled code that selects
from chunk maxima (``chunked_top_k.py``); the other sorts jax writes become imports that
``load`` serves with a stable sort of numpy (``sorts.py``: IREE's own is a bubble sort,
which keeps operands on the stack); any other
sort's comparator is turned so that IREE's bubble sort keeps ties in order, as jax's
stable sort does (``rewriter.compile.sorts.make_sorts_stable``). While loops of a few
counted iterations are unrolled, as IREE copies what a loop carries on every iteration
(``unrolled_loops.py``). An argmax or argmin of floats is two reductions IREE
vectorizes, not one of pairs (``index_extrema.py``); a cumulative sum or product of
floats is scanned in XLA's blocks (``compile/xla_scans.py``, an input fix). Reductions
over the trailing
dimensions of tensors of rank 3 and up are reshaped to matrices, which IREE tiles well
(``flat_reductions.py``), sums over windows that tile the operand are a reshape and a
reduce (``tiled_windows.py``), small max and min windows are maxima (minima) of shifted
slices (``window_extrema.py``), f64 ``tanh`` is computed from ``exp``
(``fast_tanh.py``), f64 ``exp`` by the compiled path's polynomial, not libm's per
element (``fast_exp.py``), and the products ``blas_products`` names become dispatches
that call a BLAS (``blas_products.py``).

IREE drops the attributes of imports, so the import signatures (rewriter/iree/signatures.py)
go into the compiled module as the module attribute ``rewriter.iree_imports`` (through
``iree.reflection``, which IREE keeps), where ``read_vmfb`` finds them again with
``iree-dump-module``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..compile import cache as compile_cache
from ..compile.extras import MissingDependency, needs
from ..compile.module_file import read_module_file
from ..compile.toolchain import first_tool_found, wheel_tools
from ..inputs.files import OutputRefused, output_problem, write_output
from ..inputs.streams import run_tool
from ..inputs.temporary import temporary_folder
from ..plan.naming import NamePool
from ..syntax.diagnostics import Diagnostic, RewriteError
from .blas_products import most_blocks
from .drivers import PARTS_KEY, SIZES_KEY, WORK_KEY, SizedWork, driver_for, work_by_size
from .signatures import (
    METADATA_KEY,
    ImportSignature,
    SignatureError,
    from_json,
    signatures_of,
    to_json,
)
from .work import Work, work_parts

if TYPE_CHECKING:
    import subprocess

# A compile served from the cache imports no more than the above: the rewrites before
# iree-compile are imported by _write_with_metadata, once a compile runs.

# IREE's executables assume every binding 64-byte aligned (its own allocations are), so
# that load had to copy each argument numpy allocated (16-byte aligned, glibc's malloc)
# before a call: 1.1 ms a 16 MB array, a third of an elementwise op on 4M floats. With
# ALIGNMENT_FLAG they assume 16 (unaligned vector loads: no slower on x86-64 since AVX),
# and read numpy's arrays in place; BINDING_ALIGNMENT_KEY records what a module assumes.
# A 512 x 512 f32 product and an MLP block ran 8 and 14% faster so, but a 3 x 3 NHWC
# convolution of 8 x 64 x 64 x 32 floats 12% slower (its code on buffers IREE lays out
# at 16-byte offsets), so a module with a convolution keeps 64 (``layout_flags``).
ALIGNMENT_FLAG = "--iree-stream-resource-min-offset-alignment"
BINDING_ALIGNMENT = 16
COMPILE_FLAGS = (
    "--iree-input-type=stablehlo",
    "--iree-input-demote-f64-to-f32=false",
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
)
# Data tiling lays each matrix product's operands out in tiles of the CPU's register block
# (mmt4d) where they are made: the block of benchmarks/speed.py took 14.6 ms of CPU without
# it and 8.0 with it (jax.jit 7.5); attention and conv are unchanged. IREE 3.13 cannot
# compile a complex product with it ("'vector.transfer_read' op requires valid padding
# vector elemental type"), so a module with complex elements goes without. Nor does a
# module with a tensor of dynamic shape: with it, a product with a batch dimension of
# dynamic size whose operand a broadcast of a reduction makes ((s - s.max(-1)) @ v, a
# softmax before a product: attention of a symbolic batch) was 0.79 of its largest element
# off from a batch of 2 on, in plain iree-compile too; without it, right.
DATA_TILING = "--iree-dispatch-creation-data-tiling"
_DYNAMIC_TENSOR = re.compile(r"tensor<[^>]*\?")


def layout_flags(text: str) -> tuple[str, ...]:
    """Data tiling, unless the module has complex elements or a tensor of dynamic shape;
    bindings 16-byte aligned (ALIGNMENT_FLAG), unless it has a convolution."""
    plain = "complex<" in text or _DYNAMIC_TENSOR.search(text) is not None
    tiling = () if plain else (DATA_TILING,)
    if "stablehlo.convolution" in text:
        return tiling
    return (*tiling, f"{ALIGNMENT_FLAG}={BINDING_ALIGNMENT}")


SYSTEM_LINKING = "--iree-llvmcpu-link-embedded=false"
CONST_EVAL_FLAG = "--iree-opt-const-eval"
CONST_EVAL_OFF = f"{CONST_EVAL_FLAG}=false"
# The key, in the module's iree.reflection, of the element types whose products are
# dispatches that call a BLAS (JSON; absent when none are): load needs the BLAS for them.
BLAS_PRODUCTS_KEY = "rewriter.blas_products"
# The key, in the module's iree.reflection, set ("true") when sorts call abi/iree_sorts.c.
NATIVE_SORTS_KEY = "rewriter.native_sorts"
# The key, in each public function's iree.reflection, of JAX's argument names (JSON).
ARGUMENT_NAMES_KEY = "rewriter.argument_names"
# The key, in each public function's iree.reflection, of the arguments IREE may write into
# (a JSON list of their indices, written_arguments.py; "true" or "false", all or none, in a
# .vmfb of before).
WRITES_ARGUMENTS_KEY = "rewriter.writes_arguments"
# The key, in each public function's iree.reflection, of the alignment in bytes its
# executables assume of their bindings (ALIGNMENT_FLAG): load reads an argument in place
# only at an address that is a multiple of it (64, IREE's own, when absent).
BINDING_ALIGNMENT_KEY = "rewriter.binding_alignment"
# The key, in a public function's iree.reflection, of the function that checks its shape
# assertions before it runs (JSON: {"function": name, "messages": [...]}; shape_checks.py).
SHAPE_CHECK_KEY = "rewriter.shape_check"
# WORK_KEY and PARTS_KEY (drivers.py), module attributes, hold the estimated work of a call
# and its parts (work.py; "null" for dynamic shapes), so that load picks the driver of a
# .vmfb as of its .mlir.
# What a system shared library may leave to the C library: the libm functions LLVM calls for
# math on f64 (and f32, for completeness) that IREE's embedded musl subset may lack.
_LIBM = frozenset(
    name + suffix
    for name in (
        "sin cos tan sincos asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp exp2 "
        "exp10 expm1 log log2 log10 log1p pow cbrt erf erfc fmod hypot lgamma tgamma"
    ).split()
    for suffix in ("", "f")
)
_UNDEFINED = re.compile(r"iree-lld: error: undefined symbol: (\w+)")
# An executable that calls one: `>>>               /tmp/module_linked-1a2b3c.o:(name)`.
_CALLER = re.compile(r"^>>> +\S+:\((\w+)\)$", re.M)
# A diagnostic's message: `<stdin>:6:38: error: failed to legalize ...`.
_ERROR = re.compile(r"error: (.*)")
_INSTALL = {"iree-compile": "iree-base-compiler", "iree-dump-module": "iree-base-runtime"}


class BuildError(Exception):
    """A tool is missing, or failed (the message holds its diagnostics); the message does
    not repeat the file name, which callers put first."""


def find_tool(name: str) -> str:
    """``name`` on $PATH or next to this Python (where pip puts the IREE wheels' tools);
    ``iree-compile`` is first the binary of the iree-base-compiler whose bindings this
    process imports (``toolchain.wheel_tools``): they write the bytecode it reads, so the
    two are one IREE, and pip's ``iree-compile`` script would start Python to run it."""
    candidates: list[tuple[str, str | None]] = [
        (name, None),
        (name, str(Path(sys.executable).parent)),
    ]
    wheel = wheel_tools() if name == "iree-compile" else None
    if wheel is not None:
        candidates.insert(0, (name, wheel))
    return first_tool_found(
        candidates,
        lambda: BuildError(f"{name} not found: pip install {_INSTALL[name]}==3.13.0"),
    )


def target_flags(cpu: str | None = None, triple: str | None = None) -> tuple[str, ...]:
    """The llvm-cpu target flags. By default, the CPU this runs on (``host``); ``cpu`` names
    another LLVM CPU (``generic``: any CPU of the architecture, ``x86-64-v3``, ``znver4``,
    ...); ``triple`` cross-compiles, for a generic CPU of that architecture unless ``cpu``
    says which."""
    if triple is None:
        return (f"--iree-llvmcpu-target-cpu={cpu or 'host'}",)
    return (
        f"--iree-llvmcpu-target-triple={triple}",
        f"--iree-llvmcpu-target-cpu={cpu or 'generic'}",
    )


def compile_module(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    *,
    cpu: str | None = None,
    triple: str | None = None,
    extra_args: tuple[str, ...] = (),
    cache: bool = True,
    ffi_dispatch: bool | Collection[str] | Mapping[str, bool] = False,
    blas_products: Collection[str] = (),
    driver: str | None = None,
    native_sorts: bool = False,
) -> tuple[bytes, list[ImportSignature]]:
    """Compile the rewritten module in the file ``source``; return the ``.vmfb`` bytes
    (also written to ``output`` when given) and the signatures of its imports.

    The code is for this machine's CPU unless ``cpu`` or ``triple`` say otherwise
    (``target_flags``); ``extra_args`` go to ``iree-compile`` last, so they override.
    A module MLIR cannot parse, or one without a public function, is a RewriteError at its
    line; ``output`` is replaced atomically (``rewriter.inputs.files``), and one whose
    folder is missing fails before iree-compile runs (``OSError``).

    ``ffi_dispatch`` chooses the imports whose calls become dispatches that call an XLA
    FFI handler from the compiled code, where they can (``dispatches.py``; the others stay
    imports): ``True`` all, or import names and targets (a collection, or a mapping to
    bools, looked up as ``load``'s ``imports`` are); ``load`` must then serve each of
    those with an XLA FFI handler.

    ``blas_products`` names the element types (``"f32"``, ``"f64"``) whose matrix products
    become dispatches that call a BLAS's gemm (``blas_products.py``); ``load`` must then
    run the module with the executable plugin and a BLAS (``blas_gemm.py``). A cross
    compile (``triple``) keeps IREE's own products: the BLAS is this machine's. ``driver``
    is the driver that will run the module (``load`` passes its own): a large product is cut
    in blocks for ``local-task``'s workers, and left whole for ``local-sync``, where blocks
    only cost (``blas_products.py``); without one, the driver ``load`` would pick for the
    module (``drivers.py``).

    ``native_sorts``: the sorts that would be imports of ``rw_sort`` served in Python
    become dispatches calling the stable sort of ``abi/iree_sorts.c`` where they can
    (``sort_dispatches.py``); ``load`` must then run the module with the executable plugin
    and that library (``sort_library.py``). A cross compile keeps the imports.

    A module compiled before with the same flags and tools comes from the compile cache
    (``rewriter/compile/cache.py``); ``cache=False`` compiles and stores nothing."""
    bindings = compile_cache.iree_compiler_identity()
    if bindings is None:
        _import_iree()  # raises, naming the extra to install
    path = Path(source)
    text = read_module_file(path, BuildError)
    problem = output_problem(output) if output is not None else None
    if problem:
        raise OutputRefused(problem)
    command = [find_tool("iree-compile"), *COMPILE_FLAGS, *layout_flags(text)]
    command += target_flags(cpu, triple)
    command += extra_args
    products = sorted(set(blas_products)) if triple is None else []
    native_sorts = native_sorts and triple is None
    work = work_parts(text)
    split = (driver or driver_for(work)) == "local-task"
    key = None
    if cache and bindings is not None:
        chosen = (products, most_blocks() if split else 1) if products else None
        key = _cache_key(
            text, command, bindings, _selection_key(ffi_dispatch), chosen, native_sorts
        )
        with compile_cache.lookup(key) as hit:
            if hit is not None:
                try:
                    data = hit.files["module.vmfb"].read_bytes()
                    signatures = from_json(hit.returned)
                except (OSError, KeyError, SignatureError):
                    key = None  # an entry that cannot be read: compiled again, not stored
                else:
                    if output is not None:
                        write_output(output, data)
                    return data, signatures
    _import_iree()
    with temporary_folder("rewriter-iree-") as folder:
        embedded = folder / "module.mlirbc"
        vmfb = folder / "module.vmfb"
        # A system library is one for this machine, and only when the caller allows it.
        system_library_allowed = triple is None and not _embedded_chosen(command)
        signatures, libm_needed = _write_with_metadata(
            text, str(path), embedded, system_library_allowed, ffi_dispatch, products,
            split=split, work=work, sized=work_by_size(text) if work is None else None,
            alignment=binding_alignment(command),
            native_sorts=native_sorts,
        )  # fmt: skip
        if libm_needed and not _linking_chosen(command):
            command.append(SYSTEM_LINKING)
        _check_system_linker(command)
        done = _run([*command, str(embedded), "-o", str(vmfb)])
        while done.returncode != 0:
            flags = _flags_for_libm(done.stderr, command)
            if not flags:
                break
            command.extend(flags)
            _check_system_linker(command)
            done = _run([*command, str(embedded), "-o", str(vmfb)])
        if done.returncode != 0:
            # The copy holds the metadata; the user's own file gives diagnostics with its
            # own lines and columns, when it fails for the same reason.
            original = _run([*command, str(path), "-o", os.devnull])
            stderr = done.stderr
            if original.returncode != 0 and _first_error(original.stderr) == _first_error(
                done.stderr
            ):
                stderr = original.stderr
            raise BuildError(f"iree-compile failed:\n{stderr.strip()}")
        data = vmfb.read_bytes()
        if key is not None:
            compile_cache.store(key, {"module.vmfb": vmfb}, to_json(signatures), [])
    if output is not None:
        write_output(output, data)
    return data, signatures


def _first_error(stderr: str) -> str | None:
    """The message of the first error in iree-compile's ``stderr``, without its location:
    the module the rewriter compiled (its input fixes applied) and the user's own file
    fail alike when these agree. Where they differ, the user's file fails for something
    the fixes change (an op IREE cannot lower, which they rewrite), and the failure to
    report is the compiled module's."""
    found = _ERROR.search(stderr)
    return found.group(1) if found else None


def binding_alignment(command: list[str]) -> int:
    """The alignment the executables of ``command``'s compile assume of their bindings:
    the last ALIGNMENT_FLAG's (``extra_args`` may set another), 64 (IREE's) without one."""
    chosen = [a for a in command if a.startswith(ALIGNMENT_FLAG + "=")]
    try:
        return int(chosen[-1].partition("=")[2]) if chosen else 64
    except ValueError:
        return 64  # iree-compile refuses it


def _import_iree() -> None:
    """Import IREE's compiler bindings, which parse and rewrite the module; a BuildError
    naming the extra to install when they are missing."""
    try:
        with needs("iree"):
            import iree.compiler  # noqa: F401 (the module is parsed and rewritten with it)
    except MissingDependency as error:
        raise BuildError(str(error)) from None


def _selection_key(selection: bool | Collection[str] | Mapping[str, bool]) -> object:
    from .dispatches import selection_key  # imported only when a selection is made

    return selection_key(selection) if selection else None


def _cache_key(
    text: str,
    command: list[str],
    bindings: str,
    dispatch: object = None,
    products: tuple[list[str], int] | None = None,
    native_sorts: bool = False,
) -> str:
    """The key of a compile in the cache: the module, iree-compile's flags and identity,
    this machine's CPU when the code is for it (``=host``), the bindings that rewrite the
    module first and the rewriter's own code; the products given to the BLAS and the most
    blocks one is cut in; whether sorts are dispatches."""
    host_cpu = compile_cache.host_cpu()
    return compile_cache.key_of(
        {
            "path": "iree",
            "module": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "flags": command[1:],
            "iree-compile": compile_cache.file_identity(command[0]),
            "host_cpu": host_cpu if any(a.endswith("=host") for a in command) else None,
            "iree-base-compiler": bindings,
            "rewriter": compile_cache.package_identity(),
            **({"ffi_dispatch": dispatch} if dispatch is not None else {}),
            **({"blas_products": products[0], "blocks": products[1]} if products else {}),
            **({"native_sorts": True} if native_sorts else {}),
        }
    )


def _flags_for_libm(stderr: str, command: list[str]) -> list[str]:
    """The flags that a compile which failed only for want of libm functions takes to
    compile again; none when it failed otherwise, or those flags are in ``command``
    already (the caller's own choice, or a retry's).

    Two kinds of executable may call them: the module's own, which become system shared
    libraries (SYSTEM_LINKING), and those of IREE's constant evaluation (``jit_eval_*``:
    the compiler runs the module's constant expressions, a positional encoding's
    ``sin(arange(n) * w)`` in f64 among them, as executables it links embedded whatever
    the flags say), which are then not evaluated at compile time (CONST_EVAL_OFF): the
    module computes them when it is loaded, by the same code. lld names a few of the
    executables that call a missing function ("referenced 5 more times"), so a compile
    may fail again for the other kind."""
    missing = set(_UNDEFINED.findall(stderr))
    if not missing or not missing <= _LIBM:
        return []
    callers = set(_CALLER.findall(stderr))
    flags = []
    if any(caller.startswith("jit_eval_") for caller in callers) and not any(
        argument.startswith(CONST_EVAL_FLAG) for argument in command
    ):
        flags.append(CONST_EVAL_OFF)
    # No caller named (another lld's output): the module's own, as the likelier.
    module_calls = not callers or any(not caller.startswith("jit_eval_") for caller in callers)
    if module_calls and not _linking_chosen(command):
        flags.append(SYSTEM_LINKING)
    return flags


def _linking_chosen(command: list[str]) -> bool:
    return any(a.startswith("--iree-llvmcpu-link-embedded") for a in command)


def _embedded_chosen(command: list[str]) -> bool:
    """Whether the last linking flag asks for embedded linking (a bare flag means true)."""
    chosen = [a for a in command if a.startswith("--iree-llvmcpu-link-embedded")]
    return bool(chosen) and chosen[-1].partition("=")[2].lower() not in ("false", "0")


def _write_with_metadata(
    text: str,
    filename: str,
    destination: Path,
    libm_allowed: bool,
    ffi_dispatch: bool | Collection[str] | Mapping[str, bool] = False,
    blas_products: Collection[str] = (),
    *,
    split: bool,
    work: Work | None,
    sized: SizedWork | None = None,
    alignment: int = 64,
    native_sorts: bool = False,
) -> tuple[list[ImportSignature], bool]:
    """Parse ``text`` with IREE's MLIR, rewrite the math IREE gets wrong
    (``make_math_exact``, the input fixes; f32 ``atan2``, ``sin``, ``cos`` and ``tan`` by
    libm's f64 ones only with ``libm_allowed``), add the import signatures and ``work`` (its
    estimate, ``work.py``; ``sized``, of dynamic shapes: ``drivers.SizedWork``) to the
    module's ``iree.reflection`` and write it as bytecode to ``destination``; return the
    signatures and whether the module now needs libm's f64 ``atan2``, ``sin``, ``cos`` or
    ``tan``. ``split``: large BLAS products in blocks."""
    from iree.compiler import ir

    from ..compile.composites import call_decompositions
    from ..compile.entries import argument_names
    from ..compile.f32_in_f64 import f32_math_in_f64
    from ..compile.input_fixes import fix_module
    from ..compile.mlir_diagnostics import parse_error
    from ..compile.sorts import make_sorts_stable
    from ..compile.two_level_sums import whole_and_trailing
    from .blas_products import route_products_to_blas
    from .chunked_top_k import chunked_top_k
    from .complex_pads import split_complex_pads
    from .dispatches import route_ffi_to_dispatches
    from .exact_math import make_math_exact
    from .fast_exp import fast_f64_exp
    from .fast_tanh import fast_f64_tanh
    from .flat_reductions import flatten_reductions
    from .index_extrema import index_extrema
    from .sorts import SORT_MODULE, route_sorts_to_imports
    from .strided_views import strided_slices_apart
    from .tiled_windows import tiled_windows
    from .unrolled_loops import unroll_counted_loops
    from .window_extrema import window_extrema
    from .written_arguments import written_arguments

    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as error:
            raise parse_error(error, text, filename) from None
        if not _public_functions(module):
            message = "no public function: the module would have no entry points"
            shown = text.split("\n", 1)[0] if text.strip() else None
            raise RewriteError([Diagnostic(filename, 1, 1, message, shown)])
        try:
            signatures = signatures_of(module)
        except SignatureError as error:
            raise BuildError(str(error)) from None
        if any(signature.module == SORT_MODULE for signature in signatures):
            raise BuildError(
                f"the import module name {SORT_MODULE!r} is reserved for the sorts of the "
                "IREE path: rewrite with another --iree-module"
            )
        _add_shape_checks(ir, module)  # before fix_module makes the assertions cf.assert
        if ffi_dispatch:
            signatures = route_ffi_to_dispatches(module, signatures, ffi_dispatch)
        libm_needed = make_math_exact(module, libm_allowed)
        call_decompositions(module)  # top_k: the stable sort jax wrote (composites.py)
        # input_fixes.py; not the broadcasts of a symbolic batch (dynamic_broadcasts.py)
        fix_module(module, skip=(f32_math_in_f64,))
        # f64 sin, cos and tan; libm's for dynamic shapes where allowed
        if f32_math_in_f64(module, libm=libm_allowed) and libm_allowed:
            libm_needed = True
        unroll_counted_loops(module)  # IREE copies what a loop carries, per iteration
        index_extrema(module)  # argmax and argmin: two reductions, not one of pairs
        whole_and_trailing(module)  # long sums along rows of a symbolic length: in blocks
        flatten_reductions(module)  # IREE's reductions are slow at rank 3 and up
        tiled_windows(module)  # and so are its windows: sums over tiles a reduce
        window_extrema(module)  # small max and min windows, shifted slices
        fast_f64_tanh(module)  # IREE's f64 tanh is libm's, element by element
        fast_f64_exp(module)  # and so is its exp (tanh's too: after it)
        if blas_products and route_products_to_blas(module, blas_products, split):  # gemm
            chosen = json.dumps(sorted(blas_products))
            _add_reflection(ir, module.operation, BLAS_PRODUCTS_KEY, chosen)
        split_complex_pads(module)  # nor pad complex elements
        chunked_top_k(module)  # lax.top_k of f32 as compiled code, not an import
        strided_slices_apart(module)  # IREE cannot gather from a strided view
        sort_imports, sort_dispatches = route_sorts_to_imports(module, native_sorts)
        signatures += sort_imports
        if sort_dispatches:
            _add_reflection(ir, module.operation, NATIVE_SORTS_KEY, "true")
        make_sorts_stable(module)
        _add_reflection(ir, module.operation, METADATA_KEY, to_json(signatures))
        # drivers.py: which driver runs it
        _add_reflection(ir, module.operation, WORK_KEY, json.dumps(work and work.total))
        parts = json.dumps(work and [work.products, work.parallel, work.serial])
        _add_reflection(ir, module.operation, PARTS_KEY, parts)
        if sized is not None:  # of dynamic shapes: the work of each call's sizes
            _add_reflection(ir, module.operation, SIZES_KEY, sized.record())
        public = _public_functions(module)
        for function, written in zip(public, written_arguments(module, public), strict=True):
            names = json.dumps(argument_names(ir, function))
            _add_reflection(ir, function, ARGUMENT_NAMES_KEY, names)
            _add_reflection(ir, function, WRITES_ARGUMENTS_KEY, json.dumps(written))
            _add_reflection(ir, function, BINDING_ALIGNMENT_KEY, str(alignment))
        with destination.open("wb") as handle:
            module.operation.write_bytecode(handle)
    return signatures, libm_needed


def _add_shape_checks(ir, module) -> None:
    """For each public function with jax's shape assertions, a public function that checks
    them (``shape_checks.add_shape_check``, its numbers i64 scalars), named in the
    function's ``SHAPE_CHECK_KEY``: ``load`` calls it first and raises jax's message."""
    from ..compile.shape_checks import add_shape_checks

    functions = {
        ir.StringAttr(function.attributes["sym_name"]).value: function
        for function in _public_functions(module)
    }
    pool = NamePool(
        ir.StringAttr(op.operation.attributes["sym_name"]).value
        for op in module.body.operations
        if "sym_name" in op.operation.attributes
    )
    checks = add_shape_checks(ir, module, list(functions.items()), pool)
    for name, check in checks.items():
        recorded: dict[str, object] = {"function": check.symbol, "messages": check.messages}
        if check.sizes_only:
            recorded["sizes_only"] = True
        _add_reflection(ir, functions[name], SHAPE_CHECK_KEY, json.dumps(recorded))


def _add_reflection(ir, operation, key: str, value: str) -> None:
    """Set ``key`` in the ``iree.reflection`` dictionary of ``operation`` (a module or a
    function), which IREE keeps in the ``.vmfb``, to the string ``value``."""
    attributes = operation.attributes
    entries = {}
    if "iree.reflection" in attributes:
        existing = ir.DictAttr(attributes["iree.reflection"])
        entries = {existing[i].name: existing[i].attr for i in range(len(existing))}
    entries[key] = ir.StringAttr.get(value)
    attributes["iree.reflection"] = ir.DictAttr.get(entries)


def _public_functions(module) -> list:
    """The public functions with a body at the top of ``module``: the entry points."""
    from iree.compiler import ir

    found = []
    for operation in module.body.operations:
        op = operation.operation
        if op.name != "func.func" or not op.regions[0].blocks:
            continue
        attributes = op.attributes
        if "sym_visibility" in attributes:
            if ir.StringAttr(attributes["sym_visibility"]).value != "public":
                continue
        found.append(op)
    return found


class Vmfb(NamedTuple):
    """A ``.vmfb`` as ``load`` needs it: its bytes and its module attributes, each read once."""

    data: bytes
    attributes: dict[str, str]


def open_vmfb(path: str | os.PathLike[str]) -> Vmfb:
    """The bytes and module attributes of a ``.vmfb``: ``iree-dump-module`` runs once (it
    starts a process, through pyenv's shim where there is one: 0.17 to 0.34 s on a busy
    2-core machine); OSError when the file cannot be read, BuildError when it is no IREE
    module."""
    data = Path(path).read_bytes()
    return Vmfb(data, dict(vmfb_attributes(path)))


def read_vmfb(path: str | os.PathLike[str]) -> list[ImportSignature]:
    """The import signatures stored in a ``.vmfb`` by ``compile_module``."""
    return signatures_in(dict(vmfb_attributes(path)))


def signatures_in(attributes: Mapping[str, str]) -> list[ImportSignature]:
    """The import signatures among a ``.vmfb``'s module attributes."""
    value = attributes.get(METADATA_KEY)
    if value is None:
        raise BuildError(
            f"no import signatures ({METADATA_KEY}) in this module; compile the "
            "rewritten module with rewriter.iree.compile_module (or python -m rewriter.iree), "
            "which records them"
        )
    try:
        return from_json(value)
    except SignatureError as error:
        raise BuildError(str(error)) from None


def vmfb_attributes(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """The module attributes of a ``.vmfb`` (its ``iree.reflection``), as
    ``iree-dump-module`` lists them."""
    done = _run([find_tool("iree-dump-module"), "--output=metadata", str(path)])
    if done.returncode != 0:
        raise BuildError(f"not an IREE module: {done.stderr.strip()}")
    return _module_attributes(done.stdout)


def native_sorts_in(attributes: Mapping[str, str]) -> bool:
    """Whether a ``.vmfb``'s sorts are dispatches calling ``rw_iree_sort`` (``load`` must
    then offer it: ``sort_library.py``)."""
    return attributes.get(NATIVE_SORTS_KEY) == "true"


def blas_products_in(attributes: Mapping[str, str]) -> list[str]:
    """The element types whose products a ``.vmfb`` computes with a BLAS, from its module
    attributes (``load`` must then offer the gemm functions: ``blas_gemm.py``); empty for
    IREE's own products."""
    value = attributes.get(BLAS_PRODUCTS_KEY)
    if value is None:
        return []
    try:
        return [str(element) for element in json.loads(value)]
    except (ValueError, TypeError):
        raise BuildError(f"{BLAS_PRODUCTS_KEY} is not a JSON list: {value}") from None


def _module_attributes(metadata: str) -> list[tuple[str, str]]:
    """``key: value`` lines of the ``Attributes:`` section of iree-dump-module's output."""
    found = []
    lines = iter(metadata.splitlines())
    for line in lines:
        if line.strip() == "Attributes:":
            for entry in lines:
                if not entry.startswith("  "):
                    break
                key, _, value = entry.strip().partition(": ")
                found.append((key, value))
            break
    return found


SYSTEM_LINKER = "ld"  # what IREE links a system library with, from $PATH
_LINKER_CHOSEN = ("IREE_LLVM_SYSTEM_LINKER_PATH", "--iree-llvmcpu-system-linker-path")


def _check_system_linker(command: list[str]) -> None:
    """Raise ``BuildError`` when ``command`` links the executables as a system library
    (libm's functions, which IREE's embedded linking lacks) and IREE will find no linker:
    it looks for ``ld`` on $PATH unless one is named, and without it fails with "sh: 1: -o:
    not found"."""
    if SYSTEM_LINKING not in command or os.environ.get(_LINKER_CHOSEN[0]):
        return
    if any(flag.startswith(_LINKER_CHOSEN[1]) for flag in command):
        return
    if shutil.which(SYSTEM_LINKER) is None:
        raise BuildError(
            "the module calls libm functions that IREE's embedded linking lacks, so IREE "
            f"links its executables as a system library with `{SYSTEM_LINKER}`, which is "
            "not on PATH: install it with `apt-get install binutils`, or name a linker "
            f"with {_LINKER_CHOSEN[0]}"
        )


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return run_tool(command)  # a signal that ends us ends the tool cleanly
