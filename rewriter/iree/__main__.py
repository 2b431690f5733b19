"""``python -m rewriter.iree MODEL.mlir -o MODEL.vmfb [--cpu CPU] [--target-triple TRIPLE]``:
compile a module rewritten with ``--abi iree`` for llvm-cpu (this machine's CPU unless told
otherwise), with the import signatures ``rewriter.iree.load`` needs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .build import COMPILE_FLAGS, BuildError, compile_module, target_flags


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rewriter.iree",
        description="Compile a module rewritten with --abi iree into a .vmfb that "
        "rewriter.iree.load can run (iree-compile "
        + " ".join((*COMPILE_FLAGS, *target_flags()))
        + ").",
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
    args = parser.parse_args(argv)
    try:
        _, signatures = compile_module(
            args.file, args.output, cpu=args.cpu, triple=args.target_triple
        )
    except BuildError as error:
        print(f"{args.file}: error: {error}", file=sys.stderr)
        return 1
    names = ", ".join(f"{s.module}.{s.name}" for s in signatures) or "none"
    print(f"{args.output}: imports {names}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
