"""Command line of the compiled path; see ``python -m rewriter.compile --help``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..syntax.diagnostics import RewriteError
from .build import compile_module
from .module_file import read_module_file
from .toolchain import ToolchainError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rewriter.compile",
        description="Compile a rewritten module (python -m rewriter output) to a shared object "
        "whose public functions F are C entries _mlir_ciface_rw_entry_F.",
    )
    parser.add_argument("module", type=Path, help="rewritten StableHLO module (.mlir)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="shared object to write")
    parser.add_argument(
        "--link",
        action="append",
        default=[],
        metavar="LIB",
        help="kernel library to link against (path or -l name; repeatable)",
    )
    parser.add_argument(
        "--keep-temps", type=Path, metavar="DIR", help="keep every stage's files in DIR"
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
        help="who computes the matrix products: auto (the OpenBLAS of NumPy's wheel, the "
        "default), none (compiled loops) or the path of a CBLAS library",
    )
    parser.add_argument(
        "--target-cpu",
        default="native",
        metavar="CPU",
        help="the CPU to optimize for: native (this machine, the default), generic (any CPU "
        "of the architecture) or a name clang's -march takes",
    )
    args = parser.parse_args(argv)
    try:
        text = read_module_file(args.module, ToolchainError)
        entries = compile_module(
            text,
            args.output,
            link=args.link,
            keep_temps=args.keep_temps,
            ffi_bridge=args.ffi_bridge,
            blas=args.blas,
            target_cpu=args.target_cpu,
            filename=str(args.module),
        )
    except RewriteError as error:  # an extern's rewriter.xla_ffi description (--ffi-bridge)
        for diagnostic in error.diagnostics:
            print(diagnostic.format(), file=sys.stderr)
        return 1
    except ToolchainError as error:
        print(f"{args.module}: error: {error}", file=sys.stderr)
        return 1
    for entry in entries:
        print(f"{args.output}: {entry.c_symbol} ({entry.name})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
