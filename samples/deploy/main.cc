// A program without Python: runs the compiled model (model.h, libmodel.a) with the JAX FFI
// tutorial's rms_norm handler, and allocates nothing in its loop.
//
//   deploy [CALLS]
//
// Registers the handler for each target the model calls, fills x[i] = (i % 7) - 3 in the
// shape model.h declares, calls model_main once to measure its workspace, hands it that
// workspace, calls it CALLS times (default 1) into the same result buffer and prints the
// result, one value per line (%.9g: float32 exactly). A failed call prints the status and
// model_last_error() and exits 1.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "model.h"
#include "xla/ffi/api/c_api.h"

// Defined by XLA_FFI_DEFINE_HANDLER_SYMBOL in the handler's source.
extern "C" XLA_FFI_Error *RmsNorm(XLA_FFI_CallFrame *call_frame);

static int failed(const char *what, int status) {
  std::fprintf(stderr, "deploy: %s: status %d: %s\n", what, status, model_last_error());
  return 1;
}

int main(int argc, char **argv) {
  long calls = argc > 1 ? std::atol(argv[1]) : 1;
  for (int64_t i = 0; model_required_target(i) != nullptr; ++i) {
    int status = model_register_handler(model_required_target(i), RmsNorm);
    if (status != MODEL_STATUS_OK) return failed("register_handler", status);
  }

  const model_tensor_info *x_info = model_main_argument(0);
  if (model_main_num_arguments() != 1 || model_main_num_results() != 1 ||
      x_info->rank != 2 || std::strcmp(x_info->dtype, "f32") != 0) {
    std::fprintf(stderr, "deploy: main is no f32 matrix -> f32 matrix function\n");
    return 1;
  }
  int64_t rows = x_info->dims[0], cols = x_info->dims[1];
  std::vector<float> x(rows * cols), y(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) x[i] = float(i % 7) - 3.0f;
  model_f32_2d in{x.data(), {rows, cols}}, out{y.data(), {rows, cols}};

  // Set-up: one call measures the workspace; from then on no call allocates.
  int status = model_main(&in, &out);
  if (status != MODEL_STATUS_OK) return failed("main", status);
  std::vector<unsigned char> workspace(model_main_workspace_size());
  model_set_workspace(workspace.data(), int64_t(workspace.size()));
  for (long call = 0; call < calls; ++call) {
    status = model_main(&in, &out);
    if (status != MODEL_STATUS_OK) return failed("main", status);
  }
  model_set_workspace(nullptr, 0);
  for (float value : y) std::printf("%.9g\n", value);
  return model_workspace_misses() == 0 ? 0 : 1;
}
