// batch_norm per channel: batch_norm.kern.h's *_apply (inference, running
// statistics; one thread per element) or *_train (one BN_GROUP block per
// channel: batch statistics, running-statistics update, normalisation).
// f32, f16 and bf16 with f32 math (batch_norm_elems_*); f64 (batch_norm_f64_*).
#include "launch.hpp"

#include <climits>

#include "backends/gpu/conv_meta.hpp"
#include "backends/gpu/kernels/batch_norm.kern.h"

namespace torsh::cuda {
namespace {

// Training runs one block per channel in gridDim.x: up to 2^31 - 1 channels.
bool fits_grid(const rt::DeviceImpl&, const rt::BatchNormArgs& a) { return !a.training || a.c <= INT_MAX; }

void batch_norm(CudaStream& s, const rt::BatchNormArgs& a) {
  const BatchNormMeta m = gpu::batch_norm_meta(a);
  const bool f64 = a.x.dtype == DType::F64;
  // An absent tensor is never read: x stands in for its pointer.
  unsigned char* x = bytes_of(*a.x.buffer);
  const auto ptr_or_x = [&](const rt::TensorArg& t) { return t.present() ? bytes_of(*t.buffer) : x; };
  unsigned char *w = ptr_or_x(a.weight), *b = ptr_or_x(a.bias), *rm = ptr_or_x(a.running_mean),
                *rv = ptr_or_x(a.running_var), *out = bytes_of(*a.out.buffer);
  if (a.training) {
    // Even an empty batch updates the running statistics (with NaN), as the CPU does.
    if (a.c == 0) return;
    const dim3 grid(static_cast<unsigned>(a.c)), block(BN_GROUP);
    if (f64)
      launch(s, TORSH_CUDA_KERNEL(batch_norm_f64_train), grid, block, x, w, b, rm, rv, out, m);
    else
      launch(s, TORSH_CUDA_KERNEL(batch_norm_elems_train), grid, block, x, w, b, rm, rv, out, m);
    return;
  }
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  const auto [grid, block] = grid_1d(s.device(), n);
  if (f64)
    launch(s, TORSH_CUDA_KERNEL(batch_norm_f64_apply), grid, block, x, w, b, rm, rv, out, m);
  else
    launch(s, TORSH_CUDA_KERNEL(batch_norm_elems_apply), grid, block, x, w, b, rm, rv, out, m);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::BatchNorm, entry<rt::OpKind::BatchNorm, batch_norm>>(gpu::kWindowDTypes, fits_grid,
                                                                         "training: fewer than 2^31 channels");
});

}  // namespace
}  // namespace torsh::cuda
