/*
 * xla_ffi_bridge.h - run an existing XLA FFI handler from a compiled module.
 *
 * A rewritten module calls an extern `@S` through MLIR's C interface
 * (`_mlir_ciface_S`, descriptors by pointer; see README.md).  With the bridge, that
 * function is a generated adapter (`python -m rewriter --emit-ffi-adapters`) which turns
 * the descriptors and attribute operands back into an XLA FFI call frame and calls the
 * very handler JAX calls: `XLA_FFI_Error *handler(XLA_FFI_CallFrame *)`.
 *
 * This file is a minimal XLA FFI host in plain C (C11), with no XLA linkage: only the
 * C API header `xla/ffi/api/c_api.h` (in `jax.ffi.include_dir()`).  It is compiled into
 * each module built with `python -m rewriter.compile --ffi-bridge`, so every module has
 * its own registry of handlers.
 *
 * Use from a host program (Python's rewriter.compile.load does the same):
 *
 *   1. rw_ffi_register_handler("rms_norm", RmsNorm) for each target the module calls
 *      (rw_ffi_required_target(i) lists them);
 *   2. call an entry `_mlir_ciface_rw_entry_F(...)`;
 *   3. if rw_ffi_last_error() is not NULL, a handler failed (or no handler was
 *      registered for a target): the results of that call are zero-filled and must not
 *      be used; the message says what happened.  rw_ffi_clear_error() resets it.
 *
 * Errors are kept per thread.  Register handlers before calling entries from several
 * threads: registration is not synchronised with calls.
 */
#ifndef REWRITER_XLA_FFI_BRIDGE_H
#define REWRITER_XLA_FFI_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#include "xla/ffi/api/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The host API: registration and errors ------------------------------------ */

/* Registers the execute handler of `target` (replacing an earlier one).  The handler is
 * probed first with the metadata extension, as XLA does: it must answer with XLA FFI API
 * version 0.1 to 0.3.  Returns 0 on success; otherwise nonzero, with the reason in
 * rw_ffi_last_error(). */
int rw_ffi_register_handler(const char *target, XLA_FFI_Handler *handler);

/* The API version a registered handler reported, as major * 1000 + minor; -1 if
 * `target` has no handler. */
int rw_ffi_handler_version(const char *target);

/* The targets this module's adapters call, index 0 .. count-1; NULL past the end. */
const char *rw_ffi_required_target(int64_t index);

/* The first error on this thread since the last rw_ffi_clear_error(), or NULL. */
const char *rw_ffi_last_error(void);
void rw_ffi_clear_error(void);

/* ---- What generated adapters use -------------------------------------------------- */

/* One tensor of a call as the FFI handler sees it. */
typedef struct rw_ffi_tensor {
  XLA_FFI_DataType dtype;
  int64_t element_size; /* bytes per element */
  int64_t rank;
  /* Logical dims of the call (-1 where dynamic).  The adapter receives the tensor in
   * the physical order of its layout: physical axis k is logical dim major_to_minor[k]. */
  const int64_t *dims;
  const int64_t *major_to_minor;
  /* For a result with dynamic dims: the operand that holds its shape (-1 if none). */
  int64_t shape_operand;
} rw_ffi_tensor;

typedef enum {
  RW_FFI_SCALAR = 1, /* the value points at the C scalar */
  RW_FFI_ARRAY = 2,  /* the value is a memref descriptor; passed as a flat array */
  RW_FFI_STRING = 3, /* the value is a descriptor of its bytes */
  RW_FFI_DICT = 4,   /* no value; the next `children` entries are its entries */
} rw_ffi_attr_kind;

/* One entry of the attribute tree, depth first, sorted by name at every level. */
typedef struct rw_ffi_attr {
  const char *name;
  rw_ffi_attr_kind kind;
  XLA_FFI_DataType dtype;   /* scalars and arrays */
  int64_t rank;             /* arrays and strings: rank of the descriptor */
  int64_t children;         /* dictionaries: number of direct entries */
} rw_ffi_attr;

typedef struct rw_ffi_call_spec {
  const char *target; /* the custom call target, as registered */
  const char *symbol; /* the extern's name, for messages */
  int64_t num_operands;
  const rw_ffi_tensor *operands;
  const int64_t *is_shape_operand; /* per operand: 1 if XLA drops it (a result shape) */
  int64_t num_results;
  const rw_ffi_tensor *results;
  int64_t num_attributes; /* top-level entries */
  int64_t num_attribute_entries; /* all entries of the tree */
  const rw_ffi_attr *attributes;
} rw_ffi_call_spec;

/* Builds the call frame, allocates the results into `results` (the C interface's results
 * pointer: one descriptor, or a struct of descriptors in order; NULL without results),
 * and calls the handler.  `operands` are the operand descriptors; `attribute_values` has
 * one pointer per non-dictionary attribute entry, depth first. */
void rw_ffi_call(const rw_ffi_call_spec *spec, void *results, void *const *operands,
                 void *const *attribute_values);

/* With `given` nonzero, this thread's later calls take the results pointer as descriptors
 * of buffers the caller allocated (row-major in the declared layout, of the result's
 * static sizes) and write into them; 0 goes back to allocating.  rewriter.iree's
 * dispatches use it to let a handler write into IREE's own buffers. */
void rw_ffi_results_given(int given);

#ifdef __cplusplus
}
#endif

#endif /* REWRITER_XLA_FFI_BRIDGE_H */
