// Elementwise unary ops: unary.kern.h's unary_strided over any strides (dense
// views merge into one dimension), f32, f16 and bf16 storage with f32 math and
// the integers (neg, abs, relu); unary_f64_strided for f64.
#include "launch.hpp"

#include "kernels/unary.kern.h"

namespace torsh::cuda {
namespace {

void unary(CudaStream& s, const rt::UnaryArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  const StridedMeta m = gpu::strided_meta(a.out.shape, {&a.x, &a.out});
  const auto [grid, block] = grid_1d(s.device(), n);
  const int op = gpu::unary_code(a.op);
  if (a.out.dtype == DType::F64) {
    const auto base = [](const rt::TensorArg& t) { return static_cast<double*>(ptr_of(*t.buffer)); };
    launch(s, TORSH_CUDA_KERNEL(unary_f64_strided), grid, block, base(a.x), base(a.out), m, op);
    return;
  }
  launch(s, TORSH_CUDA_KERNEL(unary_strided), grid, block, bytes_of(*a.x.buffer), bytes_of(*a.out.buffer), m, op,
         gpu::elem_code(a.out.dtype));
}

bool unary_fits(const rt::DeviceImpl&, const rt::UnaryArgs& a) { return gpu::unary_fits(a); }

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Unary, entry<rt::OpKind::Unary, unary>>(gpu::kUnaryDTypes, unary_fits,
                                                            "integers: neg, abs, relu only");
});

}  // namespace
}  // namespace torsh::cuda
