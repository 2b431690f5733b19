"""Mutation fuzzing: corpus files, mutated, must give a rewrite or our diagnostic.

``python -m fuzz.rewrite [--seed N] [--count N] [--seconds S]`` mutates the samples and
jax's back-compat exports (byte flips, MLIR-ish tokens inserted, ranges deleted,
duplicated or truncated) and feeds each input to ``rewriter.rewrite``. Anything but a
result or a ``RewriteError`` (another exception, or an input slower than one second) is a
crash: it is written to ``fuzz/crashes/`` and the run fails. ``--count 0`` runs until
``--seconds`` have passed (forever when both are 0).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKENS = [
    b"{",
    b"}",
    b"(",
    b")",
    b"[",
    b"]",
    b"<",
    b">",
    b'"',
    b"\\",
    b"\x00",
    b"\xff",
    b"\n",
    b"\r\n",
    b"%",
    b"@",
    b"#loc",
    b"^bb0:",
    b"stablehlo.custom_call",
    b'"stablehlo.custom_call"',
    b"loc(",
    b"dense<",
    b"array<i64: ",
    b"mhlo.backend_config = {",
    b" : ui8",
    b"tensor<?x",
    b"module {",
    b"func.func @f() {",
    b"{-#",
    b"#-}",
    b"//",
    b"->",
    b"%0:2 = ",
    b"0x",
    b"tuple<",
    b"!stablehlo.token",
    b"operand_layouts = [dense<[0, 1]> : tensor<2xindex>]",
]
SLOW_SECONDS = 1.0


def seeds() -> list[bytes]:
    """The inputs mutations start from: every sample export and jax's back-compat corpus."""
    found = [path.read_bytes() for path in sorted(ROOT.glob("samples/*/*.mlir"))]
    sys.path.insert(0, str(ROOT / "tests"))
    from jax_corpus import corpus

    found += [text.encode() for _, text in corpus() if len(text) < 200_000]
    return found


def mutate(data: bytes, rng: random.Random) -> bytes:
    for _ in range(rng.randint(1, 4)):
        if not data:
            data = rng.choice(TOKENS)
            continue
        at = rng.randrange(len(data))
        choice = rng.randrange(6)
        if choice == 0:  # flip a byte
            data = data[:at] + bytes([rng.randrange(256)]) + data[at + 1 :]
        elif choice == 1:  # insert a token
            data = data[:at] + rng.choice(TOKENS) + data[at:]
        elif choice == 2:  # delete a range
            data = data[:at] + data[at + rng.randint(1, 64) :]
        elif choice == 3:  # duplicate a range
            end = min(len(data), at + rng.randint(1, 256))
            data = data[:end] + data[at:end] + data[end:]
        elif choice == 4:  # truncate
            data = data[:at]
        else:  # splice in a piece of the same input
            start = rng.randrange(len(data))
            data = data[:at] + data[start : start + rng.randint(1, 128)] + data[at:]
    return data


def check(data: bytes) -> str | None:
    """None when the rewrite behaves; else what went wrong."""
    import rewriter

    started = time.perf_counter()
    try:
        rewriter.rewrite(data, filename="fuzz.mlir")
    except rewriter.RewriteError as error:
        if not error.diagnostics or not all(
            d.line >= 1 and d.column >= 1 for d in error.diagnostics
        ):
            return "a RewriteError without a positioned diagnostic"
    except Exception:  # any other exception is exactly what we look for
        return traceback.format_exc()
    seconds = time.perf_counter() - started
    if seconds > SLOW_SECONDS:
        return f"slow: {seconds:.2f} s"
    return None


def run(seed: int, count: int, seconds: float, crashes: Path | None) -> tuple[int, list[str]]:
    rng = random.Random(seed)
    pool = seeds()
    problems: list[str] = []
    started = time.monotonic()
    done = 0
    while (count == 0 or done < count) and (seconds == 0 or time.monotonic() - started < seconds):
        data = mutate(rng.choice(pool), rng)
        problem = check(data)
        done += 1
        if problem:
            problems.append(problem)
            if crashes:
                crashes.mkdir(parents=True, exist_ok=True)
                name = hashlib.sha256(data).hexdigest()[:16]
                (crashes / f"{name}.mlir").write_bytes(data)
                (crashes / f"{name}.txt").write_text(problem)
    return done, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.rewrite", description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=20_000, help="inputs to try (0: no limit)")
    parser.add_argument("--seconds", type=float, default=0, help="time limit (0: none)")
    args = parser.parse_args(argv)
    done, problems = run(args.seed, args.count, args.seconds, ROOT / "fuzz" / "crashes")
    print(f"{done} inputs, {len(problems)} crashes")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
