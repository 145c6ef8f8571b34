// Elementwise binary ops. f32: binary.kern.h's binary_f32_contig when all
// three tensors are dense (at any offset: a pointer can start anywhere),
// binary_f32_strided for everything else (broadcast stride-0 operands,
// transposes). f16, bf16 and the integers: binary_strided; f64: binary_f64_strided.
#include "launch.hpp"

#include "backends/gpu/kernels/binary.kern.h"

namespace torsh::cuda {

namespace {

void binary(CudaStream& s, const rt::BinaryArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  const StridedMeta m = gpu::strided_meta(a.out.shape, {&a.a, &a.b, &a.out});
  const auto [grid, block] = grid_1d(s.device(), n);
  const int op = gpu::binary_code(a.op);
  if (a.out.dtype == DType::F64) {
    const auto base = [](const rt::TensorArg& t) { return static_cast<double*>(ptr_of(*t.buffer)); };
    launch(s, TORSH_CUDA_KERNEL(binary_f64_strided), grid, block, base(a.a), base(a.b), base(a.out), m, op);
    return;
  }
  if (a.out.dtype != DType::F32) {
    launch(s, TORSH_CUDA_KERNEL(binary_strided), grid, block, bytes_of(*a.a.buffer), bytes_of(*a.b.buffer),
           bytes_of(*a.out.buffer), m, op, gpu::elem_code(a.out.dtype));
    return;
  }
  if (gpu::dense(m, 3)) {
    const long zero = 0;  // f32_at has applied the offsets
    launch(s, TORSH_CUDA_KERNEL(binary_f32_contig), grid, block, f32_at(a.a), f32_at(a.b), f32_at(a.out), zero, zero,
           zero, n, op);
  } else {
    const auto base = [](const rt::TensorArg& t) { return static_cast<float*>(ptr_of(*t.buffer)); };
    launch(s, TORSH_CUDA_KERNEL(binary_f32_strided), grid, block, base(a.a), base(a.b), base(a.out), m, op);
  }
}

bool binary_fits(const rt::DeviceImpl&, const rt::BinaryArgs& a) { return gpu::binary_fits(a); }

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Binary, entry<rt::OpKind::Binary, binary>>(gpu::kBinaryDTypes, binary_fits, "no integer div");
});

}  // namespace
}  // namespace torsh::cuda
