// Strided copies, any dtype: one cudaMemcpyAsync when both sides are dense,
// else copy.kern.h's copy_b{8,16,32,64}_strided by element size. Casts:
// cast_strided, or cast_f64_strided when either side is f64.
#include "launch.hpp"

#include "backends/gpu/kernels/copy.kern.h"

namespace torsh::cuda {
namespace {

void copy_strided(CudaStream& s, const rt::CopyArgs& a) {
  const std::int64_t n = a.src.numel();
  if (n == 0) return;
  const StridedMeta m = gpu::strided_meta(a.src.shape, {&a.src, &a.out});
  const std::size_t es = dtype_size(a.out.dtype);
  if (gpu::dense(m, 2)) {
    const auto off = [&](const rt::TensorArg& t) { return static_cast<std::size_t>(t.offset) * es; };
    s.device().copy(*a.src.buffer, off(a.src), *a.out.buffer, off(a.out), static_cast<std::size_t>(n) * es, s);
    return;
  }
  const auto [grid, block] = grid_1d(s.device(), n);
  void* src = ptr_of(*a.src.buffer);
  void* out = ptr_of(*a.out.buffer);
  switch (es) {
    case 1:
      return launch(s, TORSH_CUDA_KERNEL(copy_b8_strided), grid, block, static_cast<const uchar*>(src),
                    static_cast<uchar*>(out), m);
    case 2:
      return launch(s, TORSH_CUDA_KERNEL(copy_b16_strided), grid, block, static_cast<const ushort*>(src),
                    static_cast<ushort*>(out), m);
    case 4:
      return launch(s, TORSH_CUDA_KERNEL(copy_b32_strided), grid, block, static_cast<const uint*>(src),
                    static_cast<uint*>(out), m);
    default:
      return launch(s, TORSH_CUDA_KERNEL(copy_b64_strided), grid, block, static_cast<const ulong*>(src),
                    static_cast<ulong*>(out), m);
  }
}

void cast(CudaStream& s, const rt::CopyArgs& a) {
  if (a.src.dtype == a.out.dtype) return copy_strided(s, a);
  const std::int64_t n = a.src.numel();
  if (n == 0) return;
  const StridedMeta m = gpu::strided_meta(a.src.shape, {&a.src, &a.out});
  const auto [grid, block] = grid_1d(s.device(), n);
  const int sdt = gpu::elem_code(a.src.dtype), ddt = gpu::elem_code(a.out.dtype);
  if (gpu::uses_f64(a))
    launch(s, TORSH_CUDA_KERNEL(cast_f64_strided), grid, block, bytes_of(*a.src.buffer), bytes_of(*a.out.buffer), m,
           sdt, ddt);
  else
    launch(s, TORSH_CUDA_KERNEL(cast_strided), grid, block, bytes_of(*a.src.buffer), bytes_of(*a.out.buffer), m, sdt,
           ddt);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Copy, entry<rt::OpKind::Copy, copy_strided>>(gpu::kCopyDTypes);
  t.add<rt::OpKind::Cast, entry<rt::OpKind::Cast, cast>>(gpu::kCopyDTypes);
});

}  // namespace
}  // namespace torsh::cuda
