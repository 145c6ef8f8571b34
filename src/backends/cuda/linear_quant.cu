// int8 quantize / dequantize (ONNX QuantizeLinear / DequantizeLinear):
// linear_quant.kern.h, one thread per element. A missing zero point is read
// from no buffer (has_zp = 0); the scale's buffer stands in for it.
#include "launch.hpp"

#include "backends/gpu/kernels/linear_quant.kern.h"

namespace torsh::cuda {
namespace {

template <bool kQuantize>
void linear_quant(CudaStream& s, const rt::LinearQuantArgs& a) {
  const std::int64_t n = a.x.numel();
  if (n == 0) return;
  const auto [grid, block] = grid_1d(s.device(), n);
  const bool has_zp = a.zero_point.present();
  const rt::TensorArg& zp = has_zp ? a.zero_point : a.scale;
  const auto* scale = reinterpret_cast<const float*>(bytes_of(*a.scale.buffer));
  // The two entries take the same parameters.
  const auto kernel = kQuantize ? TORSH_CUDA_KERNEL(quantize_linear_elems) : TORSH_CUDA_KERNEL(dequantize_linear_elems);
  launch(s, kernel, grid, block, bytes_of(*a.x.buffer), a.x.offset, gpu::elem_code(a.x.dtype), scale, a.scale.offset,
         bytes_of(*zp.buffer), zp.offset, int{has_zp}, bytes_of(*a.out.buffer), a.out.offset,
         gpu::elem_code(a.out.dtype), n, a.channels, a.inner);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::QuantizeLinear, entry<rt::OpKind::QuantizeLinear, linear_quant<true>>>(gpu::kElemDTypes);
  t.add<rt::OpKind::DequantizeLinear, entry<rt::OpKind::DequantizeLinear, linear_quant<false>>>(gpu::kElemDTypes);
});

}  // namespace
}  // namespace torsh::cuda
