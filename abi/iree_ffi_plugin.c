/*
 * iree_ffi_plugin.c - an IREE executable plugin that serves XLA FFI calls inside dispatches.
 *
 * rewriter.iree compiles an FFI call served by an XLA FFI handler into a dispatch whose
 * code calls the executable import `rw_ffi_dispatch_S` (rewriter/iree/dispatches.py).
 * IREE resolves the imports of an executable when it loads it, by asking the plugins that
 * its HAL driver was created with (`--executable_plugin=`, a process-wide flag read when
 * the driver is created).  This plugin answers from a registry that the loader fills
 * through ctypes before it creates the context: the function of each import is an adapter
 * of the module's FFI bridge (rewriter/iree/ffi_handlers.py), so each call goes from the
 * dispatch to the handler with no Python and no VM import in between.
 *
 * The plugin ABI is the stable one of iree/hal/local/executable_plugin.h (version 0.1),
 * declared here so that nothing of IREE's sources is needed to build it.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RW_EXPORT __attribute__((visibility("default")))

/* ---- The plugin ABI of iree/hal/local/executable_plugin.h, version 0.1 --------------- */
typedef struct {
  uint32_t version;
  const char *name;
  const char *description;
  uint32_t features;
  int32_t sanitizer;
  uint64_t reserved[8];
} plugin_header;

typedef struct {
  void *self;
  void *ctl;
} plugin_allocator;

typedef struct {
  plugin_allocator host_allocator;
} plugin_environment;

typedef struct {
  size_t count;
  const char *const *symbol_names;
  void **out_fn_ptrs;
  void **out_fn_contexts;
} plugin_resolve_params;

typedef void *plugin_status; /* 0: ok; otherwise a status code (not a full status) */

typedef struct {
  const plugin_header *header;
  plugin_status (*load)(const plugin_environment *environment, size_t param_count,
                        const void *params, void **out_self);
  void (*unload)(void *self);
  plugin_status (*resolve)(void *self, const plugin_resolve_params *params,
                           uint32_t *out_resolution);
} plugin_v0;

enum { VERSION_0_1 = 1, STATUS_NOT_FOUND = 5, RESOLUTION_MISSING_OPTIONAL = 1 };

/* ---- The registry ------------------------------------------------------------------- */
typedef struct {
  char *name;
  void *function; /* int (*)(void *params, void *context, void *reserved) */
  void *context;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *entries;
static size_t entry_count, entry_capacity;
static int64_t loads, resolved;

/* The entry registered as `name`, itself (a registration). */
static entry *find(const char *name) {
  for (size_t i = 0; i < entry_count; ++i)
    if (strcmp(entries[i].name, name) == 0) return &entries[i];
  return NULL;
}

/* The entry serving the import `name`: registered as it, or as a prefix of it followed by
 * `*` (one function serving a family of imports, each of a signature of its own: IREE
 * links the executables of a module together, and one import name must have one
 * signature in all of them). */
static entry *serving(const char *name) {
  entry *found = find(name);
  for (size_t i = 0; i < entry_count && !found; ++i) {
    size_t length = strlen(entries[i].name);
    if (length > 0 && entries[i].name[length - 1] == '*' &&
        strncmp(entries[i].name, name, length - 1) == 0)
      found = &entries[i];
  }
  return found;
}

/* Serve the import `name` (or, for `prefix*`, every import whose name starts with the
 * prefix) with `function`, replacing an earlier registration; 0 on success, -1 when out of
 * memory. */
RW_EXPORT int rw_iree_plugin_register(const char *name, void *function, void *context) {
  pthread_mutex_lock(&lock);
  entry *found = find(name);
  int status = 0;
  if (found) {
    found->function = function;
    found->context = context;
  } else {
    if (entry_count == entry_capacity) {
      size_t capacity = entry_capacity ? 2 * entry_capacity : 16;
      entry *grown = realloc(entries, capacity * sizeof *grown);
      if (grown) {
        entries = grown;
        entry_capacity = capacity;
      }
    }
    char *copy = entry_count < entry_capacity ? strdup(name) : NULL;
    if (copy) {
      entries[entry_count++] = (entry){copy, function, context};
    } else {
      status = -1;
    }
  }
  pthread_mutex_unlock(&lock);
  return status;
}

/* Forget the import `name`: executables loaded before keep the function they resolved. */
RW_EXPORT void rw_iree_plugin_unregister(const char *name) {
  pthread_mutex_lock(&lock);
  entry *found = find(name);
  if (found) {
    free(found->name);
    *found = entries[--entry_count];
  }
  pthread_mutex_unlock(&lock);
}

/* How many HAL drivers loaded this plugin: one more after a driver is created with it. */
RW_EXPORT int64_t rw_iree_plugin_loads(void) {
  pthread_mutex_lock(&lock);
  int64_t value = loads;
  pthread_mutex_unlock(&lock);
  return value;
}

/* How many imports the plugin has resolved from its registry since the process began. */
RW_EXPORT int64_t rw_iree_plugin_resolved(void) {
  pthread_mutex_lock(&lock);
  int64_t value = resolved;
  pthread_mutex_unlock(&lock);
  return value;
}

/* ---- The plugin ---------------------------------------------------------------------- */
static plugin_status plugin_load(const plugin_environment *environment, size_t param_count,
                                 const void *params, void **out_self) {
  (void)environment;
  (void)param_count;
  (void)params;
  pthread_mutex_lock(&lock);
  ++loads;
  pthread_mutex_unlock(&lock);
  *out_self = &entries; /* any non-NULL pointer: the state is global */
  return 0;
}

static void plugin_unload(void *self) { (void)self; }

static plugin_status plugin_resolve(void *self, const plugin_resolve_params *params,
                                    uint32_t *out_resolution) {
  (void)self;
  *out_resolution = 0;
  int missing_required = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < params->count; ++i) {
    if (params->out_fn_ptrs[i]) continue; /* another plugin served it */
    const char *name = params->symbol_names[i];
    int optional = name[0] == '?';
    entry *found = serving(optional ? name + 1 : name);
    if (found) {
      params->out_fn_ptrs[i] = found->function;
      params->out_fn_contexts[i] = found->context;
      ++resolved;
    } else if (optional) {
      *out_resolution |= RESOLUTION_MISSING_OPTIONAL;
    } else {
      missing_required = 1;
    }
  }
  pthread_mutex_unlock(&lock);
  return missing_required ? (plugin_status)(uintptr_t)STATUS_NOT_FOUND : 0;
}

RW_EXPORT const plugin_header **iree_hal_executable_plugin_query(uint32_t max_version,
                                                                  void *reserved) {
  (void)reserved;
  static const plugin_header header = {
      .version = VERSION_0_1,
      .name = "rewriter_ffi",
      .description = "XLA FFI handlers called from dispatches (rewriter.iree)",
      .features = 0,
      .sanitizer = 0,
  };
  static const plugin_v0 plugin = {&header, plugin_load, plugin_unload, plugin_resolve};
  return max_version >= VERSION_0_1 ? (const plugin_header **)&plugin : NULL;
}
