// int8 matrix products (ONNX MatMulInteger / QLinearMatMul):
// integer_matmul.kern.h's 64 x 64 tiles, 16 x 16 items, batch in the third
// dimension. Absent zero points and scales are read from no buffer (count 0);
// a's buffer stands in for them.
#include "launch.hpp"

namespace torsh::opencl {
namespace {

constexpr std::int64_t kTile = 64, kItems = 16;

void integer_matmul(OpenClStream& s, const rt::IntegerMatmulArgs& a) {
  const Kernel k = s.device().kernel("integer_matmul_tiles");
  const auto buf = [&](const rt::TensorArg& t) { return mem_of(*(t.present() ? t : a.a).buffer); };
  const auto off = [](const rt::TensorArg& t) { return cl_long{t.present() ? t.offset : 0}; };
  const auto count = [](const rt::TensorArg& t) { return cl_long{t.present() ? t.numel() : 0}; };
  const std::size_t gx = static_cast<std::size_t>((a.n + kTile - 1) / kTile * kItems);
  const std::size_t gy = static_cast<std::size_t>((a.m + kTile - 1) / kTile * kItems);
  launch(s, k, range(gx, gy, static_cast<std::size_t>(a.batch)), range(kItems, kItems, 1), mem_of(*a.a.buffer),
         cl_long{a.a.offset}, cl_int{gpu::elem_code(a.a.dtype)}, mem_of(*a.b.buffer), cl_long{a.b.offset},
         cl_int{gpu::elem_code(a.b.dtype)}, cl_long{a.b_batched ? a.k * a.n : 0}, buf(a.a_zero_point),
         off(a.a_zero_point), count(a.a_zero_point), buf(a.b_zero_point), off(a.b_zero_point), count(a.b_zero_point),
         buf(a.a_scale), off(a.a_scale), count(a.a_scale), buf(a.b_scale), off(a.b_scale), count(a.b_scale),
         buf(a.y_scale), off(a.y_scale), buf(a.y_zero_point), off(a.y_zero_point), cl_int{a.y_scale.present()},
         buf(a.bias), off(a.bias), cl_int{a.bias.present()}, mem_of(*a.out.buffer), cl_long{a.out.offset},
         cl_int{gpu::elem_code(a.out.dtype)}, cl_long{a.m}, cl_long{a.n}, cl_long{a.k});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::IntegerMatmul, entry<rt::OpKind::IntegerMatmul, integer_matmul>>(
      rt::DTypes{DType::I32, DType::U8, DType::I8, DType::F32});
});

}  // namespace
}  // namespace torsh::opencl
