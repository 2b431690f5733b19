"""Shared helper for the sample exports: export a function with jax.export and print it.

Every ``samples/NAME/export.py`` prints ``exp.mlir_module()`` exactly as jax produced it, with
one documented change: jax writes the source file names of the Python frames into the
locations, as absolute paths (``loc("/abs/checkout/samples/NAME/export.py":30:11 to :39)``).
``relative_locations`` rewrites those file names relative to the checkout directory (the
parent of ``samples/``), so they read ``loc("samples/NAME/export.py":30:11 to :39)`` and the
output is the same byte for byte whatever the checkout directory and working directory.

The text depends on the jax version (0.10.2 here) and on jax's configuration: regenerate a
sample with ``python samples/NAME/export.py > samples/NAME/NAME.mlir`` with no ``JAX_*``
environment variables set (``JAX_ENABLE_X64=1``, for one, turns loop counters into i64).
The callsite locations also name the frames of this module, so editing it shifts line
numbers in every sample. ``tests/test_sample_exports.py`` checks that all are up to date.
"""

import os
import re
import sys

import jax

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

# The file name of a file location: a quoted string directly followed by ":<line>".
_FILE_NAME = re.compile(r'"([^"\\]*)":(?=\d)')


def relative_locations(text: str, root: str = REPO_ROOT) -> str:
    """Rewrite the file names of file locations as paths relative to ``root``.

    Names are compared after ``os.path.realpath``, so symlinks, ``..`` or ``//`` in the
    path a script was started with make no difference. Nothing else in ``text`` is
    touched. A file outside ``root`` raises: its name would depend on the machine.
    """

    def relative(match: re.Match) -> str:
        real = os.path.realpath(match.group(1))
        if os.path.commonpath([real, root]) != root:
            raise RuntimeError(f"file location outside {root!r}: {match.group(1)!r}")
        return '"' + os.path.relpath(real, root).replace(os.sep, "/") + '":'

    return _FILE_NAME.sub(relative, text)


def export_text(fun, *args, targets=()) -> str:
    """Export ``jax.jit(fun)`` for CPU at the given argument shapes; return its MLIR text.

    ``targets`` are FFI targets unknown to jax: the export's safety check for custom
    calls is disabled for exactly these.
    """
    exp = jax.export.export(
        jax.jit(fun),
        platforms=["cpu"],
        disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(t) for t in targets],
    )(*args)
    return relative_locations(exp.mlir_module())


def export_and_print(fun, *args, targets=()) -> None:
    """Write ``export_text(fun, *args, targets=targets)`` to stdout unchanged, as UTF-8."""
    sys.stdout.buffer.write(export_text(fun, *args, targets=targets).encode("utf-8"))
    sys.stdout.buffer.flush()
