// (Log-)softmax over the middle axis of contiguous [outer, n, inner] f32:
// softmax.kern.h's softmax_f32_rows, one SM_GROUP work-group per row. The
// kernel takes no element offset, so offset tensors go through ElementView.
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void softmax(OpenClStream& s, const rt::SoftmaxArgs& a) {
  const std::int64_t rows = a.outer * a.inner;
  if (rows == 0 || a.n == 0) return;
  const std::size_t bytes = static_cast<std::size_t>(rows * a.n) * sizeof(float);
  ElementView x(s, a.x, bytes, false), y(s, a.out, bytes, true);
  const Kernel k = s.device().kernel("softmax_f32_rows");
  launch(s, k, range(static_cast<std::size_t>(rows) * SM_GROUP), range(SM_GROUP), x.mem(), y.mem(),
         cl_long{a.n}, cl_long{a.inner}, cl_int{a.log ? 1 : 0});
  y.commit();
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Softmax, entry<rt::OpKind::Softmax, softmax>>(gpu::kF32);
});

}  // namespace
}  // namespace torsh::opencl
