// (Log-)softmax over the middle axis of contiguous [outer, n, inner]:
// softmax.kern.h's softmax_elem (f32, f16 and bf16 storage, f32 math) and
// softmax_f64. inner == 1 gives one block per row; wider inner puts
// neighbouring columns on neighbouring threads.
#include "launch.hpp"

#include <climits>

#include "backends/gpu/kernels/softmax.kern.h"

namespace torsh::cuda {
namespace {

// One block per column tile in gridDim.x: up to 2^31 - 1; more run on the CPU.
bool fits_grid(const rt::DeviceImpl&, const rt::SoftmaxArgs& a) { return gpu::softmax_grid(a).groups <= INT_MAX; }

void softmax(CudaStream& s, const rt::SoftmaxArgs& a) {
  if (a.outer == 0 || a.inner == 0 || a.n == 0) return;
  const gpu::TileGrid g = gpu::softmax_grid(a);
  const dim3 grid(static_cast<unsigned>(g.groups)),
      block(static_cast<unsigned>(g.cols), static_cast<unsigned>(g.split));
  const auto k = a.x.dtype == DType::F64 ? TORSH_CUDA_KERNEL(softmax_f64) : TORSH_CUDA_KERNEL(softmax_elem);
  launch(s, k, grid, block, bytes_of(*a.x.buffer), bytes_of(*a.out.buffer), a.n, a.inner, g.tiles, a.x.offset,
         a.out.offset, a.log ? 1 : 0, gpu::elem_code(a.x.dtype));
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Softmax, entry<rt::OpKind::Softmax, softmax>>(rt::DTypes::floating(), fits_grid,
                                                                  "fewer than 2^31 blocks");
});

}  // namespace
}  // namespace torsh::cuda
