// NCHW convolution: conv2d.wgsl's conv2d_tiled, an implicit GEMM (output
// pixels x the group's output channels, reduced over input channels and
// taps) with input patches gathered into workgroup memory; stride, padding,
// dilation and groups (depthwise included); f32, f16 and bf16.
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

constexpr std::int64_t kTile = 64;

void conv2d(WebGpuDevice& dev, const rt::Conv2dArgs& a) {
  if (a.out.numel() == 0) return;
  const std::int64_t n = a.x.shape[0], k = a.w.shape[0], p = a.out.shape[2], q = a.out.shape[3];
  Launch l(dev);
  l.tensor(a.x).tensor(a.w).tensor(a.bias.present() ? a.bias : a.x).tensor(a.out);
  l.param(n).param(a.x.shape[1]).param(a.x.shape[2]).param(a.x.shape[3]).param(k).param(p).param(q);
  l.param(a.w.shape[2]).param(a.w.shape[3]).param(a.stride_h).param(a.stride_w).param(a.pad_h).param(a.pad_w);
  l.param(a.dil_h).param(a.dil_w).param(a.groups).param(a.bias.present() ? 1 : 0).param(gpu::elem_code(a.x.dtype));
  for (std::size_t i = 0; i < 4; ++i) l.param(l.offset(i));
  const auto tiles = [](std::int64_t v) { return static_cast<std::uint32_t>((v + kTile - 1) / kTile); };
  l.run_groups("conv2d", "conv2d_tiled", tiles(k / a.groups), tiles(n * p * q), static_cast<std::uint32_t>(a.groups));
}

bool conv2d_fits(const rt::DeviceImpl& d, const rt::Conv2dArgs& a) {
  const std::int64_t max_groups = static_cast<const WebGpuDevice&>(d).limits().maxComputeWorkgroupsPerDimension;
  constexpr std::int64_t kMax = std::int64_t{1} << 30;  // window arithmetic in i32
  for (std::int64_t v : {a.stride_h, a.stride_w, a.pad_h, a.pad_w, a.dil_h, a.dil_w, a.x.shape[2], a.x.shape[3]})
    if (v >= kMax) return false;
  const std::int64_t pixels = a.x.shape[0] * a.out.shape[2] * a.out.shape[3];
  const std::int64_t window = a.w.shape[1] * a.w.shape[2] * a.w.shape[3];  // each output's reduction length
  return a.groups <= max_groups && (pixels + kTile - 1) / kTile <= max_groups && loops_fit(d, window) &&
         (a.w.shape[0] / a.groups + kTile - 1) / kTile <= max_groups && pixels < (std::int64_t{1} << 31) &&
         fits(d, {&a.x, &a.w, &a.bias, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Conv2d, entry<rt::OpKind::Conv2d, conv2d>>(
      gpu::kElemDTypes, conv2d_fits,
      "64-pixel and 64-channel tiles within the grid, C / groups x R x S within "
      "the device's loop limit");
});

}  // namespace
}  // namespace torsh::webgpu
