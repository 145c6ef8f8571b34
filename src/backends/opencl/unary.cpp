// Elementwise unary ops: unary.kern.h's unary_strided over any strides (dense
// views merge into one dimension), f32, f16 and bf16 storage with f32 math and
// the integers (neg, abs, relu); unary_f64_strided for f64 (devices with
// cl_khr_fp64 only).
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void unary(OpenClStream& s, const rt::UnaryArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const StridedMeta m = gpu::strided_meta(a.out.shape, {&a.x, &a.out});
  const cl_mem x = mem_of(*a.x.buffer), out = mem_of(*a.out.buffer);
  const cl_int op{gpu::unary_code(a.op)};
  const bool f64 = a.out.dtype == DType::F64;
  const Kernel k = dev.kernel(f64 ? "unary_f64_strided" : "unary_strided");
  const auto [global, local] = grid_1d(dev, k, n);
  if (f64) launch(s, k, global, local, x, out, m, op);
  else launch(s, k, global, local, x, out, m, op, cl_int{gpu::elem_code(a.out.dtype)});
}

bool unary_fits(const rt::DeviceImpl& d, const rt::UnaryArgs& a) {
  return gpu::unary_fits(a) && (a.out.dtype != DType::F64 || d.capabilities().f64);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Unary, entry<rt::OpKind::Unary, unary>>(gpu::kUnaryDTypes, unary_fits,
                                                            "integers: neg, abs, relu only; f64 needs cl_khr_fp64");
});

}  // namespace
}  // namespace torsh::opencl
