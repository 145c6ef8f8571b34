// Elementwise f32 binary ops: binary.kern.h's binary_f32_contig when all three
// tensors are dense (at any offset: a pointer can start anywhere),
// binary_f32_strided for everything else (broadcast stride-0 operands, transposes).
#include "launch.hpp"

#include "kernels/binary.kern.h"

namespace torsh::cuda {

namespace {

void binary(CudaStream& s, const rt::BinaryArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  const StridedMeta m = gpu::strided_meta(a.out.shape, {&a.a, &a.b, &a.out});
  const bool dense = gpu::dense(m, 3);
  const auto [grid, block] = grid_1d(s.device(), n);
  if (dense) {
    launch(s, TORSH_CUDA_KERNEL(binary_f32_contig), grid, block, f32_at(a.a), f32_at(a.b), f32_at(a.out), n,
           gpu::binary_code(a.op));
  } else {
    const auto base = [](const rt::TensorArg& t) { return static_cast<float*>(ptr_of(*t.buffer)); };
    launch(s, TORSH_CUDA_KERNEL(binary_f32_strided), grid, block, base(a.a), base(a.b), base(a.out), m,
           gpu::binary_code(a.op));
  }
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Binary, entry<rt::OpKind::Binary, binary>>(gpu::kF32);
});

}  // namespace
}  // namespace torsh::cuda
