/*
 * xla_ffi_bridge.c - a minimal XLA FFI host; see xla_ffi_bridge.h and README.md.
 *
 * Facts this relies on (checked against jaxlib 0.10.2's handlers, XLA FFI C API 0.3):
 * - call_frame.struct_size must be XLA_FFI_CallFrame_STRUCT_SIZE (up to `attrs`), not
 *   sizeof: handlers compare it exactly.
 * - Buffers carry logical dims and no strides: the data must already be in the layout
 *   the call declared, which is the physical order the adapter receives.
 * - The caller allocates every result; attributes are sorted by name at every level,
 *   their count and dtypes must match the handler's binding exactly.
 */
#define _POSIX_C_SOURCE 200809L
#include "xla_ffi_bridge.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The adapters' source defines the NULL-terminated list of targets they call. */
extern const char *const rw_ffi_required_targets[];

/* ---- Errors ------------------------------------------------------------------------ */

struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  char *message;
};

static _Thread_local char *last_error;

static void set_last_error(const char *format, ...) {
  if (last_error) return; /* keep the first error: later ones are consequences */
  va_list args;
  va_start(args, format);
  char buffer[1024];
  vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  last_error = strdup(buffer);
}

const char *rw_ffi_last_error(void) { return last_error; }

void rw_ffi_clear_error(void) {
  free(last_error);
  last_error = NULL;
}

static XLA_FFI_Error *new_error(XLA_FFI_Error_Code code, const char *message) {
  XLA_FFI_Error *error = malloc(sizeof *error);
  if (!error) return NULL;
  error->code = code;
  error->message = strdup(message ? message : "");
  return error;
}

static XLA_FFI_Error *error_create(XLA_FFI_Error_Create_Args *args) {
  return new_error(args->errc, args->message); /* the message is copied */
}

static void error_get_message(XLA_FFI_Error_GetMessage_Args *args) {
  args->message = args->error && args->error->message ? args->error->message : "";
}

static void error_destroy(XLA_FFI_Error_Destroy_Args *args) {
  if (!args->error) return;
  free(args->error->message);
  free(args->error);
}

static XLA_FFI_Error *unimplemented(const char *what) {
  char message[256];
  snprintf(message, sizeof message,
           "%s is not available in rewriter's XLA FFI bridge (a host-only runtime)", what);
  return new_error(XLA_FFI_Error_Code_UNIMPLEMENTED, message);
}

/* ---- The rest of the API table -------------------------------------------------------- */

static XLA_FFI_Error *handler_register(XLA_FFI_Handler_Register_Args *args) {
  (void)args;
  return unimplemented("XLA_FFI_Handler_Register (use rw_ffi_register_handler)");
}

static XLA_FFI_Error *stream_get(XLA_FFI_Stream_Get_Args *args) {
  (void)args;
  return unimplemented("a device stream");
}

static int64_t next_type_id = 1;

static XLA_FFI_Error *type_register(XLA_FFI_Type_Register_Args *args) {
  if (args->type_id->type_id == 0) args->type_id->type_id = next_type_id++;
  return NULL;
}

static XLA_FFI_Error *execution_context_get(XLA_FFI_ExecutionContext_Get_Args *args) {
  (void)args;
  return new_error(XLA_FFI_Error_Code_NOT_FOUND,
                   "rewriter's XLA FFI bridge has no user data in its execution context");
}

static XLA_FFI_Error *state_set(XLA_FFI_State_Set_Args *args) {
  (void)args;
  return unimplemented("handler state (the bridge runs only the execute stage)");
}

static XLA_FFI_Error *state_get(XLA_FFI_State_Get_Args *args) {
  (void)args;
  return unimplemented("handler state (the bridge runs only the execute stage)");
}

static XLA_FFI_Error *device_memory_allocate(XLA_FFI_DeviceMemory_Allocate_Args *args) {
  size_t alignment = args->alignment < sizeof(void *) ? sizeof(void *) : args->alignment;
  args->data = NULL;
  if (posix_memalign(&args->data, alignment, args->size ? args->size : 1) != 0) {
    return new_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "out of host memory");
  }
  return NULL;
}

