"""Serve IREE imports with XLA FFI handlers, through the bridge of ``abi/xla_ffi_bridge.c``.

The imports' ``rewriter.xla_ffi`` descriptions give the FFI adapters (rewriter.emit.ffi_adapters):
``_mlir_ciface_S`` functions of the C contract that build an XLA FFI call frame and call
the handler registered for the target. They are compiled with the bridge into a small
shared library (as ``--ffi-bridge`` does), registered with the given handlers, and then
serve the imports exactly like a C kernel (``KernelImport``): descriptors on the buffer
views' memory. A handler's error is raised by the call as ``HandlerError`` with its message.

Imports compiled into dispatches (``dispatches.py``) get, in the same library, the
executable imports of ``dispatch_adapters.py``, which call the same adapters from IREE's
worker threads; ``dispatch_functions`` gives their addresses to the executable plugin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ..abi import bridge_dir
from ..compile.bridge import BRIDGE_CDEF, BRIDGE_EXPORTS, Bridge, bridge_sources
from ..compile.cache import ObjectCache
from ..compile.handlers import HandlerError, handler_address
from ..compile.toolchain import LLVM_VERSION, compile_objects, find_tool, link_shared_object
from ..emit.ffi_adapters import Extern, scalar_c_type
from ..plan.ffi_facts import FactsError, parse_facts
from .dispatch_adapters import CDEF as DISPATCH_CDEF
from .dispatch_adapters import dispatch_source, exported_symbols
from .dispatches import import_symbol
from .kernels import KernelImport
from .signatures import ImportSignature
from .values import dtype_of, tensor_type

_ELEMENT_BY_SIZE = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t", 16: "rw_c128"}


class FfiBridge:
    """The adapters of some imports, compiled with the bridge and bound to handlers."""

    def __init__(
        self, signatures: Sequence[ImportSignature], handlers: Mapping[str, object], work: Path
    ):
        """Build the adapters of ``signatures``, each served by ``handlers[name]`` (by
        import name); every handler is checked (``handler_address``) before anything is
        compiled or called, and one target takes one handler. Those marked ``dispatch``
        also get their executable imports (``dispatch_adapters.py``)."""
        import cffi

        externs = {}
        addresses: dict[str, int] = {}  # by target
        for signature in signatures:
            where = f"{signature.module}.{signature.name}"
            if not signature.ffi_facts:
                raise FactsError(
                    f"{where} has no rewriter.xla_ffi description "
                    "(a legacy custom call?): an XLA FFI handler cannot serve it"
                )
            extern = Extern(signature.name, parse_facts(signature.ffi_facts))
            externs[signature.name] = extern
            try:
                address = handler_address(handlers[signature.name])
            except (TypeError, ValueError) as error:
                raise ValueError(f"{where}: {error}") from None
            target = extern.facts.target
            if addresses.setdefault(target, address) != address:
                raise ValueError(
                    f"{where} calls the target {target}, which another import calls with "
                    "another handler: one handler serves all the imports of a target"
                )
        sources, flags = bridge_sources(list(externs.values()), work, "rewriter.iree")
        self.dispatched = [s for s in signatures if s.dispatch]
        if self.dispatched:
            dispatch_file = work / "dispatch_adapters.c"
            dispatch_file.write_text(dispatch_source(self.dispatched, externs), encoding="utf-8")
            sources.append(dispatch_file)
        shared_dir = Path(bridge_dir())
        library = work / "libffi_bridge.so"
        # The adapters are what cffi calls here, so they are exported with the host API.
        exports = (*BRIDGE_EXPORTS, "_mlir_ciface_*", *exported_symbols(self.dispatched))
        # The bridge's own C file compiles alike for every module: its object comes from
        # the compile cache after the first time.
        clang = find_tool(f"clang-{LLVM_VERSION}")
        reuse = ObjectCache(clang)
        objects = compile_objects(sources, work / "objects", "-O2", flags, reuse, shared_dir)
        # -Bsymbolic: the dispatches' imports call this library's own adapters, never those
        # of another module's bridge loaded before with the same names.
        link_shared_object(
            objects,
            library,
            [],
            flags=[*flags, "-pthread"],
            exports=exports,
            arguments=["-Wl,-Bsymbolic"],
        )
        self.ffi = cffi.FFI()
        self.ffi.cdef(BRIDGE_CDEF)
        self.ffi.cdef(_declarations(signatures, externs))
        if self.dispatched:
            self.ffi.cdef(DISPATCH_CDEF)
            self.ffi.cdef(
                "\n".join(
                    f"int {import_symbol(s)}(void *, void *, void *);" for s in self.dispatched
                )
            )
        self.library = self.ffi.dlopen(str(library))
        self.bridge = Bridge(self.ffi, self.library)
        self.handlers = dict(handlers)  # capsules: their libraries must stay loaded
        for target, address in addresses.items():
            self.bridge.register(target, address)

    def dispatch_functions(self) -> dict[str, int]:
        """The address of each executable import of the dispatched calls, by symbol."""
        return {
            import_symbol(s): int(
                self.ffi.cast("uintptr_t", getattr(self.library, import_symbol(s)))
            )
            for s in self.dispatched
        }

    def take_dispatch_error(self) -> str | None:
        """The message of the first dispatched call that failed since the last time."""
        if not self.dispatched:
            return None
        buffer = self.ffi.new("char[]", 4096)
        if not self.library.rw_dispatch_take_error(buffer, len(buffer)):
            return None
        return self.ffi.string(buffer).decode("utf-8", "replace")

    def serve(self, signature: ImportSignature, device):
        """A callable for ``PyModuleInterface`` that calls the adapter of ``signature``."""
        kernel = KernelImport(
            getattr(self.library, f"_mlir_ciface_{signature.name}"), signature, device
        )

        def call(*arguments):
            self.bridge.take_error()  # a fresh start for this call's handler
            try:
                returned = kernel(*arguments)
            finally:
                message = self.bridge.take_error()
            if message is not None:
                raise HandlerError(message)
            return returned

        return call


def _declarations(signatures: Sequence[ImportSignature], externs: Mapping[str, Extern]) -> str:
    """cffi declarations of the adapters, with descriptor types of the right element size
    (``KernelImport`` builds its arguments from them)."""
    lines = ["typedef struct { double re, im; } rw_c128;"]
    declared: set[str] = set()

    def descriptor(type_: str) -> str:
        dims, element = tensor_type(type_)
        c_type = _ELEMENT_BY_SIZE[dtype_of(element).itemsize]
        name = f"rw_d_{c_type}_{len(dims)}"
        if name not in declared:
            declared.add(name)
            arrays = f" int64_t sizes[{len(dims)}]; int64_t strides[{len(dims)}];" if dims else ""
            lines.append(
                f"typedef struct {{ {c_type} *allocated; {c_type} *aligned; int64_t offset;"
                f"{arrays} }} {name};"
            )
        return name

    for signature in signatures:
        facts = externs[signature.name].facts
        parameters = []
        if len(signature.results) > 1:
            fields = " ".join(f"{descriptor(t)} r{i};" for i, t in enumerate(signature.results))
            struct = f"rw_results_{signature.name}"
            lines.append(f"typedef struct {{ {fields} }} {struct};")
            parameters.append(f"{struct} *")
        elif signature.results:
            parameters.append(f"{descriptor(signature.results[0])} *")
        contract = signature.contract_types()
        operands = contract[: signature.operand_count]
        parameters += [f"{descriptor(t)} *" for t in operands]
        leaves = facts.leaves()
        for type_, leaf in zip(contract[signature.operand_count :], leaves, strict=True):
            if type_.startswith("tensor<"):
                parameters.append(f"{descriptor(type_)} *")
            else:
                parameters.append(scalar_c_type(leaf.dtype))
        lines.append(f"void _mlir_ciface_{signature.name}({', '.join(parameters) or 'void'});")
    return "\n".join(lines)
