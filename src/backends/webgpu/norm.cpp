// LayerNorm / RMSNorm over contiguous rows: norm.wgsl's norm_rows, one
// work-group per row, f32, f16 and bf16 storage with f32 math.
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void norm(WebGpuDevice& dev, const rt::NormArgs& a) {
  if (a.rows == 0 || a.n == 0) return;
  // An absent weight or bias is never read: x stands in for its binding.
  const rt::TensorArg& w = a.weight.present() ? a.weight : a.x;
  const rt::TensorArg& b = a.bias.present() ? a.bias : a.x;
  Launch l(dev);
  l.tensor(a.x).tensor(w).tensor(b).tensor(a.out);
  l.param(a.n).param(l.offset(0)).param(l.offset(1)).param(l.offset(2)).param(l.offset(3)).param(a.eps);
  l.param(a.rms ? 1 : 0).param(a.weight.present() ? 1 : 0).param(a.bias.present() ? 1 : 0);
  l.param(gpu::elem_code(a.x.dtype)).run_rows("norm", "norm_rows", a.rows);
}

// Strided passes over a row: mean, variance and write (RMS: two).
bool norm_fits(const rt::DeviceImpl& d, const rt::NormArgs& a) {
  return loops_fit(d, (a.rms ? 2 : 3) * strided(a.n, 128) + 16) && fits(d, {&a.x, &a.weight, &a.bias, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Norm, entry<rt::OpKind::Norm, norm>>(gpu::kElemDTypes, norm_fits, kLoopFitsNote);
});

}  // namespace
}  // namespace torsh::webgpu
