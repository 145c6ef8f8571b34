// Elementwise unary ops: dense f32 on CPU devices takes unary_f32_items_<op>
// (one item per element, which PoCL vectorizes); otherwise unary.kern.h's
// unary_strided over any strides (dense views merge into one dimension), f32, f16 and bf16 storage with f32 math and
// the integers (neg, abs, relu); unary_f64_strided for f64 (devices with
// cl_khr_fp64 only).
#include "launch.hpp"

namespace torsh::opencl {
namespace {

// unary_f32_items_<op>: its kernel name.
const char* items_kernel(rt::UnaryOp op) {
  static const char* const names[] = {"unary_f32_items_neg",  "unary_f32_items_abs",       "unary_f32_items_exp",
                                      "unary_f32_items_log",  "unary_f32_items_sqrt",      "unary_f32_items_rsqrt",
                                      "unary_f32_items_tanh", "unary_f32_items_sigmoid",   "unary_f32_items_relu",
                                      "unary_f32_items_gelu", "unary_f32_items_gelu_tanh", "unary_f32_items_silu"};
  return names[gpu::unary_code(op)];
}

void unary(OpenClStream& s, const rt::UnaryArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const StridedMeta m = gpu::strided_meta(a.out.shape, {&a.x, &a.out});
  const cl_mem x = mem_of(*a.x.buffer), out = mem_of(*a.out.buffer);
  const cl_int op{gpu::unary_code(a.op)};
  if (a.out.dtype == DType::F32 && gpu::dense(m, 2) && dev.info().kind == DeviceKind::Cpu) {
    // One item per element: what a CPU device vectorizes (src/backends/gpu/README.md, opencl items kernels).
    const Kernel k = dev.kernel(items_kernel(a.op));
    const std::int64_t local = 256;
    launch(s, k, range(static_cast<std::size_t>(gpu::round_up(n, local))), range(static_cast<std::size_t>(local)), x,
           out, cl_long{a.x.offset}, cl_long{a.out.offset}, cl_long{n});
    return;
  }
  const bool f64 = a.out.dtype == DType::F64;
  const Kernel k = dev.kernel(f64 ? "unary_f64_strided" : "unary_strided");
  const auto [global, local] = grid_1d(dev, k, n);
  if (f64)
    launch(s, k, global, local, x, out, m, op);
  else
    launch(s, k, global, local, x, out, m, op, cl_int{gpu::elem_code(a.out.dtype)});
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
