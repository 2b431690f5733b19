"""Run a module rewritten with ``--abi iree`` in ``iree.runtime``, its imports served here.

IREE turns every extern ``@ffi.S`` into an import of the VM module ``ffi``, which must be
registered in the same context before the program. ``load`` builds that module with
``iree.runtime.PyModuleInterface``: one exported function per import, with the import's
calling convention, each calling the implementation given for it. The VM hands the
arguments over in import order (rewriter/plan/calling_conventions.py); the implementation
gets them back in contract order (operands, then attributes in dictionary order).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import threading
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from ..compile.arguments import Parameter, check_count, convert
from ..compile.extras import needs
from ..compile.handlers import is_ffi_handler
from ..compile.load_errors import LoadError
from ..compile.loader import CompiledModule
from ..compile.shape_checks import failed_check
from ..compile.toolchain import ToolchainError
from ..inputs.temporary import temporary_folder
from ..plan.ffi_facts import FactsError
from . import blas_gemm, calls, declarations, plugin, sort_library
from .blas_products import IMPORT_PREFIX, ROUTED_ELEMENTS
from .build import (
    BINDING_ALIGNMENT_KEY,
    SHAPE_CHECK_KEY,
    WRITES_ARGUMENTS_KEY,
    BuildError,
    Vmfb,
    blas_products_in,
    compile_module,
    native_sorts_in,
    open_vmfb,
    signatures_in,
)
from .call_errors import CallErrors
from .drivers import BY_SIZE, SizedWork, chosen_driver, sized_work
from .ffi_handlers import FfiBridge
from .implementations import implementations
from .kernels import KernelImport, KernelSignatureError
from .signatures import ImportSignature
from .sorts import SORT_MODULE, sort_server
from .values import (
    BUFFER_ALIGNMENT,
    attribute_value,
    buffer_view,
    dtype_of,
    host_view,
    input_view,
    shape_matches,
    tensor_type,
)


class PythonImport:
    """Serves an import with a Python callable on numpy arrays and attribute values."""

    def __init__(self, function: Callable[..., object], signature: ImportSignature, device):
        self.function = function
        self.signature = signature
        self.device = device
        self.contract = signature.contract_types()

    def __call__(self, *arguments):
        signature = self.signature
        raws = signature.in_contract_order(arguments)
        contract = [
            host_view(raw, tensor_type(type_)[1]) if _is_tensor(type_) else raw
            for raw, type_ in zip(raws, self.contract, strict=True)
        ]
        operands = signature.operand_count
        values = contract[:operands] + [
            attribute_value(raw, source)
            for raw, source in zip(contract[operands:], signature.attribute_types, strict=True)
        ]
        returned = self.function(*values)
        results = self._results(returned)
        references = [
            buffer_view(self.device, array, tensor_type(type_)[1])
            for array, type_ in zip(results, signature.results, strict=True)
        ]
        if not references:
            return None
        return references[0] if len(references) == 1 else tuple(references)

    def _results(self, returned) -> list[np.ndarray]:
        """The returned arrays, checked against the import's result types."""
        signature = self.signature
        name = f"{signature.module}.{signature.name}"
        expected = len(signature.results)
        if expected == 0:
            if returned is not None:
                raise TypeError(f"{name} has no results, but its implementation returned one")
            return []
        items = list(returned) if isinstance(returned, (tuple, list)) else [returned]
        if len(items) != expected:
            raise TypeError(
                f"{name} returns {expected} arrays; its implementation gave {len(items)}"
            )
        arrays = []
        for index, (item, type_) in enumerate(zip(items, signature.results, strict=True)):
            array = np.asarray(item)
            dims, element = tensor_type(type_)
            if array.dtype != dtype_of(element) or not shape_matches(array.shape, dims):
                raise TypeError(
                    f"{name}: result {index} must be {type_}; the implementation returned "
                    f"{array.dtype}{list(array.shape)}"
                )
            arrays.append(array)
        return arrays