static XLA_FFI_Error *device_memory_free(XLA_FFI_DeviceMemory_Free_Args *args) {
  free(args->data);
  return NULL;
}

/* Tasks run inline, on the calling thread: a pool of one. */
static XLA_FFI_Error *thread_pool_schedule(XLA_FFI_ThreadPool_Schedule_Args *args) {
  args->task(args->data);
  return NULL;
}

static XLA_FFI_Error *thread_pool_num_threads(XLA_FFI_ThreadPool_NumThreads_Args *args) {
  *args->num_threads = 1;
  return NULL;
}

/* Futures: the handler completes them before it returns, as its tasks run inline. */
struct XLA_FFI_Future {
  bool available;
  XLA_FFI_Error *error;
};

static XLA_FFI_Error *future_create(XLA_FFI_Future_Create_Args *args) {
  args->future = calloc(1, sizeof *args->future);
  return args->future ? NULL : new_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
}

static XLA_FFI_Error *future_set_available(XLA_FFI_Future_SetAvailable_Args *args) {
  args->future->available = true;
  return NULL;
}

static XLA_FFI_Error *future_set_error(XLA_FFI_Future_SetError_Args *args) {
  args->future->available = true;
  args->future->error = args->error;
  return NULL;
}

static XLA_FFI_Error *run_id_get(XLA_FFI_RunId_Get_Args *args) {
  args->run_id = 0;
  return NULL;
}

static XLA_FFI_Error *device_ordinal_get(XLA_FFI_DeviceOrdinal_Get_Args *args) {
  args->device_ordinal = 0;
  return NULL;
}

static const XLA_FFI_Api api = {
    .struct_size = XLA_FFI_Api_STRUCT_SIZE,
    .extension_start = NULL,
    .api_version = {XLA_FFI_Api_Version_STRUCT_SIZE, NULL, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR},
    .internal_api = NULL,
    .XLA_FFI_Error_Create = error_create,
    .XLA_FFI_Error_GetMessage = error_get_message,
    .XLA_FFI_Error_Destroy = error_destroy,
    .XLA_FFI_Handler_Register = handler_register,
    .XLA_FFI_Stream_Get = stream_get,
    .XLA_FFI_Type_Register = type_register,
    .XLA_FFI_ExecutionContext_Get = execution_context_get,
    .XLA_FFI_State_Set = state_set,
    .XLA_FFI_State_Get = state_get,
    .XLA_FFI_DeviceMemory_Allocate = device_memory_allocate,
    .XLA_FFI_DeviceMemory_Free = device_memory_free,
    .XLA_FFI_ThreadPool_Schedule = thread_pool_schedule,
    .XLA_FFI_ThreadPool_NumThreads = thread_pool_num_threads,
    .XLA_FFI_Future_Create = future_create,
    .XLA_FFI_Future_SetAvailable = future_set_available,
    .XLA_FFI_Future_SetError = future_set_error,
    .XLA_FFI_RunId_Get = run_id_get,
    .XLA_FFI_DeviceOrdinal_Get = device_ordinal_get,
};

/* Not dereferenced by handlers: the API functions above take it and ignore it. */
struct XLA_FFI_ExecutionContext {
  int unused;
};
static XLA_FFI_ExecutionContext context;

static XLA_FFI_CallFrame empty_frame(XLA_FFI_ExecutionStage stage) {
  XLA_FFI_CallFrame frame;
  memset(&frame, 0, sizeof frame);
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.api = &api;
  frame.ctx = &context;
  frame.stage = stage;
  frame.args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  frame.rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  frame.attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  return frame;
}

/* Takes the handler's error (if any) into last_error; true when there was one. */
static bool take_error(XLA_FFI_Error *error, const char *target) {
  if (!error) return false;
  set_last_error("XLA FFI handler for '%s' failed: %s", target, error->message);
  XLA_FFI_Error_Destroy_Args destroy = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, error};
  error_destroy(&destroy);
  return true;
}

/* ---- The registry ------------------------------------------------------------------ */

