"""The prefix of a model's C API names: the default one and what makes one unusable.

Apart from ``c_api.py`` because a compile served from the cache needs them and nothing
else of it (``c_api.py`` takes longer to import than the rest of such a compile does).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..plan.c_names import name_problem, safe_c_name


def default_prefix(text: str, output: str | Path) -> str:
    """The module's name (``module @jit_rms_norm``) as a C identifier and ``_``; for a module
    without one, the output's name without ``lib`` and suffixes (``libmodel.a``: ``model_``)."""
    found = re.search(r'^\s*module\s+@(?:"([^"]*)"|([A-Za-z0-9_$.-]+))', text, re.MULTILINE)
    if found:
        name = found.group(1) if found.group(1) is not None else found.group(2)
    else:
        name = Path(output).name.split(".", 1)[0]
        name = name[3:] if name.startswith("lib") and len(name) > 3 else name
    return safe_c_name(name, fallback="m").rstrip("_") + "_"


def prefix_problem(prefix: str) -> str | None:
    """Why ``prefix`` cannot start the names of a model's C API, or None."""
    if not prefix:
        return "the prefix is empty: every exported name needs one (e.g. --prefix model_)"
    problem = name_problem(prefix)
    if problem:
        return f"--prefix {prefix!r} {problem}"
    return None
