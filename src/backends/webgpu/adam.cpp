// Fused Adam / AdamW, one parameter tensor per launch: adam.wgsl's adam_elems,
// param and grad in f32, f16 or bf16, moments in f32.
#include "backends/gpu/adam_step.hpp"
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void adam(WebGpuDevice& dev, const rt::AdamArgs& a) {
  const std::int64_t n = a.param.numel();
  if (n == 0) return;
  const gpu::AdamScalars c = gpu::adam_scalars(a);
  Launch l(dev);
  l.tensor(a.param).tensor(a.grad).tensor(a.exp_avg).tensor(a.exp_avg_sq);
  for (std::size_t i = 0; i < 4; ++i) l.param(l.offset(i));
  l.param(n).param(a.beta1).param(a.beta2).param(c.step_size).param(c.inv_sqrt_bc2).param(a.eps).param(c.decay);
  l.param(c.l2).param(a.grad_scale).param(gpu::elem_code(a.param.dtype)).run("adam", "adam_elems", n);
}

bool adam_fits(const rt::DeviceImpl& d, const rt::AdamArgs& a) {
  return fits(d, {&a.param, &a.grad, &a.exp_avg, &a.exp_avg_sq});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Adam, entry<rt::OpKind::Adam, adam>>(gpu::kAdamDTypes, adam_fits, kFitsNote);
});

}  // namespace
}  // namespace torsh::webgpu
