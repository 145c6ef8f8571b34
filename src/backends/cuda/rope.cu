// Rotary embedding (NeoX and GPT-J) on contiguous [batch, seq, heads, head_dim]:
// rope.kern.h's rope_elems, one thread per output element (grid-stride), f32,
// f16 and bf16 storage with f32 math; the cos/sin tables are f32.
#include "launch.hpp"

#include "kernels/rope.kern.h"

namespace torsh::cuda {
namespace {

void rope(CudaStream& s, const rt::RopeArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  const auto [grid, block] = grid_1d(s.device(), n);
  launch(s, TORSH_CUDA_KERNEL(rope_elems), grid, block, bytes_of(*a.x.buffer),
         static_cast<const float*>(ptr_of(*a.cos.buffer)), static_cast<const float*>(ptr_of(*a.sin.buffer)),
         bytes_of(*a.out.buffer), n, a.x.shape[1], a.x.shape[2], a.x.shape[3], a.rot_dim, a.pos0, a.x.offset,
         a.cos.offset, a.sin.offset, a.out.offset, a.neox ? 1 : 0, gpu::elem_code(a.x.dtype));
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Rope, entry<rt::OpKind::Rope, rope>>(gpu::kElemDTypes);
});

}  // namespace
}  // namespace torsh::cuda
