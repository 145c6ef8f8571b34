// int8 matrix products (ONNX MatMulInteger / QLinearMatMul):
// integer_matmul.kern.h's 64 x 64 tiles, 16 x 16 threads, batch in gridDim.z.
// Absent zero points and scales are read from no buffer (count 0); a's
// buffer stands in for them.
#include "launch.hpp"

#include <climits>

#include "kernels/integer_matmul.kern.h"

namespace torsh::cuda {
namespace {

constexpr std::int64_t kTile = 64, kItems = 16;

// gridDim.y and gridDim.z stop at 65535.
bool fits_grid(const rt::DeviceImpl&, const rt::IntegerMatmulArgs& a) {
  return (a.n + kTile - 1) / kTile <= INT_MAX && (a.m + kTile - 1) / kTile <= 65535 && a.batch <= 65535;
}

void integer_matmul(CudaStream& s, const rt::IntegerMatmulArgs& a) {
  const auto bytes = [&](const rt::TensorArg& t) -> const unsigned char* { return bytes_of(*(t.present() ? t : a.a).buffer); };
  const auto floats = [&](const rt::TensorArg& t) {
    return reinterpret_cast<const float*>(bytes_of(*(t.present() ? t : a.a).buffer));
  };
  const auto off = [](const rt::TensorArg& t) { return long{t.present() ? t.offset : 0}; };
  const auto count = [](const rt::TensorArg& t) { return long{t.present() ? t.numel() : 0}; };
  const dim3 grid(static_cast<unsigned>((a.n + kTile - 1) / kTile), static_cast<unsigned>((a.m + kTile - 1) / kTile),
                  static_cast<unsigned>(a.batch));
  launch(s, TORSH_CUDA_KERNEL(integer_matmul_tiles), grid, dim3(kItems, kItems, 1), bytes(a.a), long{a.a.offset},
         gpu::elem_code(a.a.dtype), bytes(a.b), long{a.b.offset}, gpu::elem_code(a.b.dtype),
         long{a.b_batched ? a.k * a.n : 0}, bytes(a.a_zero_point), off(a.a_zero_point), count(a.a_zero_point),
         bytes(a.b_zero_point), off(a.b_zero_point), count(a.b_zero_point), floats(a.a_scale), off(a.a_scale),
         count(a.a_scale), floats(a.b_scale), off(a.b_scale), count(a.b_scale), floats(a.y_scale), off(a.y_scale),
         bytes(a.y_zero_point), off(a.y_zero_point), int{a.y_scale.present()},
         reinterpret_cast<const int*>(bytes(a.bias)), off(a.bias), int{a.bias.present()}, bytes_of(*a.out.buffer),
         long{a.out.offset}, gpu::elem_code(a.out.dtype), long{a.m}, long{a.n}, long{a.k});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::IntegerMatmul, entry<rt::OpKind::IntegerMatmul, integer_matmul>>(
      rt::DTypes{DType::I32, DType::U8, DType::I8, DType::F32}, fits_grid, "fewer than 65536 row tiles and batches");
});

}  // namespace
}  // namespace torsh::cuda
