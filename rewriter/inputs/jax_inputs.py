"""jax integration: ``export`` a function and rewrite it in one step; MLIR bytecode, a
``jax.export.Exported`` and its ``serialize()`` bytes as inputs.

jax and jaxlib are imported here only, and only when a binary input or an ``Exported`` has to
be converted: MLIR text never touches them (``import rewriter`` and text rewrites stay
jax-free). Recognising an input is cheap byte inspection:

- MLIR bytecode starts with the magic ``ML\\xefR``. Its producer string says whether it is
  plain bytecode (``MLIR...``), read with ``ir.Module.parse``, or a StableHLO portable
  artifact (``StableHLO_v...``, what ``Exported.mlir_module_serialized`` holds: VHLO ops),
  read with ``stablehlo.deserialize_portable_artifact``. Both are printed with
  ``get_asm(enable_debug_info=True)``, which gives exactly ``Exported.mlir_module()``.
- ``Exported.serialize()`` is a flatbuffer without a file identifier: a little-endian root
  offset, then the root table and its vtable. The structure is checked here (a root offset
  with NUL bytes, which no text has, pointing at a table whose vtable lies inside the
  buffer); jax's deserializer then decides.
- Anything else is text, decoded as UTF-8 as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..syntax.diagnostics import Diagnostic, RewriteError

BYTECODE_MAGIC = b"ML\xefR"

# How each binary kind is named in messages.
KIND_NAMES = {
    "bytecode": "MLIR bytecode",
    "exported": "a serialized jax.export.Exported",
}


class InputError(RewriteError):
    """A binary input that cannot be converted to MLIR text (or jax is missing to do so).

    A ``RewriteError`` with one diagnostic at 1:1, since no line of text exists yet;
    ``str()`` gives ``file: error: message``.
    """

    def __init__(self, filename: str, message: str):
        super().__init__([Diagnostic(filename, 1, 1, message)])
        self.filename = filename

    def __str__(self) -> str:
        return f"{self.filename}: error: {self.message}"


# ---------------------------------------------------------------- recognising inputs


def input_kind(data: bytes) -> str:
    """``"bytecode"``, ``"exported"`` (``Exported.serialize()``) or ``"text"``."""
    if data[:4] == BYTECODE_MAGIC:
        return "bytecode"
    if _looks_like_flatbuffer(data):
        return "exported"
    return "text"


def _looks_like_flatbuffer(data: bytes) -> bool:
    """A flatbuffer's root offset and its root table's vtable are consistent."""
    size = len(data)
    if size < 16 or 0 not in data[:4]:
        return False
    root = int.from_bytes(data[0:4], "little")
    if root % 4 or not 4 <= root <= size - 4:
        return False
    vtable = root - int.from_bytes(data[root : root + 4], "little", signed=True)
    if vtable % 2 or not 4 <= vtable <= size - 4:
        return False
    vtable_size = int.from_bytes(data[vtable : vtable + 2], "little")
    table_size = int.from_bytes(data[vtable + 2 : vtable + 4], "little")
    return (
        vtable_size >= 4
        and vtable_size % 2 == 0
        and vtable + vtable_size <= size
        and table_size >= 4
        and root + table_size <= size
    )


def is_exported(value: object) -> bool:
    """Whether ``value`` is a ``jax.export.Exported`` (checked without importing jax)."""
    return type(value).__name__ == "Exported" and hasattr(value, "mlir_module_serialized")


def binary_text(data: bytes, kind: str, filename: str = "<string>") -> str:
    """The MLIR text of binary input ``data`` of ``kind`` (see ``input_kind``).

    Raises ``InputError`` when jax is missing or the data cannot be read.
    """
    if kind == "bytecode":
        return bytecode_text(data, filename)
    if kind == "exported":
        return serialized_exported_text(data, filename)
    raise ValueError(f"not a binary input kind: {kind!r}")


# ---------------------------------------------------------------- conversions


# What installs every package that reading binary inputs needs (pyproject's `jax` extra).
JAX_EXTRA = "stablehlo-ffi-rewriter[jax]"


def _require_jax(filename: str, what: str) -> Any:
    try:
        import jax
        import jax.export  # noqa: F401
        import jax.interpreters.mlir  # noqa: F401
    except ImportError as error:
        raise InputError(
            filename, f"reading {what} needs jax and jaxlib (pip install '{JAX_EXTRA}'): {error}"
        ) from None
    return jax


def bytecode_producer(data: bytes) -> str:
    """The producer string of MLIR bytecode (``MLIR23.0.0git``, ``StableHLO_v1.15.0``)."""
    position = len(BYTECODE_MAGIC)
    if position >= len(data):
        return ""
    # The version is a prefix varint: the trailing zero bits of its first byte count the
    # bytes that follow (a zero byte: eight follow).
    first = data[position]
    extra = 8 if first == 0 else (first & -first).bit_length() - 1
    start = position + 1 + extra
    end = data.find(b"\0", start)
    if end == -1:
        return ""
    return data[start:end].decode("utf-8", "replace")


def bytecode_text(data: bytes, filename: str = "<string>") -> str:
    """MLIR bytecode (plain, or a StableHLO portable artifact) printed as MLIR text."""
    _require_jax(filename, "MLIR bytecode")
    from jax.interpreters import mlir
    from jaxlib.mlir import ir

    context = mlir.make_ir_context()
    messages: list[str] = []

    def collect(diagnostic: Any) -> bool:  # keeps MLIR's C++ diagnostics off stderr
        messages.append(str(diagnostic.message))
        return True

    context.attach_diagnostic_handler(collect)
    producer = bytecode_producer(data)
    try:
        if producer.startswith("StableHLO_"):
            from jaxlib.mlir.dialects import stablehlo

            module = stablehlo.deserialize_portable_artifact(context, data)
        else:
            module = ir.Module.parse(data, context=context)
        text = module.operation.get_asm(enable_debug_info=True)
    except Exception as error:  # MLIRError for bytecode, ValueError for portable artifacts
        details = [str(d.message) for d in getattr(error, "error_diagnostics", ())]
        details = details or messages or [str(error)]
        made_by = f" (produced by {producer})" if producer else ""
        message = f"cannot read MLIR bytecode{made_by}: " + "; ".join(details)
        raise InputError(filename, _one_line(message)) from None
    assert isinstance(text, str)  # get_asm gives text unless asked for binary
    return text


def exported_text(exported: Any, filename: str = "<string>") -> str:
    """The MLIR text of a ``jax.export.Exported``: what ``exported.mlir_module()`` gives."""
    return bytecode_text(bytes(exported.mlir_module_serialized), filename)


class ExportedArguments(NamedTuple):
    """What an ``Exported`` says of ``main``'s arguments: the MLIR type of each argument
    ``Exported.call`` takes (``in_avals``), and the indices of those ``main`` declares
    (``module_kept_var_idx``): ``rewriter/plan/kept_arguments.py`` declares the others."""

    types: tuple[str, ...]
    kept: tuple[int, ...]


def exported_arguments(exported: Any) -> ExportedArguments:
    """The MLIR type of each argument ``Exported.call`` takes (``Exported.in_avals``), as
    jax writes it in a module (``tensor<2x3xf32>``; ``?`` for a symbolic size), and those
    ``main`` declares (``Exported.module_kept_var_idx``)."""
    from jax.interpreters import mlir

    context = mlir.make_ir_context()
    types = []
    with context:
        for aval in exported.in_avals:
            element = str(mlir.dtype_to_ir_type(aval.dtype))
            dims = "".join(f"{d}x" if isinstance(d, int) else "?x" for d in aval.shape)
            types.append(f"tensor<{dims}{element}>")
    return ExportedArguments(tuple(types), tuple(exported.module_kept_var_idx))


def deserialize_exported(data: bytes, filename: str = "<string>") -> Any:
    """``jax.export.deserialize(data)``, with failures as ``InputError``."""
    jax = _require_jax(filename, "a serialized jax.export.Exported")
    try:
        return jax.export.deserialize(bytearray(data))
    except ImportError as error:  # jax's serialization needs the flatbuffers package
        missing = "the flatbuffers package" if "flatbuffers" in str(error) else str(error)
        message = (
            f"reading a serialized jax.export.Exported needs {missing}: pip install '{JAX_EXTRA}'"
        )
        raise InputError(filename, _one_line(message)) from None
    except Exception as error:  # whatever a damaged flatbuffer makes the reader raise
        kind = type(error).__name__
        if type(error).__module__ not in ("builtins", "__main__"):
            kind = f"{type(error).__module__}.{kind}"
        message = f"cannot read a serialized jax.export.Exported: {kind}: {error}"
        raise InputError(filename, _one_line(message)) from None


def serialized_exported_text(data: bytes, filename: str = "<string>") -> str:
    return exported_text(deserialize_exported(data, filename), filename)


def _one_line(message: str) -> str:
    return " ".join(message.split())


# ---------------------------------------------------------------- export + rewrite

# jax's refusal to export custom calls without a compatibility guarantee
# (jax/_src/export/_export.py, _check_module): this sentence, "Examples are:", then one line
# per refused op, `{op} at {op.location}`, listing every refused op of the module.
_REFUSAL = "Cannot serialize code with custom calls whose targets have no compatibility"
_PRETTY_TARGET = re.compile(
    r'^(?:%[^=\n]*= )?stablehlo\.custom_call @(?:"((?:[^"\\\n]|\\.)*)"|([\w$.\-]+))',
    re.MULTILINE,
)
_GENERIC_TARGET = re.compile(
    r'^(?:%[^=\n]*= )?"stablehlo\.custom_call"\(.*?\bcall_target_name = "((?:[^"\\\n]|\\.)*)"',
    re.MULTILINE,
)


def refused_targets(message: str) -> list[str]:
    """The custom call targets named in jax's "no compatibility guarantees" error."""
    if _REFUSAL not in message:
        return []
    from ..syntax.strings import decode_string

    found: list[str] = []
    for match in _PRETTY_TARGET.finditer(message):
        quoted, bare = match.groups()
        name = bare if bare is not None else _decoded(decode_string, quoted)
        if name not in found:
            found.append(name)
    for match in _GENERIC_TARGET.finditer(message):
        name = _decoded(decode_string, match.group(1))
        if name not in found:
            found.append(name)
    return found


def _decoded(decode_string: Any, body: str) -> str:
    return decode_string(f'"{body}"').decode("utf-8", "replace")


def export_exported(
    fn: Any, *args: Any, platforms: Sequence[str] | None = None, **jit_kwargs: Any
) -> Any:
    """``jax.export.export(jax.jit(fn, **jit_kwargs), platforms=...)(*args)``, with the custom
    call safety check disabled for exactly the targets jax refuses (the FFI targets).

    The export is tried first; jax's refusal names every refused call of the lowered module
    (ffi_call primitives at any depth, and calls made by custom lowering rules, which no
    jaxpr shows), so their targets are disabled and the export retried. The retry reuses
    jax's tracing and lowering caches. Any other error is jax's own, raised unchanged.
    """
    import jax

    if jit_kwargs or not isinstance(fn, jax.stages.Wrapped):
        fn = jax.jit(fn, **jit_kwargs)
    disabled: list[str] = []
    while True:
        checks = [jax.export.DisabledSafetyCheck.custom_call(t) for t in disabled]
        try:
            return jax.export.export(fn, platforms=platforms, disabled_checks=checks)(*args)
        except ValueError as error:
            new = [t for t in refused_targets(str(error)) if t not in disabled]
            if not new:
                raise
            disabled += new
