// Strided copies, any dtype: one clEnqueueCopyBuffer when both sides are
// dense, else copy.kern.h's copy_b{8,16,32,64}_strided by element size.
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void copy_strided(OpenClStream& s, const rt::CopyArgs& a) {
  const std::int64_t n = a.src.numel();
  if (n == 0) return;
  const StridedMeta m = gpu::strided_meta(a.src.shape, {&a.src, &a.out});
  const std::size_t es = dtype_size(a.out.dtype);
  if (gpu::dense(m, 2)) {
    const auto off = [&](const rt::TensorArg& t) { return static_cast<std::size_t>(t.offset) * es; };
    s.device().copy(*a.src.buffer, off(a.src), *a.out.buffer, off(a.out), static_cast<std::size_t>(n) * es, s);
    return;
  }
  OpenClDevice& dev = s.device();
  const Kernel k = dev.kernel(gpu::copy_kernel(es));
  const auto [global, local] = grid_1d(dev, k, n);
  launch(s, k, global, local, mem_of(*a.src.buffer), mem_of(*a.out.buffer), m);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Copy, entry<rt::OpKind::Copy, copy_strided>>(gpu::kCopyDTypes);
});

}  // namespace
}  // namespace torsh::opencl
