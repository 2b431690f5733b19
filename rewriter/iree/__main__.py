"""``python -m rewriter.iree MODEL.mlir -o MODEL.vmfb``: compile a module rewritten with
``--abi iree`` for llvm-cpu, with the import signatures ``rewriter.iree.load`` needs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .build import COMPILE_FLAGS, BuildError, compile_module


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rewriter.iree",
        description="Compile a module rewritten with --abi iree into a .vmfb that "
        "rewriter.iree.load can run (iree-compile " + " ".join(COMPILE_FLAGS) + ").",
    )
    parser.add_argument("file", metavar="FILE", help="the rewritten module (.mlir)")
    parser.add_argument("-o", "--output", metavar="OUT", required=True, help="the .vmfb")
    args = parser.parse_args(argv)
    try:
        _, signatures = compile_module(args.file, args.output)
    except BuildError as error:
        print(f"{args.file}: error: {error}", file=sys.stderr)
        return 1
    names = ", ".join(f"{s.module}.{s.name}" for s in signatures) or "none"
    print(f"{args.output}: imports {names}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
