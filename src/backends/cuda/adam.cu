// Fused Adam / AdamW, one parameter tensor per launch: adam.kern.h's
// adam_elems, param and grad in f32, f16 or bf16, moments in f32.
#include "launch.hpp"

#include "backends/gpu/adam_step.hpp"
#include "backends/gpu/kernels/adam.kern.h"

namespace torsh::cuda {
namespace {

void adam(CudaStream& s, const rt::AdamArgs& a) {
  const std::int64_t n = a.param.numel();
  if (n == 0) return;
  const auto [grid, block] = grid_1d(s.device(), n);
  const gpu::AdamScalars c = gpu::adam_scalars(a);
  const auto f32 = [](const rt::TensorArg& t) { return static_cast<float*>(ptr_of(*t.buffer)); };
  launch(s, TORSH_CUDA_KERNEL(adam_elems), grid, block, bytes_of(*a.param.buffer), bytes_of(*a.grad.buffer),
         f32(a.exp_avg), f32(a.exp_avg_sq), a.param.offset, a.grad.offset, a.exp_avg.offset, a.exp_avg_sq.offset, n,
         a.beta1, a.beta2, c.step_size, c.inv_sqrt_bc2, a.eps, c.decay, c.l2, a.grad_scale,
         gpu::elem_code(a.param.dtype));
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Adam, entry<rt::OpKind::Adam, adam>>(gpu::kAdamDTypes);
});

}  // namespace
}  // namespace torsh::cuda
