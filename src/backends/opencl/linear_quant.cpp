// int8 quantize / dequantize (ONNX QuantizeLinear / DequantizeLinear):
// linear_quant.kern.h, one work-item per element. A missing zero point is
// read from no buffer (has_zp = 0); the scale's buffer stands in for it.
#include "launch.hpp"

namespace torsh::opencl {
namespace {

template <bool kQuantize>
void linear_quant(OpenClStream& s, const rt::LinearQuantArgs& a) {
  const std::int64_t n = a.x.numel();
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const Kernel k = dev.kernel(kQuantize ? "quantize_linear_elems" : "dequantize_linear_elems");
  const auto [global, local] = grid_1d(dev, k, n);
  const bool has_zp = a.zero_point.present();
  const rt::TensorArg& zp = has_zp ? a.zero_point : a.scale;
  launch(s, k, global, local, mem_of(*a.x.buffer), cl_long{a.x.offset}, cl_int{gpu::elem_code(a.x.dtype)},
         mem_of(*a.scale.buffer), cl_long{a.scale.offset}, mem_of(*zp.buffer), cl_long{zp.offset}, cl_int{has_zp},
         mem_of(*a.out.buffer), cl_long{a.out.offset}, cl_int{gpu::elem_code(a.out.dtype)}, cl_long{n},
         cl_long{a.channels}, cl_long{a.inner});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::QuantizeLinear, entry<rt::OpKind::QuantizeLinear, linear_quant<true>>>(gpu::kElemDTypes);
  t.add<rt::OpKind::DequantizeLinear, entry<rt::OpKind::DequantizeLinear, linear_quant<false>>>(gpu::kElemDTypes);
});

}  // namespace
}  // namespace torsh::opencl
