// Elementwise unary ops: unary.kern.h's unary_strided over any strides (dense
// views merge into one dimension), f32, f16 and bf16 storage with f32 math.
#include "launch.hpp"

#include "kernels/unary.kern.h"

namespace torsh::cuda {
namespace {

void unary(CudaStream& s, const rt::UnaryArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  const StridedMeta m = gpu::strided_meta(a.out.shape, {&a.x, &a.out});
  const auto [grid, block] = grid_1d(s.device(), n);
  launch(s, TORSH_CUDA_KERNEL(unary_strided), grid, block, bytes_of(*a.x.buffer), bytes_of(*a.out.buffer), m,
         gpu::unary_code(a.op), gpu::elem_code(a.out.dtype));
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Unary, entry<rt::OpKind::Unary, unary>>(gpu::kElemDTypes);
});

}  // namespace
}  // namespace torsh::cuda
