"""jax's broadcasts of dynamic shape, as ``linalg.generic`` copies.

Exported with a symbolic batch size, ``x + x.sum(1, keepdims=True)`` (and so
``jax.nn.softmax``, a layer norm) broadcasts a ``tensor<?xf32>`` to ``tensor<?x10xf32>``
with a ``stablehlo.dynamic_broadcast_in_dim``. Whether its dynamic dimension expands (from
1 to the batch) or is copied is only known at run time, and IREE 3.13 lowers no such
broadcast ("failed to legalize operation 'stablehlo.dynamic_broadcast_in_dim'"), on both
paths. Marking it ``known_nonexpanding_dimensions`` does not last: IREE's canonicalization
merges two broadcasts into one without the mark.

jax decides it when it traces: its broadcasting takes a dimension of symbolic size only to
a dimension of the same symbolic size, and refuses to trace the program otherwise. So in a
module jax exported with shape polymorphism (``jax.uses_shape_polymorphism = true``), each
dynamic dimension of a broadcast's operand is copied, and a static dimension of size 1
whose result is not 1 expands. Both paths write each such broadcast as a call of a
function of its own (which IREE inlines) holding a ``linalg.generic`` that copies element
``i`` of the result from the operand at ``i`` along a copied dimension and at 0 along an
expanding one, into a ``tensor.empty`` of the sizes the broadcast's shape operand gives:
the broadcast's definition, with the expansion of each dimension known. Unsigned elements
(``jnp.searchsorted``'s indices) are copied as the signless integers of their bits, which
linalg takes. Modules that jax did not export that way are left as they are.

On the IREE path an attention of a symbolic batch (this copy before a product with a batch
dimension of dynamic size) also needs IREE's data tiling off, which ``layout_flags`` turns
off for every module of dynamic shape (``rewriter/iree/build.py``).
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import dimension_sizes, outline_into_functions, tensor_text

DYNAMIC_BROADCAST = "stablehlo.dynamic_broadcast_in_dim"
_PREFIX = "rw_dynamic_broadcast_"


def jax_dynamic_broadcasts(module: Any) -> int:
    """Rewrite, in place, every ``dynamic_broadcast_in_dim`` of the ``iree.compiler.ir``
    ``module`` (in its context) as the module's doc says, when jax exported it with shape
    polymorphism; return how many."""
    from iree.compiler import ir

    attributes = module.operation.attributes
    marker = "jax.uses_shape_polymorphism"
    if marker not in attributes or not ir.BoolAttr(attributes[marker]).value:
        return 0
    return outline_into_functions(module, DYNAMIC_BROADCAST, _PREFIX, _function_text)


def _function_text(ir: Any, operation: Any, symbol: str) -> str | None:
    """The text of ``func.func private @symbol`` that computes the broadcast
    ``operation`` from its operand and shape operand; None for a form it does not take."""
    given = operation.operands[0].type
    shape = operation.operands[1].type
    if not (isinstance(given, ir.RankedTensorType) and isinstance(shape, ir.RankedTensorType)):
        return None
    result = ir.RankedTensorType(operation.results[0].type)
    given = ir.RankedTensorType(given)
    dimensions = list(ir.DenseI64ArrayAttr(operation.attributes["broadcast_dimensions"]))
    reads: list[str] = []
    for d, target in enumerate(dimensions):
        if given.is_dynamic_dim(d):
            reads.append(f"d{target}")  # copied: jax broadcasts no symbolic size but to itself
        elif given.shape[d] == 1 and (result.is_dynamic_dim(target) or result.shape[target] != 1):
            reads.append("0")  # expands
        elif not result.is_dynamic_dim(target) and result.shape[target] != given.shape[d]:
            return None  # not a broadcast StableHLO allows
        else:
            reads.append(f"d{target}")
    loops = ", ".join(f"d{k}" for k in range(result.rank))
    parallel = ", ".join(['"parallel"'] * result.rank)
    element = str(result.element_type)
    index_type = str(ir.RankedTensorType(shape).element_type)
    lines = [f"func.func private @{symbol}(%given: {given}, %shape: {shape}) -> {result} {{"]
    copied, read, written = result, "%given", "%copied"
    kind = result.element_type
    if isinstance(kind, ir.IntegerType) and kind.is_unsigned:
        # linalg takes signless integers only: the copy moves the bits, as i<width>
        element = f"i{kind.width}"
        signless = tensor_text(dimension_sizes(given), element)
        copied, read, written = (
            tensor_text(dimension_sizes(result), element),
            "%signless",
            "%copied_back",
        )
        lines.append(f"  %signless = stablehlo.bitcast_convert %given : ({given}) -> {signless}")
    sizes = []
    for k in range(result.rank):
        if not result.is_dynamic_dim(k):
            continue
        lines.append(f"  %at{k} = arith.constant {k} : index")
        lines.append(f"  %read{k} = tensor.extract %shape[%at{k}] : {shape}")
        if index_type == "index":
            sizes.append(f"%read{k}")
        else:
            lines.append(f"  %size{k} = arith.index_cast %read{k} : {index_type} to index")
            sizes.append(f"%size{k}")
    source = given if read == "%given" else tensor_text(dimension_sizes(given), element)
    lines += [
        f"  %empty = tensor.empty({', '.join(sizes)}) : {copied}",
        "  %copied = linalg.generic {indexing_maps = ["
        f"affine_map<({loops}) -> ({', '.join(reads)})>, "
        f"affine_map<({loops}) -> ({loops})>], "
        f"iterator_types = [{parallel}]}}",
        f"      ins({read} : {source}) outs(%empty : {copied}) {{",
        f"  ^bb0(%in: {element}, %out: {element}):",
        f"    linalg.yield %in : {element}",
        f"  }} -> {copied}",
    ]
    if written != "%copied":
        lines.append(f"  %copied_back = stablehlo.bitcast_convert %copied : ({copied}) -> {result}")
    lines += [f"  return {written} : {result}", "}"]
    return "\n".join(lines)
