// int8 quantize / dequantize (ONNX QuantizeLinear / DequantizeLinear):
// linear_quant.wgsl, one invocation per element. A missing zero point is read
// from no binding (has_zp = 0); the scale stands in for it.
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

template <bool kQuantize>
void linear_quant(WebGpuDevice& dev, const rt::LinearQuantArgs& a) {
  const std::int64_t n = a.x.numel();
  if (n == 0) return;
  const bool has_zp = a.zero_point.present();
  Launch l(dev);
  l.tensor(a.x).tensor(a.scale).tensor(has_zp ? a.zero_point : a.scale).tensor(a.out);
  l.param(l.offset(0)).param(gpu::elem_code(a.x.dtype)).param(l.offset(1)).param(l.offset(2)).param(int{has_zp});
  l.param(l.offset(3)).param(gpu::elem_code(a.out.dtype)).param(n).param(a.channels).param(a.inner);
  l.run("linear_quant", kQuantize ? "quantize_linear_elems" : "dequantize_linear_elems", n);
}

bool linear_quant_fits(const rt::DeviceImpl& d, const rt::LinearQuantArgs& a) {
  return fits(d, {&a.x, &a.scale, &a.out}) && (!a.zero_point.present() || fits(d, {&a.zero_point}));
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::QuantizeLinear, entry<rt::OpKind::QuantizeLinear, linear_quant<true>>>(
      gpu::kElemDTypes, linear_quant_fits, kFitsNote);
  t.add<rt::OpKind::DequantizeLinear, entry<rt::OpKind::DequantizeLinear, linear_quant<false>>>(
      gpu::kElemDTypes, linear_quant_fits, kFitsNote);
});

}  // namespace
}  // namespace torsh::webgpu
