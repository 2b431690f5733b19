"""Compile a rewritten module into a shared object, stage by stage."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import warnings
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..abi import bridge_dir, include_dir
from ..inputs.files import OutputRefused, install_file, output_problem
from ..inputs.temporary import temporary_folder
from . import blas as blas_libraries
from . import cache as compile_cache
from . import contexts, targets
from .blas import blas_calls_source, resolve_blas, sort_calls_source
from .entries import (
    Entry,
    dimension_variables,
    entries_from_json,
    entries_json,
    entry_source,
    prepare,
)
from .extras import MissingDependency, needs
from .link_items import library_file, link_problem
from .parallel_loops import async_runtime_source, calls_runtime, default_threads
from .prefixes import default_prefix, prefix_problem
from .toolchain import (
    LLVM_VERSION,
    PIPELINE_TOOLS,
    STATIC_TOOLS,
    ToolchainError,
    archive_static_library,
    check_tools,
    compile_objects,
    find_tool,
    link_shared_object,
    memref_copy_source,
    relocatable_object,
    rename_symbols,
    run_stage,
    stages,
    use_workspace_allocators,
    workspace_source,
)

# A compile served from the cache imports no more than the above: the modules of the
# stages (c_api, library_calls, sorts, ...) are imported once a compile runs, the grammar
# and IREE's bindings when they are used.

if TYPE_CHECKING:
    from ..emit.ffi_adapters import Extern

PORTABLE = targets.PORTABLE


def compile_module(
    source: str | Path,
    output: str | Path,
    *,
    link: list[str] | None = None,
    keep_temps: str | Path | None = None,
    ffi_bridge: bool = False,
    blas: str | Path | None = "auto",
    target_cpu: str | None = None,
    target_triple: str | None = None,
    header: str | Path | None = None,
    prefix: str | None = None,
    include_dir: str | Path | None = None,
    filename: str | None = None,
    cache: bool = True,
    threads: int | None = None,
) -> list[Entry]:
    """Compile the rewritten module ``source`` (text or path) to the shared object ``output``,
    or, when ``output`` ends in ``.a``, to a static library.

    A static library, ``header`` and ``prefix`` give the library a C API (``c_api.py``):
    every name it exports starts with ``prefix`` (by default the module's name and ``_``);
    ``header`` is where its declarations are written (C99 and C++). In a static library
    nothing else is global; a shared object also exports what ``load`` reads, under the
    prefix too (``Api.loader_symbols``), each bound within the library. ``include_dir``
    gets the include files a C or C++ build of the program and its handlers needs, so
    that the build machine needs no Python (``write_include_files``).

    ``link`` names kernel libraries the object is linked against: ``-lNAME``, ``NAME`` or a
    path, as a C programmer means them (``link_items.py``).
    With ``keep_temps`` every stage's input and output stay in that folder; otherwise a
    temporary folder is removed afterwards. With ``ffi_bridge`` every extern that carries a
    ``rewriter.xla_ffi`` description is served by an adapter calling an XLA FFI handler,
    registered at load time (``load(..., ffi_handlers=...)``). Raises ToolchainError naming
    a failed stage, and RewriteError (at ``filename``, by default the path of ``source``)
    for a description that cannot be read.

    ``blas`` computes the matrix products (``blas.py``): ``"auto"`` is the system's OpenBLAS,
    linked by its soname (loops when there is none, with a ``UserWarning`` when the module
    has products), a path names a CBLAS library, ``None`` keeps every product in compiled
    loops. The library records no path of the build machine but those of ``link`` items and
    a ``blas`` path that the dynamic loader would not find by its soname.

    ``target_triple`` cross-compiles for that LLVM triple (``aarch64-linux-gnu``: clang
    links with that triple's libraries, Debian's cross toolchain); ``target_cpu`` is the
    CPU the code is optimized for: ``"native"`` (this machine; the default without a
    triple), ``"generic"`` (any CPU of the architecture; the default with one) or a CPU
    clang knows for the triple (``znver3``, ``x86-64-v3``; ``cortex-a76``). Both are checked
    before any stage runs (``targets.py``): an unknown CPU is a ToolchainError naming the
    triple's CPUs.

    A module MLIR cannot parse, or one without a public function (the library would have no
    entry point), is a RewriteError at its line. ``output`` is replaced atomically
    (``rewriter.inputs.files.install_file``): a failed or killed compile leaves the old file
    or the new one; an output whose folder is missing fails before any stage runs
    (``OSError``). Nothing else is written beside it.

    ``threads`` is how many threads a large parallel loop is split for (blocks handed to a
    pthread pool compiled into the library: ``parallel_loops.py``, ``abi/async_runtime.c``),
    and with them a large product or convolution of the BLAS (``abi/blas_calls.c``); by
    default the CPUs this process may run on, 1 for one thread and no pool.

    A module compiled before with the same options and tools is installed from the compile
    cache (``cache.py``), with the warnings its compile gave; ``cache=False`` compiles and
    stores nothing, and so does ``keep_temps``, whose stages must run.
    """
    iree_version = compile_cache.iree_compiler_identity()
    if iree_version is None:
        _import_iree()  # raises, naming the extra to install
    text = Path(source).read_text(encoding="utf-8") if isinstance(source, Path) else source
    origin = str(source) if isinstance(source, Path) else ""
    use_cache = cache and not keep_temps and iree_version is not None
    externs = []
    if ffi_bridge and not use_cache:
        # Read before the tools are looked for: a description that cannot be read fails at
        # once. With the cache they are read when the module is not in it (before any
        # stage): a cached compile read them when it was made, and reading them loads the
        # grammar (0.2 s).
        externs = _externs(text, filename or origin)
    threads = default_threads() if threads is None else threads
    if threads < 1:
        raise ToolchainError(f"threads must be at least 1, not {threads}")
    problem = output_problem(output)
    if problem:
        raise OutputRefused(problem)
    for item in link or []:
        if link_problem(item):
            raise ToolchainError(str(link_problem(item)))
    static = Path(output).suffix == ".a"
    with_api = static or header is not None or prefix is not None
    try:
        check_tools(PIPELINE_TOOLS + (STATIC_TOOLS if with_api else ()))
    except ToolchainError:
        if ffi_bridge and use_cache:  # a description that cannot be read is the first error
            _externs(text, filename or origin)
        raise
    chosen_prefix = default_prefix(text, output) if prefix is None else prefix
    if with_api and prefix_problem(chosen_prefix):
        raise ToolchainError(str(prefix_problem(chosen_prefix)))
    if include_dir is not None:
        from .bridge import xla_ffi_include_dir

        xla_ffi_include_dir()  # jaxlib's headers must be there before any stage runs
    clang = find_tool(f"clang-{LLVM_VERSION}")
    target_flag = [f"--target={target_triple}"] if target_triple else []
    # Remembered with the cache (blas.py): what it found is in the key, and asking again
    # takes longer than a compile served from the cache.
    library = resolve_blas(blas, clang, target_flag, remember=use_cache)
    key = None
    if use_cache and iree_version is not None:
        key = _cache_key(
            text,
            output,
            {
                "ffi_bridge": ffi_bridge,
                "blas": None if blas is None else str(blas),
                "target_cpu": target_cpu,
                "target_triple": target_triple,
                "header": header is not None,
                "prefix": chosen_prefix if with_api else None,
                "include_dir": include_dir is not None,
                # named in the header's first comment, nowhere in the library
                "filename": (filename or origin) if header is not None else None,
                "static": static,
                "threads": threads,
            },
            list(link or []),
            library,
            clang,
            PIPELINE_TOOLS + (STATIC_TOOLS if with_api else ()),
            iree_version,
        )
        with compile_cache.lookup(key) as hit:
            if hit is not None:
                return _install_hit(hit, output, header, include_dir)
    if ffi_bridge and use_cache:
        externs = _externs(text, filename or origin)
    # A compile runs: what its stages and its C API call is imported now, not by a compile
    # served from the cache, which these imports would slow down more than anything else.
    from .c_api import c_api_header, c_api_source, make_api
    from .carried_elementwise import loops_inside_elements
    from .f64_math import vectorizable_f64_math
    from .float_extrema import intrinsic_extrema
    from .index_extrema import two_pass_arg_extrema
    from .input_fixes import fixed_text
    from .library_calls import route_products_to_blas, route_sorts_to_c, widen_f32_atan2
    from .loop_carries import carry_in_place
    from .loop_order import contiguous_innermost
    from .product_order import cheaper_products
    from .sorts import prepare_sorts
    from .vector_sums import reassociable_sums

    # Checked here, not before the cache: what clang says of a triple and a CPU depends on
    # nothing but them and clang, which the key holds.
    resolved_target = targets.resolve_target_later(clang, target_triple, target_cpu)
    _import_iree()
    notes: list[str] = []
    called: set[str] = set()
    helper_flags: list[str] = []
    sort_flags: list[str] = []
    marked_sorts = 0

    def library_calls(module: str) -> str:
        module = loops_inside_elements(carry_in_place(module))
        module = vectorizable_f64_math(widen_f32_atan2(module))
        module = intrinsic_extrema(two_pass_arg_extrema(module))
        module = reassociable_sums(contiguous_innermost(module))
        if marked_sorts:
            sorted_in_c = route_sorts_to_c(module)
            sort_flags[:] = [f"-DRW_SORT={name}" for name in sorted_in_c.called]
            module = sorted_in_c.text
        if library is None:
            if blas == "auto" and route_products_to_blas(module).called:
                notes.append(
                    f"no system OpenBLAS ({blas_libraries.SYSTEM_OPENBLAS}) was found, so the "
                    "matrix products run as compiled loops, many times slower: install one "
                    "(apt-get install libopenblas-dev) or name a CBLAS library with --blas "
                    "PATH (blas=PATH); --blas none (blas=None) says that loops are meant"
                )
            return module
        routed = route_products_to_blas(module)
        called.update(routed.called)
        helper_flags[:] = routed.compile_flags()
        return routed.text

    scope = contextlib.ExitStack()
    try:
        if keep_temps:
            work = Path(keep_temps)
            try:
                work.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                message = f"cannot keep the stages in {work}: {error.strerror}"
                raise ToolchainError(message) from None
        else:
            work = scope.enter_context(temporary_folder("rewriter-"))
        scope.enter_context(contexts.shared())  # one MLIR context for the steps in Python
        prepared, entries = _entries(text, filename or origin or "<mlir text>")
        entries = [replace(e, shared_sizes=dimension_variables(text, e)) for e in entries]
        prepared = cheaper_products(fixed_text(prepared))  # input_fixes.py, product_order.py
        prepared, marked_sorts = prepare_sorts(prepared)
        where = filename or origin or "<mlir text>"
        api = (
            make_api(entries, chosen_prefix, bridge=ffi_bridge, link_note="", origin=where)
            if with_api
            else None
        )
        if api is not None:
            agreements = tuple((e.name, e.shared_sizes) for e in entries)
            api = replace(api, agreements=agreements)
        current = work / "0-entries.mlir"
        current.write_text(prepared, encoding="utf-8")
        pipeline = stages(library_calls, locations=marked_sorts > 0, threads=threads)
        for index, stage in enumerate(pipeline, start=1):
            following = work / f"{index}-{stage.name}{stage.output_suffix}"
            try:
                run_stage(stage, current, following)
            except ToolchainError as error:
                kept = f"\n(its input is kept in {current})" if keep_temps else ""
                raise ToolchainError(f"{error}{kept}") from None
            current = following
        entry_file = work / "entries.c"
        entry_file.write_text(entry_source(entries), encoding="utf-8")
        inputs: list[Path] = [current, entry_file]
        target, triple = resolved_target()
        # abi/: rewriter_float_mode.h (entries.c), rewriter_c_api_support.h (the C API)
        flags: list[str] = [*target.clang_flags(triple), f"-I{bridge_dir()}"]
        exports: tuple[str, ...] = ()
        libraries = list(link or [])
        arguments: list[str] = []
        if ffi_bridge:
            from .bridge import BRIDGE_EXPORTS, bridge_sources

            sources, bridge_flags = bridge_sources(externs, work, origin)
            inputs += sources
            flags += bridge_flags
            exports = BRIDGE_EXPORTS
        if sort_flags:
            inputs.append(sort_calls_source())
            flags += sort_flags
        # On several threads the large products run on the async runtime's pool too.
        split_products = bool(called) and library is not None and threads > 1
        if called and library is not None:
            inputs.append(blas_calls_source())
            flags += library.compile_flags() + helper_flags
            flags += library.split_flags() if split_products else []
            arguments += library.link_arguments()
        lowered = current.read_text(encoding="utf-8")
        if "@memrefCopy(" in lowered:
            inputs.append(memref_copy_source())
        # Not renamed to the workspace's allocators with the C API: its blocks are freed
        # by other threads than the calls that made them (parallel_loops.own_blocks).
        runtime = [async_runtime_source()] if calls_runtime(lowered) or split_products else []
        if api is None:
            inputs += runtime
        if runtime:
            arguments.append("-lpthread")
        # Each source is compiled on its own, all at once; the package's own C files
        # (abi/) once for all modules, kept by the cache.
        reuse = compile_cache.ObjectCache(clang) if key is not None else None
        shared = Path(bridge_dir())
        header_file = work / "rw_model_api.h"
        if api is not None:
            needed = [Path(output).name, *(link or [])]
            if called and library is not None:
                needed.append(f"-l:{library.soname}")
            needed.append("-lm")
            if runtime:
                needed.append("-lpthread")  # the async runtime's pool (part of glibc 2.34's libc)
            api = replace(api, link_note=" ".join(needed))
            header_file.write_text(c_api_header(api), encoding="utf-8")
            api_source = work / "rw_model_api.c"
            api_source.write_text(c_api_source(api, header_file.name), encoding="utf-8")
            # The module's own allocations (the compiled code's, the bridge's, the BLAS
            # helpers') go to the workspace's functions; the API's own do not.
            module_object = work / "module.o"
            module_inputs = compile_objects(inputs, work / "objects", "-O3", flags, reuse, shared)
            relocatable_object(module_inputs, module_object, "-O3", flags)
            use_workspace_allocators(module_object)
            inputs = [module_object, api_source, workspace_source(), *runtime]
        folder = work / ("api-objects" if api is not None else "objects")
        inputs = compile_objects(inputs, folder, "-O3", flags, reuse, shared)
        built = work / ("library.a" if static else "library.so")
        if static:
            api_exports = api.exports() if api is not None else []
            member = f"{Path(output).stem}.o"
            archive_static_library(inputs, built, "-O3", flags, api_exports, member)
        elif api is not None:
            # Everything the library exports is under the prefix, what load() reads too.
            combined = work / "model.o"
            relocatable_object(inputs, combined, "-O3", flags)
            rename_symbols(combined, api.loader_symbols(), "prefix")
            exports = (*api.exports(), *api.loader_symbols().values())
            link_shared_object(
                [combined],
                built,
                libraries,
                optimize="-O3",
                flags=flags,
                exports=exports,
                arguments=[*arguments, "-Wl,-Bsymbolic"],
                only_exports=True,
            )
        else:
            link_shared_object(
                inputs,
                built,
                libraries,
                optimize="-O3",
                flags=flags,
                exports=exports,
                arguments=arguments,
            )
        install_file(output, built)
        if header is not None:
            install_file(header, header_file)
        if include_dir is not None:
            write_include_files(Path(include_dir))
        for note in notes:
            warnings.warn(note, UserWarning, stacklevel=2)
        if key is not None:
            files = {"library": built, **({"header": header_file} if header is not None else {})}
            stored = [("UserWarning", note) for note in notes]
            compile_cache.store(key, files, entries_json(entries), stored)
        return entries
    finally:
        scope.close()


def _externs(text: str, filename: str) -> list[Extern]:
    """The externs with an XLA FFI description, which ``--ffi-bridge`` serves; a
    RewriteError at the first description that cannot be read."""
    from ..emit.ffi_adapters import externs_in

    return externs_in(text, filename or "<mlir text>")


def _import_iree() -> None:
    """Import IREE's compiler bindings, which the stages in this process use; a
    ToolchainError naming the extra to install when they are missing."""
    try:
        with needs("compile"):
            import iree.compiler  # noqa: F401 (prepare, library_calls, loop_order use it)
    except MissingDependency as error:
        raise ToolchainError(str(error)) from None


def _cache_key(
    text: str,
    output: str | Path,
    options: dict[str, object],
    link: list[str],
    found_blas: blas_libraries.Blas | None,
    clang: str,
    tools: tuple[str, ...],
    iree_version: str,
) -> str:
    """The key of a compile in the cache (``cache.py``): the module, the options (the
    target triple and CPU among them; clang, whose identity is there, says what they stand
    for) and what they resolve to (this CPU for ``native``, the BLAS found), the name of the
    output (a static library's member and the header's link note say it, and the default
    prefix comes from it), the files the ``link`` items name, the tools, the rewriter's own
    code and C sources, and the packages that run."""
    identity = compile_cache.file_identity
    triple, cpu = options["target_triple"], options["target_cpu"]
    native = (cpu or (targets.PORTABLE if triple else targets.NATIVE)) == targets.NATIVE
    parts: dict[str, object] = {
        "module": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "output": Path(output).name,
        "options": options,
        "link": [[item, identity(library_file(item, clang))] for item in link],
        "host_cpu": compile_cache.host_cpu() if native else None,
        "blas": None if found_blas is None else [repr(found_blas), identity(found_blas.library)],
        "tools": {name: identity(find_tool(name)) for name in tools},
        "linker": identity(shutil.which("ld")),
        "environment": compile_cache.tool_environment(),
        "rewriter": compile_cache.package_identity(),
        "iree-base-compiler": iree_version,
    }
    if options["ffi_bridge"] or options["include_dir"]:
        from .bridge import xla_ffi_include_dir

        folder = Path(xla_ffi_include_dir()) / "xla" / "ffi" / "api"
        parts["xla_ffi_headers"] = [identity(path) for path in sorted(folder.glob("*.h"))]
    return compile_cache.key_of(parts)


def _install_hit(
    hit: compile_cache.Hit,
    output: str | Path,
    header: str | Path | None,
    include_dir: str | Path | None,
) -> list[Entry]:
    """Install a cached compile's outputs as a compile does, give its warnings again and
    return its entry points."""
    install_file(output, hit.files["library"])
    if header is not None:
        install_file(header, hit.files["header"])
    if include_dir is not None:
        write_include_files(Path(include_dir))
    for _, message in hit.warnings:
        warnings.warn(message, UserWarning, stacklevel=3)
    return entries_from_json(hit.returned)


def write_include_files(folder: Path) -> list[Path]:
    """Write into ``folder`` the headers a C or C++ build needs besides the model's own:
    XLA's FFI API (``xla/ffi/api/*.h``, from jaxlib, for the handlers) and
    ``rewriter/memref.h`` (for kernels with ``_mlir_ciface_`` entries). Each is written
    as every output is (``install_file``); the list of the files written."""
    from .bridge import xla_ffi_include_dir

    sources = [(Path(xla_ffi_include_dir()), "xla/ffi/api"), (Path(include_dir()), "rewriter")]
    written = []
    for root, part in sources:
        for source in sorted((root / part).glob("*.h")):
            target = folder / part / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            install_file(target, source)
            written.append(target)
    return written


def _entries(text: str, filename: str) -> tuple[str, list[Entry]]:
    """``prepare`` (the module with its entries renamed, and the entries), its failures as
    diagnostics: text MLIR rejects, and a module that has no entry point."""
    from iree.compiler import ir

    from ..syntax.diagnostics import Diagnostic, RewriteError
    from ..syntax.source import Source
    from .mlir_diagnostics import parse_error

    try:
        prepared, entries = prepare(text)
    except ir.MLIRError as error:
        raise parse_error(error, text, filename) from None
    except ValueError as error:  # an entry point that takes or returns no ranked tensor
        raise ToolchainError(str(error)) from None
    if not entries:
        message = "no public function: the library would have no entry points"
        shown = Source(text, filename).line_text(1) if text.strip() else None
        raise RewriteError([Diagnostic(filename, 1, 1, message, shown)])
    return prepared, entries