def _is_tensor(type_: str) -> bool:
    return type_.startswith("tensor<")


def _is_cffi_function(function: object) -> bool:
    return type(function).__module__ == "_cffi_backend" or (
        type(getattr(function, "__self__", None)).__name__ == "Lib"
    )


class IreeModule(CompiledModule):
    """The public functions of a loaded module, as attributes and by name (like a module of
    ``rewriter.compile``); keeps the context and the import module alive until ``close``."""

    def __init__(
        self,
        functions: dict[str, Callable[..., object]],
        keep_alive: list[object],
        handles: dict[str, calls.Call | Callable[..., object]],
        driver: str = "local-task",
        parts: list[IreeModule] | None = None,
    ):
        super().__init__(functions, keep_alive)
        self._handles = handles  # what the functions call; emptied by close()
        # The IREE driver that runs the module; BY_SIZE: each call's by its sizes, on one
        # of ``parts``, the module loaded on each driver.
        self.driver = driver
        # the module on each driver a call has needed: a list that grows as calls do
        self._parts = parts if parts is not None else []
        # Each function's dimensions of dynamic size: (argument, dimension).
        self.dynamic_dimensions: dict[str, list[tuple[int, int]]] = {}
        _LOADED.add(self)

    def close(self) -> None:
        """Release the IREE context, its modules and the imports now; the functions (and
        any reference kept to one) then raise. Done for every module at interpreter exit:
        IREE's bindings (nanobind) report whatever is still alive then as leaked."""
        for handle in self._handles.values():
            if isinstance(handle, calls.Call):
                handle.close()
        self._handles.clear()
        self._keep_alive.clear()
        for part in self._parts:
            part.close()


_LOADED: weakref.WeakSet[IreeModule] = weakref.WeakSet()
_CHOICES = 256  # the sizes whose driver a function of a module of dynamic shapes remembers


@atexit.register
def _release_loaded_modules() -> None:
    for module in list(_LOADED):
        module.close()
    gc.collect()  # the import module and its Python callables hold each other


def load(
    path: str | os.PathLike[str],
    *,
    imports: Mapping[str, object],
    driver: str | None = None,
    cpu: str | None = None,
    compile_args: tuple[str, ...] = (),
) -> IreeModule:
    """Compile (``.mlir``) or open (``.vmfb``) a module rewritten with ``--abi iree``, serve
    its imports with ``imports`` and return its public functions.

    ``imports`` maps each import's target, or its name (``S`` of ``@ffi.S``), to a Python
    callable taking numpy arrays and attribute values in contract order and returning a
    numpy array (a tuple of them for several results), to a cffi function pointer of a C
    kernel following the contract, or to an XLA FFI handler (as ``rewriter.compile.load``
    takes one: a PyCapsule, an ``{"execute": capsule}`` bundle, a ctypes function or an
    address; served through the FFI bridge); ``implementations.py`` says which key serves
    which import, and keys that serve none are ignored. The functions check and convert
    their arguments as the compiled path's do (``rewriter.compile.arguments``) and return
    numpy arrays (a tuple for several results).

    ``driver`` is IREE's CPU driver, ``"local-task"`` or ``"local-sync"``; without one, a
    module of little estimated work runs on ``local-sync``, one of much work or of large
    element operations that workers share on ``local-task`` (``drivers.py`` says why), and
    one of dynamic shapes runs each call on the driver its own sizes' work chooses, loaded on
    a driver when a call first needs it (``driver`` is then ``BY_SIZE``). A
    ``.mlir`` is compiled for this machine's CPU; ``cpu`` names another (``"generic"``: the
    portable code of IREE's default); ``compile_args`` go to ``iree-compile`` last.
    """
    with needs("iree", "iree.runtime"):
        path = Path(path)
        vmfb = _open_vmfb(path) if path.suffix == ".vmfb" else None
        recorded = vmfb.attributes if vmfb is not None else None
        sized = sized_work(path, recorded) if driver is None else None
        if sized is not None:
            return _load_by_size(path, vmfb, imports, sized, cpu, compile_args)
        chosen = driver if driver is not None else chosen_driver(path, recorded)
        return _load(path, vmfb, imports, chosen, cpu, compile_args)


