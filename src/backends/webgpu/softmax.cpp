// Softmax / log-softmax over the middle axis of contiguous [outer, n, inner]:
// softmax.wgsl's softmax_rows, one work-group per row, f32, f16 and bf16.
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void softmax(WebGpuDevice& dev, const rt::SoftmaxArgs& a) {
  const std::int64_t rows = a.outer * a.inner;
  if (rows == 0 || a.n == 0) return;
  Launch l(dev);
  l.tensor(a.x).tensor(a.out);
  l.param(a.n).param(a.inner).param(a.log ? 1 : 0).param(gpu::elem_code(a.x.dtype));
  l.param(l.offset(0)).param(l.offset(1)).run_rows("softmax", "softmax_rows", rows);
}

// Three strided passes over a row (max, sum, write).
bool softmax_fits(const rt::DeviceImpl& d, const rt::SoftmaxArgs& a) {
  return loops_fit(d, 3 * strided(a.n, 128) + 16) && fits(d, {&a.x, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Softmax, entry<rt::OpKind::Softmax, softmax>>(gpu::kElemDTypes, softmax_fits, kLoopFitsNote);
});

}  // namespace
}  // namespace torsh::webgpu
