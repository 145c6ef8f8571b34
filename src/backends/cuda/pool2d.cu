// Max and average pooling: pool2d.kern.h's pool2d_elems (f32, f16, bf16 with
// f32 math) or pool2d_f64, one thread per output element over a grid-stride loop.
#include "launch.hpp"

#include "backends/gpu/conv_meta.hpp"
#include "backends/gpu/kernels/pool2d.kern.h"

namespace torsh::cuda {
namespace {

void pool2d(CudaStream& s, const rt::Pool2dArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  const auto [grid, block] = grid_1d(s.device(), n);
  const Pool2dMeta m = gpu::pool2d_meta(a);
  if (a.x.dtype == DType::F64)
    launch(s, TORSH_CUDA_KERNEL(pool2d_f64), grid, block, bytes_of(*a.x.buffer), bytes_of(*a.out.buffer), m);
  else
    launch(s, TORSH_CUDA_KERNEL(pool2d_elems), grid, block, bytes_of(*a.x.buffer), bytes_of(*a.out.buffer), m);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Pool2d, entry<rt::OpKind::Pool2d, pool2d>>(gpu::kWindowDTypes);
});

}  // namespace
}  // namespace torsh::cuda
