// Sum, mean, max, min, argmax and var over the middle axis of contiguous
// [outer, n, inner]: reduce.kern.h's reduce_elem (f32, f16, bf16 with f32
// accumulation), reduce_int (the integers, 64-bit accumulation) and reduce_f64
// (devices with cl_khr_fp64 only). inner == 1 gives one work-group per output
// row; wider inner puts neighbouring columns on neighbouring work-items.
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void reduce(OpenClStream& s, const rt::ReduceArgs& a) {
  if (a.outer == 0 || a.inner == 0) return;
  const gpu::TileGrid g = gpu::reduce_grid(a);
  const auto cols = static_cast<std::size_t>(g.cols), split = static_cast<std::size_t>(g.split);
  launch(s, s.device().kernel(gpu::reduce_kernel(a.x.dtype)),
         range(static_cast<std::size_t>(g.groups) * cols, split, 1), range(cols, split, 1), mem_of(*a.x.buffer),
         mem_of(*a.out.buffer), cl_long{a.n}, cl_long{a.inner}, cl_long{g.tiles}, cl_long{a.x.offset},
         cl_long{a.out.offset}, cl_long{a.correction}, cl_int{gpu::reduce_code(a.op)},
         cl_int{gpu::elem_code(a.x.dtype)});
}

bool reduce_fits(const rt::DeviceImpl& d, const rt::ReduceArgs& a) {
  return gpu::reduce_fits(a) && (a.x.dtype != DType::F64 || d.capabilities().f64);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Reduce, entry<rt::OpKind::Reduce, reduce>>(
      gpu::kReduceDTypes, reduce_fits,
      "max/min/argmax need n >= 1, integer var needs n > correction; f64 needs cl_khr_fp64");
});

}  // namespace
}  // namespace torsh::opencl
