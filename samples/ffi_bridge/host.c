/* A host program without Python: runs a module compiled with --ffi-bridge whose `main`
 * takes and returns one float32 matrix, serving its XLA FFI target by a handler found in a
 * shared library.
 *
 *   host MODULE.so HANDLERS.so TARGET SYMBOL ROWS COLS [CALLS]
 *
 * Calls `main` once before registering the handler (the bridge reports the missing
 * handler; the results are zeros), then registers SYMBOL for TARGET and calls it CALLS
 * times (default 1), printing the last result one value per line (%.9g: float32
 * exactly).  x[i] = (i % 7) - 3.  Every result is freed, as the contract says.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "xla_ffi_bridge.h"

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} matrix;

typedef void entry_fn(matrix *result, matrix *x);
typedef int register_fn(const char *, XLA_FFI_Handler *);
typedef const char *last_error_fn(void);
typedef void clear_error_fn(void);

static void *need(void *library, const char *name) {
  void *symbol = dlsym(library, name);
  if (!symbol) {
    fprintf(stderr, "host: %s\n", dlerror());
    exit(2);
  }
  return symbol;
}

int main(int argc, char **argv) {
  if (argc != 7 && argc != 8) {
    fprintf(stderr, "usage: host MODULE.so HANDLERS.so TARGET SYMBOL ROWS COLS [CALLS]\n");
    return 2;
  }
  /* Each dlopen's error is read at once: a later dlopen, failed or not, clears it. */
  void *module = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!module) {
    fprintf(stderr, "host: %s\n", dlerror());
    return 2;
  }
  void *handlers = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (!handlers) {
    fprintf(stderr, "host: %s\n", dlerror());
    return 2;
  }
  entry_fn *entry = (entry_fn *)need(module, "_mlir_ciface_rw_entry_main");
  register_fn *register_handler = (register_fn *)need(module, "rw_ffi_register_handler");
  last_error_fn *last_error = (last_error_fn *)need(module, "rw_ffi_last_error");
  clear_error_fn *clear_error = (clear_error_fn *)need(module, "rw_ffi_clear_error");

  int64_t rows = atoll(argv[5]), cols = atoll(argv[6]);
  float *data = malloc((size_t)(rows * cols) * sizeof *data);
  for (int64_t i = 0; i < rows * cols; ++i) data[i] = (float)(i % 7) - 3.0f;
  matrix x = {data, data, 0, {rows, cols}, {cols, 1}};
  matrix y;

  entry(&y, &x); /* no handler yet */
  printf("before registration: %s\n", last_error() ? last_error() : "(no error)");
  free(y.allocated);
  clear_error();

  if (register_handler(argv[3], (XLA_FFI_Handler *)need(handlers, argv[4])) != 0) {
    fprintf(stderr, "host: %s\n", last_error());
    return 1;
  }
  long calls = argc == 8 ? atol(argv[7]) : 1;
  for (long call = 0; call < calls; ++call) {
    if (call > 0) free(y.allocated);
    entry(&y, &x);
    if (last_error()) {
      fprintf(stderr, "host: %s\n", last_error());
      return 1;
    }
  }
  for (int64_t i = 0; i < rows * cols; ++i) printf("%.9g\n", y.aligned[y.offset + i]);
  free(y.allocated);
  free(data);
  return 0;
}