def _load_by_size(
    path: Path,
    vmfb: Vmfb | None,
    imports: Mapping[str, object],
    sized: SizedWork,
    cpu: str | None,
    compile_args: tuple[str, ...],
) -> IreeModule:
    """The module of dynamic shapes at ``path``, each call of a function on the driver that
    ``sized`` chooses for the largest dynamic size of its arguments (``drivers.py``). One
    program, compiled for ``local-task`` (``local-sync`` runs its blocks one after the
    other), loaded on ``local-sync`` now and on ``local-task`` when a call first needs it:
    a copy of its constants per driver used."""

    def load_on(driver: str) -> IreeModule:
        return _load(path, vmfb, imports, driver, cpu, compile_args, "local-task")

    drivers = _Drivers(load_on, load_on("local-sync"))
    first = drivers.loaded[0]
    functions = {name: _by_size(name, first, drivers, sized) for name in first.functions}
    return IreeModule(functions, [], {}, BY_SIZE, drivers.loaded)


class _Drivers:
    """A module loaded on each driver a call has needed (``loaded``, the first given)."""

    def __init__(self, load_on: Callable[[str], IreeModule], first: IreeModule):
        self._load_on = load_on
        self.loaded = [first]
        self._lock = threading.Lock()

    def on(self, driver: str) -> IreeModule:
        """The module on ``driver``, loaded now if no call needed it before."""
        for part in self.loaded:
            if part.driver == driver:
                return part
        with self._lock:
            for part in self.loaded:
                if part.driver == driver:
                    return part
            part = self._load_on(driver)
            self.loaded.append(part)
            return part


def _by_size(
    name: str, first: IreeModule, drivers: _Drivers, sized: SizedWork
) -> Callable[..., object]:
    """The function ``name`` of the module on the driver ``sized`` chooses for the largest
    of its arguments' dynamic dimensions (as ``first`` declares them), each size's choice
    made once."""
    dynamic = first.dynamic_dimensions.get(name, [])
    chosen: dict[int, str] = {}

    def call(*arrays):
        size = 1
        for argument, dimension in dynamic:
            if argument < len(arrays):
                shape = np.shape(arrays[argument])
                if dimension < len(shape):
                    size = max(size, int(shape[dimension]))
        driver = chosen.get(size)
        if driver is None:
            driver = sized.driver(size)
            if len(chosen) < _CHOICES:
                chosen[size] = driver
        return drivers.on(driver).functions[name](*arrays)

    call.__name__ = name
    call.__doc__ = getattr(first.functions[name], "__doc__", None)
    return call


