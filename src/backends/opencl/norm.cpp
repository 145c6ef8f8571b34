// LayerNorm / RMSNorm over contiguous rows: norm.kern.h's norm_rows, one
// NM_GROUP work-group per row, f32, f16 and bf16 storage with f32 math.
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void norm(OpenClStream& s, const rt::NormArgs& a) {
  if (a.rows == 0 || a.n == 0) return;
  // An absent weight or bias is never read: x stands in for its buffer.
  const cl_mem x = mem_of(*a.x.buffer);
  const cl_mem w = a.weight.present() ? mem_of(*a.weight.buffer) : x;
  const cl_mem b = a.bias.present() ? mem_of(*a.bias.buffer) : x;
  launch(s, s.device().kernel("norm_rows"), range(static_cast<std::size_t>(a.rows) * NM_GROUP), range(NM_GROUP), x, w,
         b, mem_of(*a.out.buffer), cl_long{a.n}, cl_long{a.x.offset}, cl_long{a.weight.offset}, cl_long{a.bias.offset},
         cl_long{a.out.offset}, cl_float{a.eps}, cl_int{a.rms ? 1 : 0}, cl_int{a.weight.present() ? 1 : 0},
         cl_int{a.bias.present() ? 1 : 0}, cl_int{gpu::elem_code(a.x.dtype)});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Norm, entry<rt::OpKind::Norm, norm>>(gpu::kElemDTypes);
});

}  // namespace
}  // namespace torsh::opencl
