// Elementwise f32 binary ops: binary.kern.h's binary_f32_contig when all three
// tensors are dense from element 0, binary_f32_strided for everything else
// (broadcast stride-0 operands, transposes, offsets).
#include "launch.hpp"

namespace torsh::opencl {

namespace {
cl_int code_of(rt::BinaryOp op) {
  switch (op) {
    case rt::BinaryOp::Add: return kAdd;
    case rt::BinaryOp::Sub: return kSub;
    case rt::BinaryOp::Mul: return kMul;
    case rt::BinaryOp::Div: return kDiv;
    case rt::BinaryOp::Maximum: return kMax;
    case rt::BinaryOp::Minimum: return kMin;
    case rt::BinaryOp::Pow: return kPow;
  }
  throw Error(ErrorCode::InvalidArgument, "unknown binary op", {.op = "binary"});
}
}  // namespace

void binary(OpenClStream& s, const rt::BinaryArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const StridedMeta m = make_strided_meta(a.out.shape, {&a.a, &a.b, &a.out});
  const bool dense = m.nd == 1 && m.st[0][0] == 1 && m.st[1][0] == 1 && m.st[2][0] == 1;
  const bool at_zero = a.a.offset == 0 && a.b.offset == 0 && a.out.offset == 0;
  const cl_mem x = mem_of(*a.a.buffer), y = mem_of(*a.b.buffer), z = mem_of(*a.out.buffer);
  if (dense && at_zero) {
    const Kernel k = dev.kernel("binary_f32_contig");
    const auto [global, local] = grid_1d(dev, k, n);
    launch(s, k, global, local, x, y, z, cl_long{n}, code_of(a.op));
  } else {
    const Kernel k = dev.kernel("binary_f32_strided");
    const auto [global, local] = grid_1d(dev, k, n);
    launch(s, k, global, local, x, y, z, m, code_of(a.op));
  }
}

}  // namespace torsh::opencl