typedef struct {
  char *target;
  XLA_FFI_Handler *handler;
  int version;
} registration;

static registration *registry;
static size_t registry_size;

static registration *find(const char *target) {
  for (size_t i = 0; i < registry_size; ++i) {
    if (strcmp(registry[i].target, target) == 0) return &registry[i];
  }
  return NULL;
}

/* XLA's metadata probe: a call frame carrying the metadata extension. */
static int probe_version(const char *target, XLA_FFI_Handler *handler) {
  XLA_FFI_Metadata metadata;
  memset(&metadata, 0, sizeof metadata);
  metadata.struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
  XLA_FFI_Metadata_Extension extension;
  memset(&extension, 0, sizeof extension);
  extension.extension_base.struct_size = XLA_FFI_Metadata_Extension_STRUCT_SIZE;
  extension.extension_base.type = XLA_FFI_Extension_Metadata;
  extension.metadata = &metadata;
  XLA_FFI_CallFrame frame = empty_frame(XLA_FFI_ExecutionStage_EXECUTE);
  frame.extension_start = &extension.extension_base;
  if (take_error(handler(&frame), target)) return -1;
  int major = metadata.api_version.major_version, minor = metadata.api_version.minor_version;
  if (major != 0 || minor < 1 || minor > XLA_FFI_API_MINOR) {
    set_last_error("XLA FFI handler for '%s' reports API version %d.%d; the bridge speaks "
                   "0.1 to 0.%d",
                   target, major, minor, XLA_FFI_API_MINOR);
    return -1;
  }
  return major * 1000 + minor;
}

int rw_ffi_register_handler(const char *target, XLA_FFI_Handler *handler) {
  if (!target || !handler) {
    set_last_error("rw_ffi_register_handler needs a target name and a handler");
    return 1;
  }
  int version = probe_version(target, handler);
  if (version < 0) return 1;
  registration *existing = find(target);
  if (existing) {
    existing->handler = handler;
    existing->version = version;
    return 0;
  }
  registration *grown = realloc(registry, (registry_size + 1) * sizeof *registry);
  char *name = strdup(target);
  if (!grown || !name) {
    free(name);
    if (grown) registry = grown;
    set_last_error("out of memory registering '%s'", target);
    return 1;
  }
  registry = grown;
  registry[registry_size++] = (registration){name, handler, version};
  return 0;
}

int rw_ffi_handler_version(const char *target) {
  registration *found = target ? find(target) : NULL;
  return found ? found->version : -1;
}

const char *rw_ffi_required_target(int64_t index) {
  for (int64_t i = 0; i <= index; ++i) {
    if (!rw_ffi_required_targets[i]) return NULL;
  }
  return rw_ffi_required_targets[index];
}

/* ---- Descriptors (MLIR's C interface) ---------------------------------------------- */

/* {void *allocated, *aligned; int64_t offset, sizes[rank], strides[rank]} */
typedef struct {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes_and_strides[];
} descriptor;

static size_t descriptor_size(int64_t rank) { return 3 * 8 + 2 * 8 * (size_t)rank; }

static int64_t element_count(const descriptor *d, int64_t rank) {
  int64_t count = 1;
  for (int64_t k = 0; k < rank; ++k) count *= d->sizes_and_strides[k];
  return count;
}

/* The descriptor's data, row-major contiguous: its own memory when it already is, else
 * a copy in `*copy` (to be freed by the caller). */
static void *contiguous(const descriptor *d, int64_t rank, int64_t element_size, void **copy) {
  const int64_t *sizes = d->sizes_and_strides, *strides = d->sizes_and_strides + rank;
  char *base = (char *)d->aligned + d->offset * element_size;
  int64_t expected = 1;
  bool row_major = true;
  for (int64_t k = rank - 1; k >= 0; --k) {
    if (sizes[k] != 1 && strides[k] != expected) row_major = false;
    expected *= sizes[k];
  }
  *copy = NULL;
  if (row_major) return base;
  int64_t count = element_count(d, rank);
  char *out = malloc(count ? (size_t)(count * element_size) : 1);
  if (!out) return NULL;
  int64_t index[rank > 0 ? rank : 1];
  memset(index, 0, sizeof index);
  for (int64_t n = 0; n < count; ++n) {
    int64_t at = 0;
    for (int64_t k = 0; k < rank; ++k) at += index[k] * strides[k];
    memcpy(out + n * element_size, base + at * element_size, (size_t)element_size);
    for (int64_t k = rank - 1; k >= 0 && ++index[k] == sizes[k]; --k) index[k] = 0;
  }
  *copy = out;
  return out;
}

