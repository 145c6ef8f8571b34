// Strided copies, any dtype: one clEnqueueCopyBuffer when both sides are
// dense, else copy.kern.h's copy_b{8,16,32,64}_strided by element size. Casts:
// cast_strided, or cast_f64_strided when either side is f64 (devices with
// cl_khr_fp64 only; the others leave f64 casts to the CPU).
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

void cast(OpenClStream& s, const rt::CopyArgs& a) {
  if (a.src.dtype == a.out.dtype) return copy_strided(s, a);
  const std::int64_t n = a.src.numel();
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const StridedMeta m = gpu::strided_meta(a.src.shape, {&a.src, &a.out});
  const Kernel k = dev.kernel(gpu::uses_f64(a) ? "cast_f64_strided" : "cast_strided");
  const auto [global, local] = grid_1d(dev, k, n);
  launch(s, k, global, local, mem_of(*a.src.buffer), mem_of(*a.out.buffer), m, cl_int{gpu::elem_code(a.src.dtype)},
         cl_int{gpu::elem_code(a.out.dtype)});
}

bool cast_fits(const rt::DeviceImpl& d, const rt::CopyArgs& a) { return !gpu::uses_f64(a) || d.capabilities().f64; }

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Copy, entry<rt::OpKind::Copy, copy_strided>>(gpu::kCopyDTypes);
  t.add<rt::OpKind::Cast, entry<rt::OpKind::Cast, cast>>(gpu::kCopyDTypes, cast_fits, "f64 needs cl_khr_fp64");
});

}  // namespace
}  // namespace torsh::opencl
