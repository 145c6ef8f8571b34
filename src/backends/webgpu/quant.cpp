// Block-quantized weights: quant.wgsl's qmatmul_rows (f32 activations as they
// are, one work-group per weight row and 4 activation rows) and
// dequantize_rows (whole matrices and embedding lookups, f32, f16 or bf16 out).
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void qmatmul(WebGpuDevice& dev, const rt::QMatmulArgs& a) {
  if (a.m == 0 || a.n == 0) return;
  Launch l(dev);
  l.tensor(a.x).tensor(a.w).tensor(a.w).tensor(a.out);  // no ids: w stands in
  l.param(gpu::quant_code(a.format)).param(l.offset(1)).param(l.offset(0)).param(l.offset(3));
  l.param(a.m).param(a.n).param(a.k).run_rows("quant", "qmatmul_rows", gpu::qmatmul_groups(a));
}

void dequantize(WebGpuDevice& dev, const rt::DequantizeArgs& a) {
  const std::int64_t total = a.m * a.cols;
  if (total == 0) return;
  Launch l(dev);
  const rt::TensorArg& ids = a.ids.present() ? a.ids : a.w;
  l.tensor(a.w).tensor(a.w).tensor(ids).tensor(a.out);  // x unused: w stands in
  l.param(gpu::quant_code(a.format)).param(l.offset(0)).param(a.ids.present() ? l.offset(2) : 0u);
  l.param(l.offset(3)).param(a.cols).param(total).param(gpu::ids_width(a)).param(gpu::elem_code(a.out.dtype));
  l.run("quant", "dequantize_rows", total);
}

bool qmatmul_fits(const rt::DeviceImpl& d, const rt::QMatmulArgs& a) {
  // A thread's loop takes 512 of k a step.
  return a.m * a.k < (std::int64_t{1} << 31) && loops_fit(d, strided(a.k, 512) + 16) && fits(d, {&a.x, &a.w, &a.out});
}
bool dequantize_fits(const rt::DeviceImpl& d, const rt::DequantizeArgs& a) {
  return a.m * a.cols < (std::int64_t{1} << 31) && fits(d, {&a.w, &a.ids, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::QMatmul, entry<rt::OpKind::QMatmul, qmatmul>>(gpu::kF32, qmatmul_fits, kLoopFitsNote);
  t.add<rt::OpKind::Dequantize, entry<rt::OpKind::Dequantize, dequantize>>(gpu::kDequantizeDTypes, dequantize_fits,
                                                                           kFitsNote);
});

}  // namespace
}  // namespace torsh::webgpu
