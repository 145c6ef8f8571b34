// Elementwise binary ops: binary.wgsl's binary_strided over broadcast, strided
// operands (binary_f32_dense when all three are dense f32), f32, f16, bf16 (f32 math) and i8, u8, i32, i64 (wrapping;
// i64 as word pairs). WGSL has no doubles, so f64 runs on the CPU.
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void binary(WebGpuDevice& dev, const rt::BinaryArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  Launch l(dev);
  l.tensor(a.a).tensor(a.b).tensor(a.out).strided(a.out.shape, {&a.a, &a.b, &a.out});
  const bool dense = a.out.dtype == DType::F32 && gpu::dense(gpu::strided_meta(a.out.shape, {&a.a, &a.b, &a.out}), 3);
  l.param(gpu::binary_code(a.op)).param(gpu::elem_code(a.out.dtype));
  l.run("binary", dense ? "binary_f32_dense" : "binary_strided", n);
}

bool binary_fits(const rt::DeviceImpl& d, const rt::BinaryArgs& a) {
  return gpu::binary_fits(a) && fits(d, {&a.a, &a.b, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Binary, entry<rt::OpKind::Binary, binary>>(
      rt::DTypes{DType::F32, DType::F16, DType::BF16, DType::I8, DType::U8, DType::I32, DType::I64}, binary_fits,
      "no integer div (it runs in f64); no f64 (WGSL has no doubles)");
});

}  // namespace
}  // namespace torsh::webgpu
