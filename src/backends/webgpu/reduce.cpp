// Reductions over the middle axis of [outer, n, inner]: reduce.wgsl's
// reduce_rows, one work-group per output element. Floats take every op;
// integers (i64 as word pairs) sum, max, min and argmax.
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void reduce(WebGpuDevice& dev, const rt::ReduceArgs& a) {
  const std::int64_t rows = a.outer * a.inner;
  if (rows == 0) return;
  Launch l(dev);
  l.tensor(a.x).tensor(a.out);
  l.param(static_cast<int>(a.op)).param(a.n).param(a.inner).param(a.correction).param(gpu::elem_code(a.x.dtype));
  l.param(l.offset(0)).param(l.offset(1)).run_rows("reduce", "reduce_rows", rows);
}

bool reduce_fits(const rt::DeviceImpl& d, const rt::ReduceArgs& a) {
  const bool integer_op = a.op == rt::ReduceOp::Sum || a.op == rt::ReduceOp::Max || a.op == rt::ReduceOp::Min ||
                          a.op == rt::ReduceOp::Argmax;
  // Each thread strides over the reduced axis (twice for var), then the tree.
  const std::int64_t passes = a.op == rt::ReduceOp::Var ? 2 : 1;
  return (is_floating(a.x.dtype) || integer_op) && a.correction > -(std::int64_t{1} << 31) &&
         a.correction < (std::int64_t{1} << 31) && loops_fit(d, passes * strided(a.n, 128) + 16) &&
         fits(d, {&a.x, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Reduce, entry<rt::OpKind::Reduce, reduce>>(
      rt::DTypes{DType::F32, DType::F16, DType::BF16, DType::I8, DType::U8, DType::I32, DType::I64}, reduce_fits,
      "integers: sum, max, min, argmax; loops within the device's budget");
});

}  // namespace
}  // namespace torsh::webgpu