def _load(
    path: Path,
    vmfb: Vmfb | None,
    imports: Mapping[str, object],
    driver: str,
    cpu: str | None,
    compile_args: tuple[str, ...],
    compiled_for: str | None = None,
) -> IreeModule:
    """``load`` on ``driver``, a ``.mlir`` compiled for ``compiled_for`` (``driver`` when
    None)."""
    import iree.runtime as rt

    config, plugin_problem = _config(driver)
    # FFI calls served by XLA FFI handlers become dispatches when the driver has the plugin.
    selection = {k: is_ffi_handler(v) for k, v in imports.items()} if not plugin_problem else {}
    # So do the matrix products that a BLAS computes faster than IREE (blas_products.py).
    gemm = blas_gemm.functions() if not plugin_problem else {}
    products = [e for e in ROUTED_ELEMENTS if gemm.get(IMPORT_PREFIX + e)]
    # And the sorts, by the stable sort of abi/iree_sorts.c (sort_dispatches.py).
    sorting = sort_library.functions() if not plugin_problem else {}
    data, signatures = _program(
        path, vmfb, cpu, compile_args, selection, products, compiled_for or driver,
        bool(sorting),
    )  # fmt: skip
    if vmfb is not None:
        _check_blas(path, vmfb, gemm, plugin_problem)
        _check_native_sorts(path, vmfb, sorting, plugin_problem)
    sorts = [s for s in signatures if s.module == SORT_MODULE]
    signatures = [s for s in signatures if s.module != SORT_MODULE]
    chosen = implementations(path, signatures, imports)
    _check_dispatched(path, signatures, chosen, plugin_problem)
    vm_imports = [s for s in signatures if not s.dispatch]
    _check_modules(path, vm_imports)
    errors = CallErrors()
    bridge = _ffi_bridge(path, signatures, chosen)
    keep_alive: list[object] = [config, errors, bridge]
    modules = _import_modules(vm_imports, chosen, bridge, config.device, errors)
    modules += _sort_modules(sorts, config.device, errors)
    program = rt.VmModule.copy_buffer(config.vm_instance, data)
    dispatched = bridge.dispatch_functions() if bridge is not None else {}
    offered = {**gemm, **sorting, **dispatched}
    try:
        with plugin.registered(offered) if offered else contextlib.nullcontext():
            context = rt.SystemContext(vm_modules=[*modules, program], config=config)
    except RuntimeError as error:
        raise LoadError(f"{path}: IREE cannot load the module: {error}") from None
    keep_alive += [context, modules]
    bound = context.modules[program.name]
    dispatch_error = bridge.take_dispatch_error if bridge is not None and dispatched else None
    # Without Python imports or FFI dispatches, IREE's own errors are all a call can raise.
    guarded = errors if modules or dispatch_error is not None else None
    handles: dict[str, calls.Call | Callable[..., object]] = {}
    dynamic: dict[str, list[tuple[int, int]]] = {}
    for name in program.function_names:
        parameters = declarations.parameters(program, name)
        dynamic[name] = [
            (parameter.index, d)
            for parameter in parameters or []
            if parameter is not None
            for d, size in enumerate(parameter.shape)
            if size == -1
        ]
        written = _written_arguments(program, name)
        made = calls.plan(
            name, context.vm_context, program, config.device, parameters, written, guarded,
            dispatch_error, _binding_alignment(program, name),
        )  # fmt: skip
        handles[name] = made or _invoker_call(
            name, bound[name], errors, parameters, config.device, written, dispatch_error
        )
    functions = {
        name: made.function if isinstance(made, calls.Call) else _public_function(name, handles)
        for name, made in handles.items()
    }
    loaded = IreeModule(_with_shape_checks(program, functions), keep_alive, handles, driver)
    loaded.dynamic_dimensions = dynamic
    return loaded


def _with_shape_checks(
    program, functions: dict[str, Callable[..., object]]
) -> dict[str, Callable[..., object]]:
    """``functions`` with each that has a check of jax's shape assertions
    (``build.SHAPE_CHECK_KEY``) calling it first, and without the checks themselves."""
    checks: dict[str, tuple[str, tuple[str, ...], bool]] = {}
    for name in functions:
        function = program.lookup_function(name)
        recorded = (function.reflection if function else {}).get(SHAPE_CHECK_KEY)
        if recorded is None:
            continue
        check = json.loads(recorded)
        if check["function"] in functions:
            sizes_only = check.get("sizes_only") is True
            checks[name] = (check["function"], tuple(check["messages"]), sizes_only)
    checked = dict(functions)
    for name, (check, messages, sizes_only) in checks.items():
        checked[name] = _checked(name, functions[name], functions[check], messages, sizes_only)
    for check, _, _ in checks.values():
        checked.pop(check, None)
    return checked


# The shapes whose check passed that a function remembers (``_checked``), at most.
_PASSED_SHAPES = 64


