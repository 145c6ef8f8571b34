// Strided copy of 4-byte elements (f32, i32): copy.kern.h's copy_b32_strided,
// or one cudaMemcpyAsync when both sides are dense.
#include "launch.hpp"

#include "kernels/copy.kern.h"

namespace torsh::cuda {
namespace {

void copy_strided(CudaStream& s, const rt::CopyArgs& a) {
  const std::int64_t n = a.src.numel();
  if (n == 0) return;
  const StridedMeta m = gpu::strided_meta(a.src.shape, {&a.src, &a.out});
  if (gpu::dense(m, 2)) {
    const std::size_t es = dtype_size(a.out.dtype);
    const auto off = [&](const rt::TensorArg& t) { return static_cast<std::size_t>(t.offset) * es; };
    s.device().copy(*a.src.buffer, off(a.src), *a.out.buffer, off(a.out), static_cast<std::size_t>(n) * es, s);
    return;
  }
  const auto [grid, block] = grid_1d(s.device(), n);
  launch(s, TORSH_CUDA_KERNEL(copy_b32_strided), grid, block, static_cast<const uint*>(ptr_of(*a.src.buffer)),
         static_cast<uint*>(ptr_of(*a.out.buffer)), m);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Copy, entry<rt::OpKind::Copy, copy_strided>>(gpu::kCopyDTypes);
});

}  // namespace
}  // namespace torsh::cuda