static int64_t read_integer(const descriptor *d, int64_t rank, XLA_FFI_DataType dtype,
                            int64_t position) {
  int64_t stride = rank ? d->sizes_and_strides[rank] : 1;
  const char *at = (const char *)d->aligned;
  switch (dtype) {
    case XLA_FFI_DataType_S32:
    case XLA_FFI_DataType_U32:
      return ((const int32_t *)at)[d->offset + position * stride];
    case XLA_FFI_DataType_S64:
    case XLA_FFI_DataType_U64:
      return ((const int64_t *)at)[d->offset + position * stride];
    default:
      return -1;
  }
}

/* ---- One call ---------------------------------------------------------------------- */

/* What one call builds (the frame's arrays, dims, attribute entries) comes from the
 * arena: first from its own space, which lives on the caller's stack for the call, one
 * block after another; what does not fit is calloc'd and freed with the arena. A call of
 * a few operands and attributes then allocates nothing here. */
enum { ARENA_INLINE = 2048, ARENA_ALIGN = 16 };

typedef struct {
  _Alignas(ARENA_ALIGN) unsigned char space[ARENA_INLINE];
  size_t used;
  void **blocks; /* calloc'd or adopted blocks, freed by arena_free */
  size_t count, capacity;
} arena;

/* Keeps `block` (from malloc) to be freed with the arena; false if the list cannot grow. */
static bool arena_track(arena *a, void *block) {
  if (a->count == a->capacity) {
    size_t capacity = a->capacity ? 2 * a->capacity : 16;
    void **grown = realloc(a->blocks, capacity * sizeof *grown);
    if (!grown) return false;
    a->blocks = grown;
    a->capacity = capacity;
  }
  a->blocks[a->count++] = block;
  return true;
}

