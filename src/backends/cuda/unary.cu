// Elementwise unary ops: dense f32 takes unary_f32_items_<op>; otherwise
// unary.kern.h's unary_strided over any strides (dense views merge into one
// dimension), f32, f16 and bf16 storage with f32 math and the integers (neg,
// abs, relu); unary_f64_strided for f64.
#include <climits>

#include "launch.hpp"

#include "backends/gpu/kernels/unary.kern.h"

namespace torsh::cuda {
namespace {

// unary_f32_items_<op>: one thread per element with the op folded in; the
// strided kernel's 64-bit index division per element costs more than the
// op on a GPU (src/backends/gpu/README.md, cuda/unary.cu).
using ItemsKernel = KernelRef<const float*, float*, long, long, long>;
ItemsKernel items_kernel(rt::UnaryOp op) {
  switch (gpu::unary_code(op)) {
    case UNARY_NEG: return TORSH_CUDA_KERNEL(unary_f32_items_neg);
    case UNARY_ABS: return TORSH_CUDA_KERNEL(unary_f32_items_abs);
    case UNARY_EXP: return TORSH_CUDA_KERNEL(unary_f32_items_exp);
    case UNARY_LOG: return TORSH_CUDA_KERNEL(unary_f32_items_log);
    case UNARY_SQRT: return TORSH_CUDA_KERNEL(unary_f32_items_sqrt);
    case UNARY_RSQRT: return TORSH_CUDA_KERNEL(unary_f32_items_rsqrt);
    case UNARY_TANH: return TORSH_CUDA_KERNEL(unary_f32_items_tanh);
    case UNARY_SIGMOID: return TORSH_CUDA_KERNEL(unary_f32_items_sigmoid);
    case UNARY_RELU: return TORSH_CUDA_KERNEL(unary_f32_items_relu);
    case UNARY_GELU: return TORSH_CUDA_KERNEL(unary_f32_items_gelu);
    case UNARY_GELU_TANH: return TORSH_CUDA_KERNEL(unary_f32_items_gelu_tanh);
    default: return TORSH_CUDA_KERNEL(unary_f32_items_silu);
  }
}

void unary(CudaStream& s, const rt::UnaryArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  const StridedMeta m = gpu::strided_meta(a.out.shape, {&a.x, &a.out});
  if (a.out.dtype == DType::F32 && gpu::dense(m, 2) && n <= std::int64_t{INT_MAX} * 256) {
    const long zero = 0, count = n;
    launch(s, items_kernel(a.op), dim3(static_cast<unsigned>((n + 255) / 256)), dim3(256), f32_at(a.x), f32_at(a.out),
           zero, zero, count);
    return;
  }
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
