// Rotary embedding (NeoX and GPT-J) on contiguous [batch, seq, heads, head_dim]:
// rope.kern.h's rope_elems, one work-item per output element, f32, f16 and
// bf16 storage with f32 math; the cos/sin tables are f32.
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void rope(OpenClStream& s, const rt::RopeArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const Kernel k = dev.kernel("rope_elems");
  const auto [global, local] = grid_1d(dev, k, n);
  launch(s, k, global, local, mem_of(*a.x.buffer), mem_of(*a.cos.buffer), mem_of(*a.sin.buffer),
         mem_of(*a.out.buffer), cl_long{n}, cl_long{a.x.shape[1]}, cl_long{a.x.shape[2]}, cl_long{a.x.shape[3]},
         cl_long{a.rot_dim}, cl_long{a.pos0}, cl_long{a.x.offset}, cl_long{a.cos.offset}, cl_long{a.sin.offset},
         cl_long{a.out.offset}, cl_int{a.neox ? 1 : 0}, cl_int{gpu::elem_code(a.x.dtype)});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Rope, entry<rt::OpKind::Rope, rope>>(gpu::kElemDTypes);
});

}  // namespace
}  // namespace torsh::opencl
