// conv2d. With cuDNN (CUDA builds where CMake found it, and loadable at run
// time: cudnn_conv.cpp) cuDNN runs it with a direct-sum or Winograd
// algorithm (direct only when ConvAlgo::Gemm is asked for). Otherwise, and for whatever cuDNN declines, HIP
// included: conv2d.kern.h's implicit GEMM, conv2d_elems (f32, f16, bf16 storage
// with f32 accumulation) or conv2d_f64. Blocks of CV_WG x CV_WG over
// (output-pixel tiles, output-channel tiles, groups); the im2col matrix is
// gathered tile by tile into shared memory, never stored. Groups of few
// output channels (depthwise) take conv2d_direct_*, one thread per output
// element. The shared kernels run every ConvAlgo as the direct sum: Winograd
// is a CPU speed-up whose results the direct sum matches within its tolerance.
#include "launch.hpp"

#include <climits>

#include "backends/gpu/conv_meta.hpp"
#include "backends/gpu/kernels/conv2d.kern.h"
#include "cudnn_conv.hpp"

namespace torsh::cuda {
namespace {

// The tiled kernel puts pixel tiles in gridDim.x (up to 2^31 - 1), channel
// tiles and groups in gridDim.y and gridDim.z (up to 65535 each); larger
// convolutions run on the CPU, with or without cuDNN (the shared kernels must
// be able to take whatever cuDNN declines). The direct kernel has no limit.
bool fits_grid(const rt::DeviceImpl&, const rt::Conv2dArgs& a) {
  const Conv2dMeta m = gpu::conv2d_meta(a);
  return gpu::conv2d_direct(m) ||
         (gpu::conv2d_row_tiles(m) <= INT_MAX && gpu::conv2d_col_tiles(m) <= 65535 && m.groups <= 65535);
}

void conv2d(CudaStream& s, const rt::Conv2dArgs& a) {
  if (a.out.numel() == 0) return;
  if (cudnn_conv2d(s, a)) return;
  const Conv2dMeta m = gpu::conv2d_meta(a);
  const bool f64 = a.x.dtype == DType::F64;
  // An absent bias is never read: x stands in for its pointer.
  unsigned char* x = bytes_of(*a.x.buffer);
  unsigned char *w = bytes_of(*a.w.buffer), *out = bytes_of(*a.out.buffer);
  unsigned char* bias = a.bias.present() ? bytes_of(*a.bias.buffer) : x;
  if (gpu::conv2d_direct(m)) {
    const auto [grid, block] = grid_1d(s.device(), a.out.numel());
    if (f64)
      launch(s, TORSH_CUDA_KERNEL(conv2d_direct_f64), grid, block, x, w, bias, out, m);
    else
      launch(s, TORSH_CUDA_KERNEL(conv2d_direct_elems), grid, block, x, w, bias, out, m);
    return;
  }
  const dim3 grid(static_cast<unsigned>(gpu::conv2d_row_tiles(m)), static_cast<unsigned>(gpu::conv2d_col_tiles(m)),
                  static_cast<unsigned>(m.groups));
  const dim3 block(CV_WG, CV_WG);
  if (f64)
    launch(s, TORSH_CUDA_KERNEL(conv2d_f64), grid, block, x, w, bias, out, m);
  else
    launch(s, TORSH_CUDA_KERNEL(conv2d_elems), grid, block, x, w, bias, out, m);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Conv2d, entry<rt::OpKind::Conv2d, conv2d>>(
      gpu::kWindowDTypes, fits_grid,
      "tiled: fewer than 2^31 pixel tiles, 65536 channel tiles and groups; cuDNN where built in and loadable (never "
      "FFT; Winograd only when asked for), else the shared kernels, which run every algo as the direct sum");
});

}  // namespace
}  // namespace torsh::cuda
