// Elementwise unary ops: unary.kern.h's unary_strided over any strides (dense
// views merge into one dimension), f32, f16 and bf16 storage with f32 math.
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void unary(OpenClStream& s, const rt::UnaryArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const StridedMeta m = gpu::strided_meta(a.out.shape, {&a.x, &a.out});
  const Kernel k = dev.kernel("unary_strided");
  const auto [global, local] = grid_1d(dev, k, n);
  launch(s, k, global, local, mem_of(*a.x.buffer), mem_of(*a.out.buffer), m, cl_int{gpu::unary_code(a.op)},
         cl_int{gpu::elem_code(a.out.dtype)});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Unary, entry<rt::OpKind::Unary, unary>>(gpu::kElemDTypes);
});

}  // namespace
}  // namespace torsh::opencl
