// Rotary embedding (NeoX and GPT-J) on contiguous [batch, seq, heads, head_dim]:
// rope.kern.h's rope_elems (f32, f16 and bf16 storage with f32 math) and
// rope_f64_elems, one thread per output element (grid-stride); the cos/sin
// tables are f32.
#include "launch.hpp"

#include "backends/gpu/kernels/rope.kern.h"

namespace torsh::cuda {
namespace {

void rope(CudaStream& s, const rt::RopeArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  const auto [grid, block] = grid_1d(s.device(), n);
  const auto* cs = static_cast<const float*>(ptr_of(*a.cos.buffer));
  const auto* sn = static_cast<const float*>(ptr_of(*a.sin.buffer));
  const int neox = a.neox ? 1 : 0;
  if (a.x.dtype == DType::F64) {
    launch(s, TORSH_CUDA_KERNEL(rope_f64_elems), grid, block, static_cast<const double*>(ptr_of(*a.x.buffer)), cs, sn,
           static_cast<double*>(ptr_of(*a.out.buffer)), n, a.x.shape[1], a.x.shape[2], a.x.shape[3], a.rot_dim, a.pos0,
           a.x.offset, a.cos.offset, a.sin.offset, a.out.offset, neox);
    return;
  }
  launch(s, TORSH_CUDA_KERNEL(rope_elems), grid, block, bytes_of(*a.x.buffer), cs, sn, bytes_of(*a.out.buffer), n,
         a.x.shape[1], a.x.shape[2], a.x.shape[3], a.rot_dim, a.pos0, a.x.offset, a.cos.offset, a.sin.offset,
         a.out.offset, neox, gpu::elem_code(a.x.dtype));
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Rope, entry<rt::OpKind::Rope, rope>>(rt::DTypes::floating());
});

}  // namespace
}  // namespace torsh::cuda
