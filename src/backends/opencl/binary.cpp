// Elementwise binary ops. f32: when all three tensors are dense (at any
// element offset), binary_f32_items_<op> on CPU devices for + - * / (one item
// per element, which PoCL vectorizes) and binary_f32_contig otherwise;
// binary_f32_strided for everything else (broadcast stride-0 operands, transposes). f16, bf16 and the
// integers: binary_strided; f64: binary_f64_strided (devices with cl_khr_fp64
// only; the others leave f64 to the CPU).
#include "launch.hpp"

namespace torsh::opencl {

namespace {

// binary_f32_items_* of the four arithmetic ops, or null.
const char* items_kernel(rt::BinaryOp op) {
  switch (op) {
    case rt::BinaryOp::Add: return "binary_f32_items_add";
    case rt::BinaryOp::Sub: return "binary_f32_items_sub";
    case rt::BinaryOp::Mul: return "binary_f32_items_mul";
    case rt::BinaryOp::Div: return "binary_f32_items_div";
    default: return nullptr;
  }
}

void binary(OpenClStream& s, const rt::BinaryArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const StridedMeta m = gpu::strided_meta(a.out.shape, {&a.a, &a.b, &a.out});
  const cl_mem x = mem_of(*a.a.buffer), y = mem_of(*a.b.buffer), z = mem_of(*a.out.buffer);
  const cl_int op{gpu::binary_code(a.op)};
  if (a.out.dtype != DType::F32) {
    const bool f64 = a.out.dtype == DType::F64;
    const Kernel k = dev.kernel(f64 ? "binary_f64_strided" : "binary_strided");
    const auto [global, local] = grid_1d(dev, k, n);
    if (f64)
      launch(s, k, global, local, x, y, z, m, op);
    else
      launch(s, k, global, local, x, y, z, m, op, cl_int{gpu::elem_code(a.out.dtype)});
    return;
  }
  const char* items = items_kernel(a.op);
  if (gpu::dense(m, 3) && items && dev.info().kind == DeviceKind::Cpu) {
    // One item per element: what a CPU device vectorizes (src/backends/gpu/README.md, opencl items kernels).
    const Kernel k = dev.kernel(items);
    const std::int64_t local = 256;
    launch(s, k, range(static_cast<std::size_t>(gpu::round_up(n, local))), range(static_cast<std::size_t>(local)), x, y,
           z, cl_long{a.a.offset}, cl_long{a.b.offset}, cl_long{a.out.offset}, cl_long{n});
  } else if (gpu::dense(m, 3)) {
    const Kernel k = dev.kernel("binary_f32_contig");
    const auto [global, local] = grid_1d(dev, k, n);
    launch(s, k, global, local, x, y, z, cl_long{a.a.offset}, cl_long{a.b.offset}, cl_long{a.out.offset}, cl_long{n},
           op);
  } else {
    const Kernel k = dev.kernel("binary_f32_strided");
    const auto [global, local] = grid_1d(dev, k, n);
    launch(s, k, global, local, x, y, z, m, op);
  }
}

bool binary_fits(const rt::DeviceImpl& d, const rt::BinaryArgs& a) {
  return gpu::binary_fits(a) && (a.out.dtype != DType::F64 || d.capabilities().f64);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Binary, entry<rt::OpKind::Binary, binary>>(gpu::kBinaryDTypes, binary_fits,
                                                               "no integer div; f64 needs cl_khr_fp64");
});

}  // namespace
}  // namespace torsh::opencl
