// int8 matrix products (ONNX MatMulInteger / QLinearMatMul):
// integer_matmul.wgsl's 64 x 64 blocks, 16 x 16 invocations, batch in the
// third dimension. Absent zero points, scales and bias are bound as a (their
// counts say 0). Ten tensor bindings: devices whose
// maxStorageBuffersPerShaderStage is lower run the op elsewhere.
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

constexpr std::int64_t kBlock = 64;
constexpr std::uint32_t kBindings = 11;  // ten tensors and the params

void integer_matmul(WebGpuDevice& dev, const rt::IntegerMatmulArgs& a) {
  if (a.batch * a.m * a.n == 0) return;
  const auto or_a = [&](const rt::TensorArg& t) -> const rt::TensorArg& { return t.present() ? t : a.a; };
  const auto count = [](const rt::TensorArg& t) { return t.present() ? t.numel() : std::int64_t{0}; };
  Launch l(dev);
  l.tensor(a.a).tensor(a.b).tensor(or_a(a.a_zero_point)).tensor(or_a(a.b_zero_point)).tensor(or_a(a.a_scale));
  l.tensor(or_a(a.b_scale)).tensor(or_a(a.y_scale)).tensor(or_a(a.y_zero_point)).tensor(or_a(a.bias)).tensor(a.out);
  l.param(l.offset(0)).param(gpu::elem_code(a.a.dtype)).param(l.offset(1)).param(gpu::elem_code(a.b.dtype));
  l.param(a.b_batched ? a.k * a.n : 0);
  l.param(l.offset(2)).param(count(a.a_zero_point)).param(l.offset(3)).param(count(a.b_zero_point));
  l.param(l.offset(4)).param(count(a.a_scale)).param(l.offset(5)).param(count(a.b_scale));
  l.param(l.offset(6)).param(l.offset(7)).param((a.y_scale.present() ? 1 : 0) | (a.y_zero_point.present() ? 2 : 0));
  l.param(l.offset(8)).param(a.bias.present() ? 1 : 0);
  l.param(l.offset(9)).param(gpu::elem_code(a.out.dtype)).param(a.m).param(a.n).param(a.k);
  const auto blocks = [](std::int64_t v) { return static_cast<std::uint32_t>((v + kBlock - 1) / kBlock); };
  l.run_groups("integer_matmul", "integer_matmul_tiles", blocks(a.n), blocks(a.m), static_cast<std::uint32_t>(a.batch));
}

bool integer_matmul_fits(const rt::DeviceImpl& d, const rt::IntegerMatmulArgs& a) {
  const auto& dev = static_cast<const WebGpuDevice&>(d);
  const std::uint64_t groups = dev.limits().maxComputeWorkgroupsPerDimension;
  return dev.limits().maxStorageBuffersPerShaderStage >= kBindings &&
         static_cast<std::uint64_t>((std::max(a.m, a.n) + kBlock - 1) / kBlock) <= groups &&
         static_cast<std::uint64_t>(a.batch) <= groups && loops_fit(d, a.k) &&
         fits(d, {&a.a, &a.b, &a.a_zero_point, &a.b_zero_point, &a.a_scale, &a.b_scale, &a.y_scale, &a.y_zero_point,
                  &a.bias, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::IntegerMatmul, entry<rt::OpKind::IntegerMatmul, integer_matmul>>(
      rt::DTypes{DType::I32, DType::U8, DType::I8, DType::F32}, integer_matmul_fits,
      "11 storage bindings per stage, blocks within the dispatch limits, elements within one binding, k within the "
      "device's loop limit");
});

}  // namespace
}  // namespace torsh::webgpu
