"""abi/sort_calls.c alone, from a C host under valgrind: the radix sort that orders lines of
``RADIX_FROM`` (256) entries or more gives numpy's stable order for every key format, one
key or two packed into one code, elements of up to 16 bytes carried with the codes,
ascending or descending, and a key whose codes all share
their bytes, and buffers of 2 MB and more (on huge pages where Linux gives them). The
expected orders are numpy's ``argsort(kind="stable")`` and ``lexsort``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from c_programs import built, run_program

from rewriter.abi import bridge_dir

pytestmark = pytest.mark.toolchain("gcc", "valgrind")

SIGNED, UNSIGNED, F32, F64 = 1, 2, 5, 6  # rewriter/compile/sorts.py's formats
CANONICAL, DESCENDING = 1 << 8, 1 << 9
N = 1000
RNG = np.random.default_rng(7)


def _special_f32() -> np.ndarray:
    values = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.5, -1.5], np.float32)
    return np.concatenate([RNG.choice(values, N // 2), RNG.normal(size=N // 2)]).astype(np.float32)


def _descending(order_of: np.ndarray) -> np.ndarray:
    """Stable descending order of integers: ascending of their negation, ties in place."""
    return np.argsort(-order_of.astype(object), kind="stable")


# name: (keys as (array, code)), expected positions
CASES = {
    "f32 with zeros, infinities and NaNs": lambda: (
        [(x := _special_f32(), F32 | CANONICAL)],
        np.argsort(x, kind="stable"),  # numpy: -0 equal to 0, every NaN equal and last
    ),
    "f64 normal": lambda: (
        [(x := RNG.normal(size=N), F64 | CANONICAL)],
        np.argsort(x, kind="stable"),
    ),
    "i16 around zero": lambda: (
        [(x := RNG.integers(-50, 50, N).astype(np.int16), SIGNED)],
        np.argsort(x, kind="stable"),
    ),
    "u8 of four values (one byte)": lambda: (
        [(x := RNG.integers(0, 4, N).astype(np.uint8), UNSIGNED)],
        np.argsort(x, kind="stable"),
    ),
    "u64 descending": lambda: (
        [
            (
                x := RNG.integers(0, 2**64, N, dtype=np.uint64)
                >> RNG.integers(0, 64, N).astype(np.uint64),
                UNSIGNED | DESCENDING,
            )
        ],
        _descending(x),
    ),
    "i64 all equal (every byte shared)": lambda: (
        [(np.full(N, -7, np.int64), SIGNED)],
        np.arange(N),
    ),
    "f32 of 140,000 (buffers of 2 MB and more)": lambda: (
        [(x := RNG.normal(size=140_000).astype(np.float32), F32 | CANONICAL)],
        np.argsort(x, kind="stable"),
    ),
    "i32 then f32, one packed code": lambda: (
        [
            (a := RNG.integers(-3, 3, N).astype(np.int32), SIGNED),
            (b := RNG.integers(0, 5, N).astype(np.float32), F32 | CANONICAL),
        ],
        np.lexsort((b, a)),
    ),
}

_C_TYPES = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t"}


def _host(keys: list[tuple[np.ndarray, int]]) -> str:
    n = len(keys[0][0])
    """A C program sorting the keys and positions 0..N-1 in one call of rw_sort (the table
    of sort_calls.c's header: one line of N along dimension 0), printing the positions on
    one line, then every key's sorted bits."""
    arrays = []
    operands = []
    for index, (array, _) in enumerate(keys):
        bits = array.view(f"u{array.itemsize}")
        items = ", ".join(f"{int(v)}u" for v in bits)
        arrays.append(f"static {_C_TYPES[array.itemsize]} key{index}[{n}] = {{{items}}};")
        operands.append(f"{array.itemsize}, (int64_t)(intptr_t)key{index}, 0, {n}, 1,")
    arrays.append(f"static int32_t positions[{n}];")
    operands.append(f"4, (int64_t)(intptr_t)positions, 0, {n}, 1,")
    prints = [
        f'    for (int i = 0; i < {n}; i++) printf("%llu ", (unsigned long long)key{index}[i]);'
        for index in range(len(keys))
    ]
    described_keys = " ".join(f"{index}, {code}," for index, (_, code) in enumerate(keys))
    return f"""
#include <stdint.h>
#include <stdio.h>
#include "rewriter_sort_table.h"
void _mlir_ciface_rw_sort(table_view *view);
{chr(10).join(arrays)}
int main(void) {{
    for (int i = 0; i < {n}; i++) positions[i] = i;
    int64_t table[] = {{
        1, 0, {len(keys) + 1}, {len(keys)},
        {described_keys}
        {" ".join(operands)}
        0,
    }};
    table_view view = {{table, table, 0, {{sizeof table / sizeof table[0]}}, {{1}}}};
    _mlir_ciface_rw_sort(&view);
    for (int i = 0; i < {n}; i++) printf("%d ", positions[i]);
    printf("\\n");
{chr(10).join(prints)}
    return 0;
}}
"""


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_radix_sort_gives_numpys_stable_order(name: str, tmp_path: Path):
    keys, expected = CASES[name]()
    abi = Path(bridge_dir())
    flags = ("-std=c11", "-O1", f"-I{abi}")
    program = built(tmp_path, "host", _host(keys), [abi / "sort_calls.c"], flags, libraries=())
    run = run_program(program, valgrind=True)
    assert run.returncode == 0, run.stderr
    positions, sorted_keys = run.stdout.split("\n", 1)
    assert [int(p) for p in positions.split()] == [int(p) for p in expected]
    # every key operand permuted with the positions, bit for bit
    bits = [int(b) for b in sorted_keys.split()]
    expected_bits = [
        int(b) for array, _ in keys for b in array[expected].view(f"u{array.itemsize}")
    ]
    assert bits == expected_bits
