// index_select: index_select.kern.h's index_select_elems, one work-item per
// output element, moving elements by size, so every dtype (f64 too, with no
// cl_khr_fp64: nothing is computed on it).
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void index_select(OpenClStream& s, const rt::IndexSelectArgs& a) {
  const std::int64_t total = a.out.numel();
  if (total == 0) return;
  OpenClDevice& dev = s.device();
  const Kernel k = dev.kernel("index_select_elems");
  const auto [global, local] = grid_1d(dev, k, total);
  launch(s, k, global, local, mem_of(*a.x.buffer), mem_of(*a.ids.buffer), mem_of(*a.out.buffer), cl_long{a.x.offset},
         cl_long{a.ids.offset}, cl_long{a.out.offset}, cl_long{total}, cl_long{a.n}, cl_long{a.inner}, cl_long{a.m},
         cl_int{static_cast<int>(dtype_size(a.x.dtype))}, cl_int{a.ids.dtype == DType::I64 ? 1 : 0});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::IndexSelect, entry<rt::OpKind::IndexSelect, index_select>>(gpu::kIndexSelectDTypes);
});

}  // namespace
}  // namespace torsh::opencl