def _checked(
    name: str,
    function: Callable[..., object],
    check: Callable[..., object],
    messages: tuple[str, ...],
    sizes_only: bool = False,
) -> Callable[..., object]:
    """``function``, which first runs ``check`` on its arguments and raises ``ValueError``
    with jax's message of the first assertion they break, numbers in place, as
    ``Exported.call`` does (``shape_checks.py``).

    A check that reads nothing but the arguments' sizes (``sizes_only``) passes again for
    arguments of shapes it passed: those shapes are remembered (up to ``_PASSED_SHAPES``)
    and the check, a call of its own into IREE (10 us, as long as a small program's), is
    not run again for them. A check that failed is run on every call."""
    passed: set[tuple[tuple[int, ...], ...]] = set()

    def call(*arrays):
        shapes = tuple(np.shape(a) for a in arrays) if sizes_only else None
        if shapes is None or shapes not in passed:
            numbers = np.asarray(check(*arrays))
            if numbers[0]:
                raise ValueError(f"{name}: {failed_check(messages, [int(n) for n in numbers])}")
            if shapes is not None and len(passed) < _PASSED_SHAPES:
                passed.add(shapes)
        return function(*arrays)

    call.__name__ = name
    call.__doc__ = getattr(function, "__doc__", None)
    return call


def _config(driver: str):
    """``iree.runtime.Config(driver)``, the executable plugin named first
    (``plugin.config``); and why the driver cannot serve FFI calls in dispatches, or None
    when it can."""
    import iree.runtime as rt

    try:
        config = plugin.config(driver)
    except (ToolchainError, OSError) as error:
        return rt.Config(driver), f"the executable plugin cannot be built: {error}"
    if not plugin.has_plugin(driver):
        return config, (
            f"the driver {driver} was created before rewriter.iree could name its "
            "executable plugin (--executable_plugin): load a module before anything else "
            "creates the driver"
        )
    return config, None


def _check_blas(
    path: Path, vmfb: Vmfb, gemm: Mapping[str, int], plugin_problem: str | None
) -> None:
    """A ``.vmfb`` whose products call a BLAS runs only where the plugin offers gemm (a
    ``.mlir`` is compiled here, with what is offered)."""
    try:
        needed = blas_products_in(vmfb.attributes)
    except BuildError as error:
        raise LoadError(f"{path}: {error}") from None
    missing = [e for e in needed if not gemm.get(IMPORT_PREFIX + e)]
    if missing:
        why = plugin_problem or "no system OpenBLAS (libopenblas.so.0) or clang was found"
        raise LoadError(
            f"{path}: its {', '.join(missing)} matrix products are compiled as dispatches "
            f"that call a BLAS, but {why}; compile it without blas_products (--blas)"
        )


def _check_native_sorts(
    path: Path, vmfb: Vmfb, sorting: Mapping[str, int], plugin_problem: str | None
) -> None:
    """A ``.vmfb`` whose sorts are dispatches runs only where the plugin offers the sort."""
    if native_sorts_in(vmfb.attributes) and not sorting:
        why = plugin_problem or "no C compiler (clang) was found to build abi/iree_sorts.c"
        raise LoadError(
            f"{path}: its sorts are compiled as dispatches that call abi/iree_sorts.c, but "
            f"{why}; compile it without native_sorts"
        )


def _check_dispatched(
    path: Path,
    signatures: list[ImportSignature],
    chosen: Mapping[str, object],
    plugin_problem: str | None,
) -> None:
    """The calls compiled into dispatches can be served: by XLA FFI handlers, through the
    plugin."""
    dispatched = [s for s in signatures if s.dispatch]
    if not dispatched:
        return
    listed = ", ".join(f"{s.module}.{s.name}" for s in dispatched)
    if plugin_problem:
        raise LoadError(f"{path}: {listed} are compiled as dispatches, but {plugin_problem}")
    others = [f"{s.module}.{s.name}" for s in dispatched if not is_ffi_handler(chosen[s.name])]
    if others:
        raise LoadError(
            f"{path}: {', '.join(others)} are compiled as dispatches that only an XLA FFI "
            "handler can serve; give one, or compile without ffi_dispatch for these"
        )


