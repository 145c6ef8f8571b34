// Rotary embedding: rope.wgsl's rope_elems, one invocation per element, f32,
// f16 and bf16 storage (cos and sin f32).
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void rope(WebGpuDevice& dev, const rt::RopeArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  Launch l(dev);
  l.tensor(a.x).tensor(a.cos).tensor(a.sin).tensor(a.out);
  l.param(n).param(a.x.shape[1]).param(a.x.shape[2]).param(a.x.shape[3]).param(a.rot_dim).param(a.pos0);
  l.param(l.offset(0)).param(l.offset(1)).param(l.offset(2)).param(l.offset(3)).param(a.neox ? 1 : 0);
  l.param(gpu::elem_code(a.x.dtype)).run("rope", "rope_elems", n);
}

bool rope_fits(const rt::DeviceImpl& d, const rt::RopeArgs& a) {
  return a.pos0 < (std::int64_t{1} << 31) && fits(d, {&a.x, &a.cos, &a.sin, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Rope, entry<rt::OpKind::Rope, rope>>(gpu::kElemDTypes, rope_fits, kFitsNote);
});

}  // namespace
}  // namespace torsh::webgpu
