// The loss scaler's overflow check: non_finite.kern.h's non_finite_elems sets
// a Bool flag when an f32, f64, f16 or bf16 tensor holds a NaN or an infinity.
#include "launch.hpp"

#include "backends/gpu/kernels/non_finite.kern.h"

namespace torsh::cuda {
namespace {

void non_finite(CudaStream& s, const rt::NonFiniteArgs& a) {
  const std::int64_t n = a.x.numel();
  if (n == 0) return;
  const auto [grid, block] = grid_1d(s.device(), n);
  launch(s, TORSH_CUDA_KERNEL(non_finite_elems), grid, block, bytes_of(*a.x.buffer), a.x.offset, n,
         gpu::elem_code(a.x.dtype), bytes_of(*a.flag.buffer), a.flag.offset);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::NonFinite, entry<rt::OpKind::NonFinite, non_finite>>(rt::DTypes::floating());
});

}  // namespace
}  // namespace torsh::cuda