def _program(
    path: Path,
    vmfb: Vmfb | None,
    cpu: str | None,
    compile_args: tuple[str, ...],
    ffi_dispatch: Mapping[str, bool],
    blas_products: list[str],
    driver: str,
    native_sorts: bool,
) -> tuple[bytes, list[ImportSignature]]:
    """The ``.vmfb`` bytes and import signatures: those of ``vmfb`` (``path`` read by
    ``_open_vmfb``), else ``path`` compiled for ``driver`` (the calls ``ffi_dispatch``
    chooses as dispatches, the products of ``blas_products`` in the BLAS)."""
    try:
        if vmfb is not None:
            return vmfb.data, signatures_in(vmfb.attributes)
        if _is_shared_object(path):
            raise LoadError(
                f"{path} is a shared object, not a module of IREE: load one of "
                "rewriter.compile with rewriter.compile.load; rewriter.iree.load takes a .vmfb "
                "or a module rewritten with --abi iree (.mlir)"
            )
        chosen = ffi_dispatch if any(ffi_dispatch.values()) else False
        return compile_module(
            path,
            cpu=cpu,
            extra_args=compile_args,
            ffi_dispatch=chosen,
            blas_products=blas_products,
            driver=driver,
            native_sorts=native_sorts,
        )
    except BuildError as error:
        raise LoadError(f"{path}: {error}") from None
    except OSError as error:
        raise LoadError(f"{path}: cannot read: {error.strerror or error}") from None


