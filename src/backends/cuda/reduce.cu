// Sum, mean, max, min, argmax and var over the middle axis of contiguous
// [outer, n, inner]: reduce.kern.h's reduce_elem (f32, f16, bf16 with f32
// accumulation), reduce_int (the integers, 64-bit accumulation) and
// reduce_f64. inner == 1 gives one block per output row; wider inner puts
// neighbouring columns on neighbouring threads.
#include "launch.hpp"

#include <climits>

#include "backends/gpu/kernels/reduce.kern.h"

namespace torsh::cuda {
namespace {

// One block per column tile in gridDim.x: up to 2^31 - 1; more run on the CPU.
bool reduce_fits(const rt::DeviceImpl&, const rt::ReduceArgs& a) {
  return gpu::reduce_fits(a) && gpu::reduce_grid(a).groups <= INT_MAX;
}

void reduce(CudaStream& s, const rt::ReduceArgs& a) {
  if (a.outer == 0 || a.inner == 0) return;
  const gpu::TileGrid g = gpu::reduce_grid(a);
  const dim3 grid(static_cast<unsigned>(g.groups)),
      block(static_cast<unsigned>(g.cols), static_cast<unsigned>(g.split));
  unsigned char* x = bytes_of(*a.x.buffer);
  unsigned char* out = bytes_of(*a.out.buffer);
  const auto k = a.x.dtype == DType::F64  ? TORSH_CUDA_KERNEL(reduce_f64)
                 : is_integral(a.x.dtype) ? TORSH_CUDA_KERNEL(reduce_int)
                                          : TORSH_CUDA_KERNEL(reduce_elem);
  launch(s, k, grid, block, x, out, a.n, a.inner, g.tiles, a.x.offset, a.out.offset, a.correction,
         gpu::reduce_code(a.op), gpu::elem_code(a.x.dtype));
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Reduce, entry<rt::OpKind::Reduce, reduce>>(
      gpu::kReduceDTypes, reduce_fits,
      "max/min/argmax need n >= 1, integer var needs n > correction; fewer than 2^31 blocks");
});

}  // namespace
}  // namespace torsh::cuda