/* `size` zeroed bytes, aligned for any of the FFI's structs. */
static void *arena_alloc(arena *a, size_t size) {
  size_t rounded = size ? (size + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN : ARENA_ALIGN;
  if (rounded <= ARENA_INLINE - a->used) {
    void *block = a->space + a->used;
    a->used += rounded;
    memset(block, 0, rounded);
    return block;
  }
  void *block = calloc(1, rounded);
  if (block && !arena_track(a, block)) {
    free(block);
    return NULL;
  }
  return block;
}

/* Hands `block` (from malloc) to the arena; frees it at once if the arena cannot grow. */
static bool arena_adopt(arena *a, void *block) {
  if (arena_track(a, block)) return true;
  free(block);
  return false;
}

static void arena_free(arena *a) {
  for (size_t i = 0; i < a->count; ++i) free(a->blocks[i]);
  free(a->blocks);
}

/* Builds the XLA_FFI_Attrs of `count` entries starting at spec[*entry]. */
static bool build_attrs(arena *a, const rw_ffi_call_spec *spec, int64_t count, int64_t *entry,
                        void *const *values, int64_t *value, XLA_FFI_Attrs *out) {
  out->struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  out->size = count;
  out->types = arena_alloc(a, (size_t)count * sizeof *out->types);
  out->names = arena_alloc(a, (size_t)count * sizeof *out->names);
  out->attrs = arena_alloc(a, (size_t)count * sizeof *out->attrs);
  if (count && (!out->types || !out->names || !out->attrs)) return false;
  for (int64_t i = 0; i < count; ++i) {
    const rw_ffi_attr *attr = &spec->attributes[(*entry)++];
    XLA_FFI_ByteSpan *name = arena_alloc(a, sizeof *name);
    if (!name) return false;
    name->ptr = attr->name;
    name->len = strlen(attr->name);
    out->names[i] = name;
    if (attr->kind == RW_FFI_DICT) {
      XLA_FFI_Attrs *nested = arena_alloc(a, sizeof *nested);
      if (!nested || !build_attrs(a, spec, attr->children, entry, values, value, nested)) {
        return false;
      }
      out->types[i] = XLA_FFI_AttrType_DICTIONARY;
      out->attrs[i] = nested;
      continue;
    }
    void *given = values[(*value)++];
    if (attr->kind == RW_FFI_SCALAR) {
      XLA_FFI_Scalar *scalar = arena_alloc(a, sizeof *scalar);
      if (!scalar) return false;
      scalar->dtype = attr->dtype;
      scalar->value = given;
      out->types[i] = XLA_FFI_AttrType_SCALAR;
      out->attrs[i] = scalar;
      continue;
    }
    const descriptor *d = given;
    int64_t element_size = attr->kind == RW_FFI_STRING ? 1 : 0;
    switch (attr->dtype) {
      case XLA_FFI_DataType_PRED: case XLA_FFI_DataType_S8: case XLA_FFI_DataType_U8:
        element_size = 1; break;
      case XLA_FFI_DataType_S16: case XLA_FFI_DataType_U16: case XLA_FFI_DataType_F16:
      case XLA_FFI_DataType_BF16:
        element_size = 2; break;
      case XLA_FFI_DataType_S32: case XLA_FFI_DataType_U32: case XLA_FFI_DataType_F32:
        element_size = 4; break;
      case XLA_FFI_DataType_S64: case XLA_FFI_DataType_U64: case XLA_FFI_DataType_F64:
      case XLA_FFI_DataType_C64:
        element_size = 8; break;
      case XLA_FFI_DataType_C128:
        element_size = 16; break;
      default: break;
    }
    void *copy = NULL;
    void *data = contiguous(d, attr->rank, element_size, &copy);
    if (!data || (copy && !arena_adopt(a, copy))) return false;
    size_t size = (size_t)element_count(d, attr->rank);
    if (attr->kind == RW_FFI_STRING) {
      XLA_FFI_ByteSpan *bytes = arena_alloc(a, sizeof *bytes);
      if (!bytes) return false;
      bytes->ptr = data;
      bytes->len = size;
      out->types[i] = XLA_FFI_AttrType_STRING;
      out->attrs[i] = bytes;
    } else {
      XLA_FFI_Array *array = arena_alloc(a, sizeof *array);
      if (!array) return false;
      array->dtype = attr->dtype;
      array->size = size;
      array->data = data;
      out->types[i] = XLA_FFI_AttrType_ARRAY;
      out->attrs[i] = array;
    }
  }
  return true;
}

/* A token operand or result as XLA hands it to a handler: a rank-0 buffer of TOKEN type
 * (xla::ffi::Token), whose data nothing reads; it points at a byte, never NULL. */
static XLA_FFI_Buffer token_buffer(void) {
  static char token_data;
  return (XLA_FFI_Buffer){XLA_FFI_Buffer_STRUCT_SIZE, NULL, XLA_FFI_DataType_TOKEN, &token_data,
                          0, NULL};
}

/* Logical dims of operand `t` from its descriptor's physical sizes. */
static void logical_dims(const rw_ffi_tensor *t, const descriptor *d, int64_t *dims) {
  for (int64_t k = 0; k < t->rank; ++k) dims[t->major_to_minor[k]] = d->sizes_and_strides[k];
}

/* The result's logical dims: static ones from the spec, dynamic ones from its shape
 * operand.  An unknown dim becomes 0 (and false is returned). */
static bool result_dims(const rw_ffi_call_spec *spec, const rw_ffi_tensor *t,
                        void *const *operands, int64_t *dims) {
  bool ok = true;
  for (int64_t i = 0; i < t->rank; ++i) {
    dims[i] = t->dims[i];
    if (dims[i] >= 0) continue;
    if (t->shape_operand >= 0) {
      const rw_ffi_tensor *shape = &spec->operands[t->shape_operand];
      dims[i] = read_integer(operands[t->shape_operand], shape->rank, shape->dtype, i);
    }
    if (dims[i] < 0) {
      set_last_error("@%s: a result of '%s' has a dynamic dimension that no shape operand "
                     "gives", spec->symbol, spec->target);
      dims[i] = 0;
      ok = false;
    }
  }
  return ok;
}

/* Set by rw_ffi_results_given: this thread's next calls write into the result descriptors
 * the caller filled (IREE's dispatches: the results' own bindings) instead of allocating. */
static _Thread_local bool results_given;

void rw_ffi_results_given(int given) { results_given = given != 0; }

/* A result the caller gave: its sizes must be the result's (physical order, row-major). */
static bool given_result(const rw_ffi_call_spec *spec, const rw_ffi_tensor *t, descriptor *d,
                         XLA_FFI_Buffer *buffer, int64_t *dims) {
  int64_t stride = 1;
  for (int64_t k = t->rank - 1; k >= 0; --k) {
    int64_t size = dims[t->major_to_minor[k]];
    if (d->sizes_and_strides[k] != size || d->sizes_and_strides[t->rank + k] != stride) {
      set_last_error("@%s: a result buffer of '%s' has not the shape of the result",
                     spec->symbol, spec->target);
      return false;
    }
    stride *= size ? size : 1;
  }
  void *data = (char *)d->aligned + d->offset * t->element_size;
  *buffer = (XLA_FFI_Buffer){XLA_FFI_Buffer_STRUCT_SIZE, NULL, t->dtype, data, t->rank, dims};
  return true;
}

/* Allocates every result, zero-filled and of its full size (the compiled caller relies on
 * static sizes and frees the buffers), into the results struct; fills `buffers`.  With
 * rw_ffi_results_given, the results struct holds the buffers already. */
static bool allocate_results(const rw_ffi_call_spec *spec, char *results, void *const *operands,
                             XLA_FFI_Buffer *buffers, int64_t *dims) {
  bool ok = true;
  for (int64_t r = 0; r < spec->num_results; ++r) {
    const rw_ffi_tensor *t = &spec->results[r];
    if (t->dtype == XLA_FFI_DataType_TOKEN) { /* no descriptor: the extern returns none */
      buffers[r] = token_buffer();
      continue;
    }
    descriptor *d = (descriptor *)results;
    results += descriptor_size(t->rank);
    if (!result_dims(spec, t, operands, dims)) ok = false;
    if (results_given) {
      if (!ok || !given_result(spec, t, d, &buffers[r], dims)) return false;
      dims += t->rank;
      continue;
    }
    int64_t count = 1, stride = 1;
    for (int64_t k = t->rank - 1; k >= 0; --k) { /* physical order, row-major strides */
      int64_t size = dims[t->major_to_minor[k]];
      d->sizes_and_strides[k] = size;
      d->sizes_and_strides[t->rank + k] = stride;
      stride *= size ? size : 1;
      count *= size;
    }
    size_t bytes = (size_t)(count * t->element_size);
    void *data = NULL;
    if (posix_memalign(&data, 64, bytes ? bytes : 1) != 0) {
      set_last_error("@%s: out of memory for the results of '%s'", spec->symbol, spec->target);
      return false;
    }
    memset(data, 0, bytes ? bytes : 1);
    d->allocated = d->aligned = data;
    d->offset = 0;
    buffers[r] = (XLA_FFI_Buffer){XLA_FFI_Buffer_STRUCT_SIZE, NULL, t->dtype, data, t->rank,
                                  dims};
    dims += t->rank;
  }
  return ok;
}

/* The operands as XLA sees them (shape operands dropped) into `out`; dims from `dims`. */
static bool build_args(const rw_ffi_call_spec *spec, void *const *operands, arena *a,
                       int64_t *dims, XLA_FFI_Args *out) {
  int64_t count = spec->num_operands;
  XLA_FFI_Buffer *buffers = arena_alloc(a, (size_t)count * sizeof *buffers);
  out->args = arena_alloc(a, (size_t)count * sizeof(void *));
  out->types = arena_alloc(a, (size_t)count * sizeof *out->types);
  if (!buffers || !out->args || !out->types) return false;
  out->size = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (spec->is_shape_operand[i]) continue; /* XLA drops result-shape operands */
    const rw_ffi_tensor *t = &spec->operands[i];
    if (t->dtype == XLA_FFI_DataType_TOKEN) { /* no descriptor: the extern takes none */
      buffers[out->size] = token_buffer();
      out->args[out->size] = &buffers[out->size];
      out->types[out->size] = XLA_FFI_ArgType_BUFFER;
      ++out->size;
      continue;
    }
    const descriptor *d = operands[i];
    logical_dims(t, d, dims);
    void *copy = NULL;
    void *data = contiguous(d, t->rank, t->element_size, &copy);
    if (!data || (copy && !arena_adopt(a, copy))) return false;
    buffers[out->size] =
        (XLA_FFI_Buffer){XLA_FFI_Buffer_STRUCT_SIZE, NULL, t->dtype, data, t->rank, dims};
    out->args[out->size] = &buffers[out->size];
    out->types[out->size] = XLA_FFI_ArgType_BUFFER;
    dims += t->rank;
    ++out->size;
  }
  return true;
}

