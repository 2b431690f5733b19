"""``python -m rewriter.iree MODEL.mlir -o MODEL.vmfb [--cpu CPU] [--target-triple TRIPLE]
[--no-cache] [--ffi-dispatch] [--blas] [--native-sorts]``:
compile a module rewritten with ``--abi iree`` for llvm-cpu (this machine's CPU unless told
otherwise), with the import signatures ``rewriter.iree.load`` needs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..inputs.files import cannot_write, output_problem, same_file
from ..inputs.streams import run_command, say
from ..syntax.diagnostics import RewriteError
from .blas_products import ROUTED_ELEMENTS
from .build import COMPILE_FLAGS, DATA_TILING, BuildError, compile_module, target_flags


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; signals and write errors of stdout and stderr end it as
    ``rewriter/inputs/streams.py`` says."""
    return run_command(lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rewriter.iree",
        description="Compile a module rewritten with --abi iree into a .vmfb that "
        "rewriter.iree.load can run (iree-compile "
        + " ".join((*COMPILE_FLAGS, *target_flags()))
        + f", and {DATA_TILING} unless the module has complex elements).",
    )
    parser.add_argument("file", metavar="FILE", help="the rewritten module (.mlir)")
    parser.add_argument("-o", "--output", metavar="OUT", required=True, help="the .vmfb")
    parser.add_argument(
        "--cpu",
        metavar="CPU",
        help="the LLVM CPU to compile for (default: host, the CPU this runs on; "
        "generic: portable code for any CPU of the architecture; or a name such as "
        "x86-64-v3 or znver4)",
    )
    parser.add_argument(
        "--target-triple",
        metavar="TRIPLE",
        help="cross-compile for this LLVM target triple (e.g. aarch64-linux-gnu), for a "
        "generic CPU of it unless --cpu says which",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="compile even when the compile cache holds this module compiled with the same "
        "flags and tools, and store nothing in it",
    )
    parser.add_argument(
        "--ffi-dispatch",
        action="store_true",
        help="compile each FFI call that can be one into a dispatch that calls its XLA FFI "
        "handler from the compiled code (microseconds a call, where an import served from "
        "Python takes a hundred); rewriter.iree.load must then get an XLA FFI handler for "
        "each of them",
    )
    parser.add_argument(
        "--blas",
        action="store_true",
        help="compile the f32 and f64 matrix products into dispatches that call this machine's "
        "BLAS (gemm), as rewriter.iree.load does with a .mlir; load then serves them "
        "through its executable plugin",
    )
    parser.add_argument(
        "--native-sorts",
        action="store_true",
        help="compile the sorts into dispatches that call the stable sort of abi/iree_sorts.c, "
        "as rewriter.iree.load does with a .mlir, instead of imports served in Python; load "
        "then serves them through its executable plugin",
    )
    args = parser.parse_args(argv)
    if same_file(args.output, args.file):
        parser.error(f"-o {args.output} is the input file {args.file}; nothing was written")
    problem = output_problem(args.output)
    if problem:
        say(f"{args.output}: error: cannot write: {problem}")
        return 1
    try:
        _, signatures = compile_module(
            args.file,
            args.output,
            cpu=args.cpu,
            triple=args.target_triple,
            cache=not args.no_cache,
            ffi_dispatch=args.ffi_dispatch,
            blas_products=ROUTED_ELEMENTS if args.blas else (),
            native_sorts=args.native_sorts,
        )
    except RewriteError as error:  # the module does not parse, or has no entry point
        for diagnostic in error.diagnostics:
            print(diagnostic.format(), file=sys.stderr)
        return 1
    except BuildError as error:
        say(f"{args.file}: error: {error}")
        return 1
    except OSError as error:  # the output cannot be written
        say(f"{args.output}: error: {cannot_write(args.output, error)}")
        return 1
    names = ", ".join(f"{s.module}.{s.name}" for s in signatures if not s.dispatch) or "none"
    say(f"{args.output}: imports {names}")
    dispatched = ", ".join(f"{s.module}.{s.name}" for s in signatures if s.dispatch)
    if dispatched:
        say(f"{args.output}: dispatches {dispatched}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
