// Strided copy of every dtype (copy.wgsl's copy_strided moves 1-, 2-, 4- or
// 8-byte elements unchanged) and casts between f32, f16, bf16, i64, i32, i8,
// u8 and bool (cast_strided, i64 as pairs of 32-bit words); WGSL has no
// doubles, so casts to or from f64 run on the CPU.
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void copy(WebGpuDevice& dev, const rt::CopyArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  Launch l(dev);
  l.tensor(a.src).tensor(a.out).strided(a.out.shape, {&a.src, &a.out});
  l.param(static_cast<std::uint32_t>(dtype_size(a.out.dtype))).run("copy", "copy_strided", n);
}

void cast(WebGpuDevice& dev, const rt::CopyArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  Launch l(dev);
  l.tensor(a.src).tensor(a.out).strided(a.out.shape, {&a.src, &a.out});
  l.param(gpu::elem_code(a.src.dtype)).param(gpu::elem_code(a.out.dtype)).run("copy", "cast_strided", n);
}

bool copy_fits(const rt::DeviceImpl& d, const rt::CopyArgs& a) { return fits(d, {&a.src, &a.out}); }

bool cast_fits(const rt::DeviceImpl& d, const rt::CopyArgs& a) {
  return a.src.dtype != DType::F64 && a.out.dtype != DType::F64 && copy_fits(d, a);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Copy, entry<rt::OpKind::Copy, copy>>(gpu::kCopyDTypes, copy_fits, kFitsNote);
  t.add<rt::OpKind::Cast, entry<rt::OpKind::Cast, cast>>(rt::DTypes::all().without({DType::F64}), cast_fits,
                                                         "no f64 on either side (WGSL has no doubles)");
});

}  // namespace
}  // namespace torsh::webgpu
