// Block-quantized weights (quant.kern.h): qmatmul_f32, one QM_GROUP block per
// weight row and QM_ROWS activation rows, and dequantize_f32/_b16 for whole
// matrices and embedding lookups. Pointers start at the tensors' first elements.
#include "launch.hpp"

#include <climits>

#include "backends/gpu/kernels/quant.kern.h"

namespace torsh::cuda {
namespace {

// The groups are one gridDim.x (up to 2^31 - 1): n * ceil(m / QM_ROWS) must fit; larger products run on the CPU.
bool fits_grid(const rt::DeviceImpl&, const rt::QMatmulArgs& a) { return gpu::qmatmul_groups(a) <= INT_MAX; }

// A tensor's first element, as bytes (offsets are in elements).
unsigned char* bytes_at(const rt::TensorArg& t) {
  return static_cast<unsigned char*>(ptr_of(*t.buffer)) + t.offset * static_cast<std::int64_t>(dtype_size(t.dtype));
}

void qmatmul(CudaStream& s, const rt::QMatmulArgs& a) {
  if (a.m == 0 || a.n == 0) return;
  launch(s, TORSH_CUDA_KERNEL(qmatmul_f32), dim3(static_cast<unsigned>(gpu::qmatmul_groups(a))), dim3(QM_GROUP),
         f32_at(a.x), bytes_at(a.w), f32_at(a.out), a.m, a.n, a.k, gpu::quant_code(a.format));
}

void dequantize(CudaStream& s, const rt::DequantizeArgs& a) {
  const long total = a.m * a.cols;
  if (total == 0) return;
  const int fmt = gpu::quant_code(a.format), width = gpu::ids_width(a);
  // i64 ids are read as pairs of ints (quant.kern.h); without ids the pointer is never read.
  const int* ids = a.ids.present() ? reinterpret_cast<const int*>(bytes_at(a.ids)) : nullptr;
  const auto [grid, block] = grid_1d(s.device(), total);
  unsigned char* out = bytes_at(a.out);
  if (a.out.dtype == DType::F32) {
    launch(s, TORSH_CUDA_KERNEL(dequantize_f32), grid, block, bytes_at(a.w), ids, reinterpret_cast<float*>(out), fmt,
           width, a.cols, total);
  } else {
    launch(s, TORSH_CUDA_KERNEL(dequantize_b16), grid, block, bytes_at(a.w), ids, reinterpret_cast<ushort*>(out), fmt,
           width, a.cols, total, a.out.dtype == DType::BF16 ? 1 : 0);
  }
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::QMatmul, entry<rt::OpKind::QMatmul, qmatmul>>(gpu::kF32, fits_grid,
                                                                  "n * ceil(m / 4) under 2^31 work-groups");
  t.add<rt::OpKind::Dequantize, entry<rt::OpKind::Dequantize, dequantize>>(gpu::kDequantizeDTypes);
});

}  // namespace
}  // namespace torsh::cuda
