// Fused Adam / AdamW, one parameter tensor per launch: adam.kern.h's
// adam_elems, param and grad in f32, f16 or bf16, moments in f32.
#include "backends/gpu/adam_step.hpp"
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void adam(OpenClStream& s, const rt::AdamArgs& a) {
  const std::int64_t n = a.param.numel();
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const Kernel k = dev.kernel("adam_elems");
  const auto [global, local] = grid_1d(dev, k, n);
  const gpu::AdamScalars c = gpu::adam_scalars(a);
  launch(s, k, global, local, mem_of(*a.param.buffer), mem_of(*a.grad.buffer), mem_of(*a.exp_avg.buffer),
         mem_of(*a.exp_avg_sq.buffer), cl_long{a.param.offset}, cl_long{a.grad.offset}, cl_long{a.exp_avg.offset},
         cl_long{a.exp_avg_sq.offset}, cl_long{n}, cl_float{a.beta1}, cl_float{a.beta2}, cl_float{c.step_size},
         cl_float{c.inv_sqrt_bc2}, cl_float{a.eps}, cl_float{c.decay}, cl_float{c.l2}, cl_float{a.grad_scale},
         cl_int{gpu::elem_code(a.param.dtype)});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Adam, entry<rt::OpKind::Adam, adam>>(gpu::kAdamDTypes);
});

}  // namespace
}  // namespace torsh::opencl
