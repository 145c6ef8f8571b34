// (Log-)softmax over the middle axis of contiguous [outer, n, inner] f32:
// softmax.kern.h's softmax_f32_rows, one SM_GROUP block per row. The kernel
// takes no element offset; on CUDA the pointer simply starts at the first element.
#include "launch.hpp"

#include <algorithm>
#include <climits>

#include "kernels/softmax.kern.h"

namespace torsh::cuda {
namespace {

// gridDim.x stops at 2^31 - 1 rows: whole `outer` slices are launched at a time,
// so one slice of `inner` rows must fit; wider ones run on the CPU.
bool fits_grid(const rt::DeviceImpl&, const rt::SoftmaxArgs& a) { return a.inner <= INT_MAX; }

void softmax(CudaStream& s, const rt::SoftmaxArgs& a) {
  const std::int64_t rows = a.outer * a.inner;
  if (rows == 0 || a.n == 0) return;
  const std::int64_t outer_per_launch = INT_MAX / a.inner;
  const float* x = f32_at(a.x);
  float* y = f32_at(a.out);
  for (std::int64_t o0 = 0; o0 < a.outer; o0 += outer_per_launch) {
    const std::int64_t slice_rows = std::min(outer_per_launch, a.outer - o0) * a.inner;
    const std::int64_t first = o0 * a.n * a.inner;
    launch(s, TORSH_CUDA_KERNEL(softmax_f32_rows), dim3(static_cast<unsigned>(slice_rows)), dim3(SM_GROUP),
           x + first, y + first, a.n, a.inner, a.log ? 1 : 0);
  }
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Softmax, entry<rt::OpKind::Softmax, softmax>>(gpu::kF32, fits_grid,
                             "fewer than 2^31 columns after the reduced axis");
});

}  // namespace
}  // namespace torsh::cuda
