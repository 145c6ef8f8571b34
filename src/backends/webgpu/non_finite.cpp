// The loss scaler's overflow check: non_finite.wgsl's non_finite_elems sets a
// Bool flag when an f32, f64, f16 or bf16 tensor holds a NaN or an infinity
// (bit tests, so f64 works without doubles).
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void non_finite(WebGpuDevice& dev, const rt::NonFiniteArgs& a) {
  const std::int64_t n = a.x.numel();
  if (n == 0) return;
  Launch l(dev);
  l.tensor(a.x).tensor(a.flag);
  l.param(l.offset(0)).param(n).param(gpu::elem_code(a.x.dtype)).param(l.offset(1));
  l.run("non_finite", "non_finite_elems", n);
}

bool non_finite_fits(const rt::DeviceImpl& d, const rt::NonFiniteArgs& a) { return fits(d, {&a.x, &a.flag}); }

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::NonFinite, entry<rt::OpKind::NonFinite, non_finite>>(rt::DTypes::floating(), non_finite_fits,
                                                                         kFitsNote);
});

}  // namespace
}  // namespace torsh::webgpu
