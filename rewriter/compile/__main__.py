"""Command line of the compiled path; see ``python -m rewriter.compile --help``."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from ..inputs.files import cannot_write, output_problem, same_file
from ..inputs.streams import run_command, say
from ..plan.c_names import c_name_part
from ..syntax.diagnostics import RewriteError
from .build import compile_module
from .link_items import joined_link_values, library_name
from .module_file import read_module_file
from .prefixes import default_prefix
from .toolchain import ToolchainError


def main(argv: list[str] | None = None) -> int:
    """The command line; signals and write errors of stdout and stderr end it as
    ``rewriter/inputs/streams.py`` says."""
    return run_command(lambda: _main(sys.argv[1:] if argv is None else argv))


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rewriter.compile",
        description="Compile a rewritten module (python -m rewriter output) to a shared object "
        "whose public functions F are C entries _mlir_ciface_rw_entry_F.",
    )
    parser.add_argument("module", type=Path, help="rewritten StableHLO module (.mlir)")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        help="library to write: NAME.so a shared object, NAME.a a static library (with the C "
        "API; every global symbol but its names made local)",
    )
    parser.add_argument(
        "--header",
        type=Path,
        metavar="FILE.h",
        help="write the model's C API header (C99 and C++): a typed function per public "
        "function, checked arguments, a status and the last error's message",
    )
    parser.add_argument(
        "--include-dir",
        type=Path,
        metavar="DIR",
        help="write into DIR the include files a C/C++ build needs besides the header: XLA's "
        "FFI API (xla/ffi/api/*.h, for the handlers) and rewriter/memref.h, so that a build "
        "machine needs no Python",
    )
    parser.add_argument(
        "--prefix",
        metavar="PREFIX",
        help="the prefix of every name of the C API (default: the module's name and _, "
        "e.g. jit_rms_norm_)",
    )
    parser.add_argument(
        "--link",
        action="append",
        default=[],
        metavar="LIB",
        help="kernel library to link against: -lNAME or NAME (found as the linker finds "
        "-lNAME) or the path of a library file (repeatable)",
    )
    parser.add_argument(
        "--keep-temps",
        type=Path,
        metavar="DIR",
        help="keep every stage's files in DIR (every stage runs: the compile cache is not used)",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="compile even when the compile cache holds this module compiled with the same "
        "options and tools, and store nothing in it (the cache: $REWRITER_CACHE_DIR, else "
        "$XDG_CACHE_HOME/rewriter, else ~/.cache/rewriter)",
    )
    parser.add_argument(
        "--ffi-bridge",
        action="store_true",
        help="serve every extern that has a rewriter.xla_ffi description by its XLA FFI "
        "handler, registered at load time (rewriter.compile.load(..., ffi_handlers=...))",
    )
    parser.add_argument(
        "--blas",
        default="auto",
        metavar="auto|none|PATH",
        help="who computes the matrix products: auto (the system's OpenBLAS, libopenblas.so.0, "
        "linked by its soname; compiled loops when there is none; the default), none "
        "(compiled loops) or the path of a CBLAS library",
    )
    parser.add_argument(
        "--target-cpu",
        metavar="CPU",
        help="the CPU to optimize for: native (this machine; the default without "
        "--target-triple), generic (any CPU of the architecture; the default with it) or a CPU "
        "clang knows for the triple (x86-64-v3, znver3; cortex-a76 for aarch64)",
    )
    parser.add_argument(
        "--target-triple",
        metavar="TRIPLE",
        help="cross-compile for this LLVM target triple (aarch64-linux-gnu: linked with that "
        "triple's libraries, e.g. Debian's gcc-aarch64-linux-gnu)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        metavar="N",
        help="split each large parallel loop for N threads (a pthread pool in the library; "
        "REWRITER_THREADS sets the pool's size where it runs); 1: one thread, no pool "
        "(default: the CPUs this process may use)",
    )
    args = parser.parse_args(joined_link_values(argv))
    clash = _output_clash(args)
    if clash:
        parser.error(f"{clash}; nothing was written")
    for output in (args.output, args.header):
        problem = output_problem(output) if output is not None else None
        if problem:
            say(f"{output}: error: cannot write: {problem}")
            return 1
    try:
        text = read_module_file(args.module, ToolchainError)
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            entries = compile_module(
                text,
                args.output,
                link=args.link,
                keep_temps=args.keep_temps,
                ffi_bridge=args.ffi_bridge,
                blas=args.blas,
                target_cpu=args.target_cpu,
                target_triple=args.target_triple,
                header=args.header,
                prefix=args.prefix,
                include_dir=args.include_dir,
                threads=args.threads,
                filename=str(args.module),
                cache=not args.no_cache,
            )
        for warning in warned:
            say(f"{args.module}: warning: {warning.message}")
    except RewriteError as error:  # the module does not parse, has no entry point, or an
        for diagnostic in error.diagnostics:  # extern's description is unreadable
            print(diagnostic.format(), file=sys.stderr)
        return 1
    except ToolchainError as error:
        say(f"{args.module}: error: {error}")
        return 1
    except OSError as error:  # the output cannot be written
        say(f"{args.output}: error: {cannot_write(args.output, error)}")
        return 1
    with_api = args.output.suffix == ".a" or args.header is not None or args.prefix is not None
    prefix = default_prefix(text, args.output) if args.prefix is None else args.prefix
    for entry in entries:
        symbol = prefix + c_name_part(entry.name) if with_api else entry.c_symbol
        say(f"{args.output}: {symbol} ({entry.name})")
    if not args.ffi_bridge:
        _warn_unserved(text, args)
    return 0


def _output_clash(args: argparse.Namespace) -> str | None:
    """Why ``-o`` must not be written: it is the module, or a library to link."""
    inputs = [("the input file", str(args.module))]
    inputs += [("the --link library", item) for item in args.link if library_name(item) is None]
    for what, path in inputs:
        if same_file(args.output, path):
            return f"-o {args.output} is {what} {path}"
        if args.header is not None and same_file(args.header, path):
            return f"--header {args.header} is {what} {path}"
    if args.header is not None and same_file(args.header, args.output):
        return f"--header {args.header} is the output -o {args.output}"
    return None


def _warn_unserved(text: str, args: argparse.Namespace) -> None:
    """Externs with an XLA FFI description that neither --ffi-bridge nor a --link library
    serves: a program that loads the library with ffi_handlers= would find them missing."""
    from .unserved import unserved_externs  # only here: it imports what little it needs

    unserved = unserved_externs(text, args.link, str(args.module))
    if not unserved:
        return
    names = ", ".join(f"@{name}" for name in unserved)
    say(
        f"{args.module}: warning: {names} {'has' if len(unserved) == 1 else 'have'} an XLA FFI "
        "description (rewriter.xla_ffi) but no --link library defines "
        f"{'it' if len(unserved) == 1 else 'them'}: pass --ffi-bridge to serve "
        f"{'it' if len(unserved) == 1 else 'them'} by FFI handlers (load(..., ffi_handlers=...)), "
        "or give kernels with _mlir_ciface_ entries at load time (load(..., kernels=[...]))"
    )


if __name__ == "__main__":
    raise SystemExit(main())
