// Max and average pooling: pool2d.wgsl's pool2d_elems, one invocation per
// output element, f32, f16 and bf16.
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void pool2d(WebGpuDevice& dev, const rt::Pool2dArgs& a) {
  const std::int64_t total = a.out.numel();
  if (total == 0) return;
  Launch l(dev);
  l.tensor(a.x).tensor(a.out);
  l.param(total).param(a.x.shape[2]).param(a.x.shape[3]).param(a.out.shape[2]).param(a.out.shape[3]);
  l.param(a.kernel_h).param(a.kernel_w).param(a.stride_h).param(a.stride_w).param(a.pad_h).param(a.pad_w);
  l.param(a.kind == rt::PoolKind::Max ? 1 : 0).param(a.count_include_pad ? 1 : 0).param(gpu::elem_code(a.x.dtype));
  l.param(l.offset(0)).param(l.offset(1)).run("pool2d", "pool2d_elems", total);
}

bool pool2d_fits(const rt::DeviceImpl& d, const rt::Pool2dArgs& a) {
  constexpr std::int64_t kMax = std::int64_t{1} << 30;  // the kernel's window arithmetic is in i32
  for (std::int64_t v : {a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_h, a.pad_w, a.x.shape[2], a.x.shape[3]})
    if (v >= kMax) return false;
  // The window's nested loops.
  return loops_fit(d, a.kernel_h * (a.kernel_w + 2) + 16) && fits(d, {&a.x, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Pool2d, entry<rt::OpKind::Pool2d, pool2d>>(gpu::kElemDTypes, pool2d_fits, kLoopFitsNote);
});

}  // namespace
}  // namespace torsh::webgpu
