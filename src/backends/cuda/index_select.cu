// index_select: index_select.kern.h's index_select_elems, one thread per
// output element (grid-stride), moving elements by size, so every dtype.
#include "launch.hpp"

#include "backends/gpu/kernels/index_select.kern.h"

namespace torsh::cuda {
namespace {

void index_select(CudaStream& s, const rt::IndexSelectArgs& a) {
  const std::int64_t total = a.out.numel();
  if (total == 0) return;
  const auto [grid, block] = grid_1d(s.device(), total);
  launch(s, TORSH_CUDA_KERNEL(index_select_elems), grid, block, bytes_of(*a.x.buffer), bytes_of(*a.ids.buffer),
         bytes_of(*a.out.buffer), a.x.offset, a.ids.offset, a.out.offset, total, a.n, a.inner, a.m,
         static_cast<int>(dtype_size(a.x.dtype)), a.ids.dtype == DType::I64 ? 1 : 0);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::IndexSelect, entry<rt::OpKind::IndexSelect, index_select>>(gpu::kIndexSelectDTypes);
});

}  // namespace
}  // namespace torsh::cuda
