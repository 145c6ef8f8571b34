// Max and average pooling: pool2d.kern.h's pool2d_elems (f32, f16, bf16 with
// f32 math) or pool2d_f64 (devices with cl_khr_fp64), one work-item per output
// element over a grid-stride loop.
#include "backends/gpu/conv_meta.hpp"
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void pool2d(OpenClStream& s, const rt::Pool2dArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const Kernel k = dev.kernel(a.x.dtype == DType::F64 ? "pool2d_f64" : "pool2d_elems");
  const auto [global, local] = grid_1d(dev, k, n);
  launch(s, k, global, local, mem_of(*a.x.buffer), mem_of(*a.out.buffer), gpu::pool2d_meta(a));
}

bool pool2d_fits(const rt::DeviceImpl& d, const rt::Pool2dArgs& a) {
  return a.x.dtype != DType::F64 || d.capabilities().f64;
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Pool2d, entry<rt::OpKind::Pool2d, pool2d>>(gpu::kWindowDTypes, pool2d_fits,
                                                               "f64 needs cl_khr_fp64");
});

}  // namespace
}  // namespace torsh::opencl
