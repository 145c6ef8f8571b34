// conv2d: conv2d.kern.h's implicit GEMM, conv2d_elems (f32, f16, bf16 storage
// with f32 accumulation) or conv2d_f64 (devices with cl_khr_fp64). Work-groups
// of CV_WG x CV_WG over (output-pixel tiles, output-channel tiles, groups); the
// im2col matrix is gathered tile by tile into local memory, never stored.
// Groups of few output channels (depthwise) take conv2d_direct_*, one
// work-item per output element.
// Every ConvAlgo runs as that direct sum: Winograd is a CPU speed-up whose
// results the direct sum matches within its tolerance.
#include "backends/gpu/conv_meta.hpp"
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void conv2d(OpenClStream& s, const rt::Conv2dArgs& a) {
  if (a.out.numel() == 0) return;
  OpenClDevice& dev = s.device();
  const Conv2dMeta m = gpu::conv2d_meta(a);
  const bool f64 = a.x.dtype == DType::F64;
  // An absent bias is never read: x stands in for its buffer.
  const cl_mem x = mem_of(*a.x.buffer), w = mem_of(*a.w.buffer), out = mem_of(*a.out.buffer);
  const cl_mem bias = a.bias.present() ? mem_of(*a.bias.buffer) : x;
  if (gpu::conv2d_direct(m)) {
    const Kernel k = dev.kernel(f64 ? "conv2d_direct_f64" : "conv2d_direct_elems");
    const auto [global, local] = grid_1d(dev, k, a.out.numel());
    launch(s, k, global, local, x, w, bias, out, m);
    return;
  }
  const auto size = [](std::int64_t tiles) { return static_cast<std::size_t>(tiles) * CV_WG; };
  launch(s, dev.kernel(f64 ? "conv2d_f64" : "conv2d_elems"),
         range(size(gpu::conv2d_row_tiles(m)), size(gpu::conv2d_col_tiles(m)), static_cast<std::size_t>(m.groups)),
         range(CV_WG, CV_WG, 1), x, w, bias, out, m);
}

// The tiled kernel needs CV_WG x CV_WG work-groups (OpenCL promises only one item).
static_assert(CV_WG * CV_WG == 256, "the registration below names the work-group size");
bool conv2d_fits(const rt::DeviceImpl& d, const rt::Conv2dArgs& a) {
  const std::uint64_t max_group = d.capabilities().max_work_group;
  const bool group_fits = max_group == 0 || max_group >= CV_WG * CV_WG || gpu::conv2d_direct(gpu::conv2d_meta(a));
  return group_fits && (a.x.dtype != DType::F64 || d.capabilities().f64);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Conv2d, entry<rt::OpKind::Conv2d, conv2d>>(
      gpu::kWindowDTypes, conv2d_fits,
      "f64 needs cl_khr_fp64; tiled: 256-item work-groups; every algo runs as the direct sum (no Winograd)");
});

}  // namespace
}  // namespace torsh::opencl
