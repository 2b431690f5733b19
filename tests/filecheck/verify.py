"""Pipe filter for the lit tests: check that MLIR text on stdin is a valid module, echo it.

    %rewrite %s | %verify --iree | filecheck %s

The text is parsed and verified with jaxlib's C++ MLIR (every dialect jax registers:
stablehlo, chlo, func, arith, ...). With ``--iree`` it also goes through IREE's StableHLO
input pipeline (``iree-opt --iree-stablehlo-input-transformation-pipeline``), which turns
it into linalg and rejects custom calls it does not know. With ``--iree-compile`` it is
compiled for llvm-cpu by ``iree-compile`` with the README's flags (a module
rewritten with ``--abi iree``: its externs must become imports). On success the text is
written to stdout unchanged; on failure the reason goes to stderr and the exit status is 1.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys


def jaxlib_verify(text: str) -> str | None:
    """None when jaxlib's MLIR parses and verifies ``text``, else the reason."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    try:
        with mlir.make_ir_context() as context:
            module = ir.Module.parse(text, context=context)
            if not module.operation.verify():
                return "module does not verify"
    except ir.MLIRError as error:
        return str(error)
    return None


def iree_tool(name: str) -> str:
    """``name`` next to this interpreter (the iree-base-compiler wheel), else from PATH."""
    candidate = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.exists(candidate):
        return candidate
    found = shutil.which(name)
    if found:
        return found
    raise SystemExit(f"verify.py: {name} not found: pip install iree-base-compiler")


def iree_verify(text: str) -> str | None:
    """None when IREE's StableHLO input pipeline accepts ``text``, else its stderr."""
    return _run_tool("iree-opt", ["--iree-stablehlo-input-transformation-pipeline"], text)


def _run_tool(tool: str, flags: list[str], text: str) -> str | None:
    """Run an IREE tool on ``text`` (stdin), output discarded: None if it succeeds, else its
    stderr."""
    done = subprocess.run(
        [iree_tool(tool), *flags, "-", "-o", os.devnull],
        input=text,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        return done.stderr.strip() or f"{tool} exited with status {done.returncode}"
    return None


# README's command for a module rewritten with --abi iree (llvm-cpu, f64 kept).
IREE_COMPILE_FLAGS = (
    "--iree-input-type=stablehlo",
    "--iree-input-demote-f64-to-f32=false",
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
)


def iree_compile(text: str) -> str | None:
    """None when ``iree-compile`` turns ``text`` into a .vmfb, else its stderr."""
    return _run_tool("iree-compile", list(IREE_COMPILE_FLAGS), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--iree", action="store_true", help="also run IREE's StableHLO input pipeline on the module"
    )
    parser.add_argument(
        "--iree-compile",
        action="store_true",
        help="also compile the module with iree-compile (llvm-cpu)",
    )
    args = parser.parse_args(argv)
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        print(f"verify.py: input is not UTF-8: {error}", file=sys.stderr)
        return 1
    if not text.strip():
        print("verify.py: empty input", file=sys.stderr)
        return 1
    problem = jaxlib_verify(text)
    if problem is not None:
        print(f"verify.py: jaxlib rejects the module:\n{problem}", file=sys.stderr)
        return 1
    if args.iree:
        problem = iree_verify(text)
        if problem is not None:
            print(f"verify.py: iree-opt rejects the module:\n{problem}", file=sys.stderr)
            return 1
    if args.iree_compile:
        problem = iree_compile(text)
        if problem is not None:
            print(f"verify.py: iree-compile rejects the module:\n{problem}", file=sys.stderr)
            return 1
    sys.stdout.buffer.write(data)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
