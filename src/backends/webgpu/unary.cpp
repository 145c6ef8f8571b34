// Elementwise unary ops: unary.wgsl's unary_strided (unary_f32_dense when x
// and out are dense f32), f32, f16 and bf16 with f32 math (tanh and erf
// evaluated by the kernel itself, accurate near 0 where WGSL's built-ins may
// cancel), and neg, abs, relu on i8, u8, i32 and i64 (word pairs).
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void unary(WebGpuDevice& dev, const rt::UnaryArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  Launch l(dev);
  l.tensor(a.x).tensor(a.out).strided(a.out.shape, {&a.x, &a.out});
  const bool dense = a.out.dtype == DType::F32 && gpu::dense(gpu::strided_meta(a.out.shape, {&a.x, &a.out}), 2);
  l.param(gpu::unary_code(a.op)).param(gpu::elem_code(a.out.dtype));
  l.run("unary", dense ? "unary_f32_dense" : "unary_strided", n);
}

bool integer_op(rt::UnaryOp op) { return op == rt::UnaryOp::Neg || op == rt::UnaryOp::Abs || op == rt::UnaryOp::Relu; }

bool unary_fits(const rt::DeviceImpl& d, const rt::UnaryArgs& a) {
  return (!is_integral(a.out.dtype) || integer_op(a.op)) && fits(d, {&a.x, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Unary, entry<rt::OpKind::Unary, unary>>(
      rt::DTypes{DType::F32, DType::F16, DType::BF16, DType::I8, DType::U8, DType::I32, DType::I64}, unary_fits,
      "integers: neg, abs, relu only");
});

}  // namespace
}  // namespace torsh::webgpu