def _is_shared_object(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(4) == b"\x7fELF"
    except OSError:
        return False  # compile_module says why it cannot be read


def _check_modules(path: Path, signatures: list[ImportSignature]) -> None:
    """One VM module provides every import."""
    served = {s.module for s in signatures}
    if len(served) > 1:
        raise LoadError(f"{path}: imports of several modules ({', '.join(sorted(served))})")


def _import_modules(
    signatures: list[ImportSignature],
    imports: Mapping[str, object],
    bridge: FfiBridge | None,
    device,
    errors: CallErrors,
) -> list[object]:
    """The VM module serving the imports (none when the program imports nothing)."""
    import iree.runtime as rt

    if not signatures:
        return []
    interface = rt.PyModuleInterface(signatures[0].module, lambda _interface: None)
    for signature in signatures:
        serve = _server(signature, imports[signature.name], bridge, device)
        interface.export(signature.name, signature.cconv, errors.guard(serve))
    return [interface.create()]


def _sort_modules(signatures: list[ImportSignature], device, errors: CallErrors) -> list[object]:
    """The VM module serving the program's sorts (``sorts.py``), none when it has none."""
    import iree.runtime as rt

    if not signatures:
        return []
    interface = rt.PyModuleInterface(SORT_MODULE, lambda _interface: None)
    for signature in signatures:
        serve = PythonImport(sort_server(signature.name), signature, device)
        interface.export(signature.name, signature.cconv, errors.guard(serve))
    return [interface.create()]


def _server(
    signature: ImportSignature, implementation: object, bridge: FfiBridge | None, device
) -> Callable[..., object]:
    """What serves one import, by what ``implementation`` is: an XLA FFI handler (through
    the bridge), a C kernel (a cffi function) or a Python callable."""
    try:
        if bridge is not None and is_ffi_handler(implementation):
            return bridge.serve(signature, device)
        if _is_cffi_function(implementation):
            return KernelImport(implementation, signature, device)
        if callable(implementation):
            return PythonImport(implementation, signature, device)
    except KernelSignatureError as error:
        raise LoadError(f"{signature.module}.{signature.name}: {error}") from None
    raise LoadError(
        f"{signature.module}.{signature.name}: {implementation!r} is not a "
        "Python callable, a cffi function or an XLA FFI handler (a PyCapsule, an "
        "{'execute': capsule} bundle, a ctypes function or an address)"
    )


def _ffi_bridge(path: Path, signatures, imports) -> FfiBridge | None:
    """The FFI adapters of the imports served by XLA FFI handlers (``imports`` by import
    name), built and registered."""
    served = [s for s in signatures if is_ffi_handler(imports[s.name])]
    if not served:
        return None
    with temporary_folder("rewriter-iree-ffi-") as work:
        try:
            return FfiBridge(served, {s.name: imports[s.name] for s in served}, work)
        except (FactsError, ToolchainError, TypeError, ValueError) as error:
            raise LoadError(f"{path}: {error}") from None


def _written_arguments(program, name: str) -> frozenset[int] | None:
    """The indices of the arguments of the public function ``name`` that IREE may write
    into, as ``compile_module`` recorded them (``written_arguments.py``); None for all of
    them when it recorded ``true`` (a ``.vmfb`` of before) or nothing (one made by another
    tool), so that such a module gets copies."""
    function = program.lookup_function(name)
    reflection = function.reflection if function else {}
    try:
        recorded = json.loads(reflection.get(WRITES_ARGUMENTS_KEY, "true"))
    except ValueError:
        return None
    if recorded is False:
        return frozenset()
    if isinstance(recorded, list) and all(isinstance(i, int) for i in recorded):
        return frozenset(recorded)
    return None


def _binding_alignment(program, name: str) -> int:
    """The alignment the executables of the public function ``name`` assume of their
    bindings, as ``compile_module`` recorded it (``build.BINDING_ALIGNMENT_KEY``); IREE's
    64 when it did not (a ``.vmfb`` made by another tool or before it recorded one)."""
    function = program.lookup_function(name)
    reflection = function.reflection if function else {}
    try:
        return max(1, int(reflection.get(BINDING_ALIGNMENT_KEY, BUFFER_ALIGNMENT)))
    except ValueError:
        return BUFFER_ALIGNMENT


def _public_function(
    name: str, handles: dict[str, calls.Call | Callable[..., object]]
) -> Callable[..., object]:
    """The function ``name`` of the module: what ``handles`` holds for it, until ``close``."""

    def call(*arrays):
        made = handles.get(name)
        if made is None or isinstance(made, calls.Call):
            raise LoadError(f"{name}: the module was closed; load it again")
        return made(arrays)

    return call


def _invoker_call(
    name: str,
    invoker: Callable[..., object],
    errors: CallErrors,
    expected: list[Parameter | None] | None,
    device,
    written: frozenset[int] | None,
    dispatch_error: Callable[[], str | None] | None,
) -> Callable[..., object]:
    """A function that ``calls.Call`` cannot make, called through ``iree.runtime``'s
    ``FunctionInvoker`` (its generic conversions): arguments that are no tensor passed on
    as they are."""

    def call(arrays):
        if expected is not None:
            check_count(name, arrays, len(expected))
            arrays = tuple(
                a if p is None else convert(a, p) for a, p in zip(arrays, expected, strict=True)
            )
        imported: list[object] = []  # the memory of the arguments, until the results are out
        views = [
            input_view(device, a, imported, written is None or index in written)
            for index, a in enumerate(arrays)
        ]
        returned = errors.run(dispatch_error, invoker, *views)
        if isinstance(returned, tuple):
            return tuple(_to_numpy(r) for r in returned)
        return None if returned is None else _to_numpy(returned)

    return call


def _to_numpy(value) -> np.ndarray:
    # A copy: the mapped view of the result buffer lives only as long as the device array.
    return np.array(value.to_host() if hasattr(value, "to_host") else value, copy=True)


def _open_vmfb(path: Path) -> Vmfb:
    """The bytes and module attributes of a ``.vmfb``, read once for everything ``load``
    needs of them (signatures, BLAS products, driver)."""
    try:
        return open_vmfb(path)
    except BuildError as error:
        raise LoadError(f"{path}: {error}") from None
    except OSError as error:
        raise LoadError(f"{path}: cannot read: {error.strerror or error}") from None
