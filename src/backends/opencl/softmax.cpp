// (Log-)softmax over the middle axis of contiguous [outer, n, inner]:
// softmax.kern.h's softmax_elem (f32, f16 and bf16 storage, f32 math) and
// softmax_f64 (devices with cl_khr_fp64 only). inner == 1 gives one work-group
// per row; wider inner puts neighbouring columns on neighbouring work-items.
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void softmax(OpenClStream& s, const rt::SoftmaxArgs& a) {
  if (a.outer == 0 || a.inner == 0 || a.n == 0) return;
  const gpu::TileGrid g = gpu::softmax_grid(a);
  const auto cols = static_cast<std::size_t>(g.cols), split = static_cast<std::size_t>(g.split);
  const Kernel k = s.device().kernel(a.x.dtype == DType::F64 ? "softmax_f64" : "softmax_elem");
  launch(s, k, range(static_cast<std::size_t>(g.groups) * cols, split, 1), range(cols, split, 1), mem_of(*a.x.buffer),
         mem_of(*a.out.buffer), cl_long{a.n}, cl_long{a.inner}, cl_long{g.tiles}, cl_long{a.x.offset},
         cl_long{a.out.offset}, cl_int{a.log ? 1 : 0}, cl_int{gpu::elem_code(a.x.dtype)});
}

bool softmax_fits(const rt::DeviceImpl& d, const rt::SoftmaxArgs& a) {
  return a.x.dtype != DType::F64 || d.capabilities().f64;
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Softmax, entry<rt::OpKind::Softmax, softmax>>(rt::DTypes::floating(), softmax_fits,
                                                                  "f64 needs cl_khr_fp64");
});

}  // namespace
}  // namespace torsh::opencl