/* Calls the handler; its error, or its future's, becomes this thread's last error. */
static void run_handler(const registration *handler, XLA_FFI_CallFrame *frame,
                        const char *target) {
  if (take_error(handler->handler(frame), target) || !frame->future) return;
  XLA_FFI_Future *future = frame->future;
  if (future->error) {
    take_error(future->error, target);
  } else if (!future->available) {
    set_last_error("XLA FFI handler for '%s' returned a future that is not complete", target);
  }
  free(future);
}

void rw_ffi_call(const rw_ffi_call_spec *spec, void *results, void *const *operands,
                 void *const *attribute_values) {
  arena a;
  a.used = 0;
  a.blocks = NULL;
  a.count = a.capacity = 0;
  int64_t result_dims = 0, operand_dims = 0;
  for (int64_t r = 0; r < spec->num_results; ++r) result_dims += spec->results[r].rank;
  for (int64_t i = 0; i < spec->num_operands; ++i) operand_dims += spec->operands[i].rank;
  int64_t *dims = arena_alloc(&a, (size_t)(result_dims + operand_dims) * sizeof *dims);
  XLA_FFI_Buffer *rets = arena_alloc(&a, (size_t)spec->num_results * sizeof *rets);
  XLA_FFI_CallFrame frame = empty_frame(XLA_FFI_ExecutionStage_EXECUTE);
  frame.rets.size = spec->num_results;
  frame.rets.rets = arena_alloc(&a, (size_t)spec->num_results * sizeof(void *));
  frame.rets.types = arena_alloc(&a, (size_t)spec->num_results * sizeof *frame.rets.types);
  if (!dims || !rets || !frame.rets.rets || !frame.rets.types) {
    set_last_error("@%s: out of memory calling '%s'", spec->symbol, spec->target);
    arena_free(&a);
    return;
  }
  /* Results first: the compiled caller uses and frees them whatever happens next. */
  /* `results` is NULL when the call has none but tokens, which need no descriptor. */
  bool ok = allocate_results(spec, results, operands, rets, dims);
  for (int64_t r = 0; r < spec->num_results; ++r) {
    frame.rets.rets[r] = &rets[r];
    frame.rets.types[r] = XLA_FFI_RetType_BUFFER;
  }
  registration *handler = ok ? find(spec->target) : NULL;
  if (ok && !handler) {
    set_last_error("@%s: no XLA FFI handler is registered for target '%s'", spec->symbol,
                   spec->target);
    ok = false;
  }
  if (ok) {
    int64_t entry = 0, value = 0;
    ok = build_args(spec, operands, &a, dims + result_dims, &frame.args) &&
         build_attrs(&a, spec, spec->num_attributes, &entry, attribute_values, &value,
                     &frame.attrs);
    if (!ok) set_last_error("@%s: out of memory calling '%s'", spec->symbol, spec->target);
  }
  if (ok) run_handler(handler, &frame, spec->target);
  arena_free(&a);
}
