// Elementwise f32 binary ops: binary.kern.h's binary_f32_contig when all three
// tensors are dense (at any offset: a pointer can start anywhere),
// binary_f32_strided for everything else (broadcast stride-0 operands, transposes).
#include "launch.hpp"

#include "kernels/binary.kern.h"

namespace torsh::cuda {

namespace {
int code_of(rt::BinaryOp op) {
  switch (op) {
    case rt::BinaryOp::Add: return BINARY_ADD;
    case rt::BinaryOp::Sub: return BINARY_SUB;
    case rt::BinaryOp::Mul: return BINARY_MUL;
    case rt::BinaryOp::Div: return BINARY_DIV;
    case rt::BinaryOp::Maximum: return BINARY_MAX;
    case rt::BinaryOp::Minimum: return BINARY_MIN;
    case rt::BinaryOp::Pow: return BINARY_POW;
  }
  throw Error(ErrorCode::InvalidArgument, "unknown binary op", {.op = "binary"});
}
}  // namespace

void binary(CudaStream& s, const rt::BinaryArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  const StridedMeta m = make_strided_meta(a.out.shape, {&a.a, &a.b, &a.out});
  const bool dense = m.nd == 1 && m.st[0][0] == 1 && m.st[1][0] == 1 && m.st[2][0] == 1;
  const auto [grid, block] = grid_1d(s.device(), n);
  if (dense) {
    launch(s, TORSH_CUDA_KERNEL(binary_f32_contig), grid, block, f32_at(a.a), f32_at(a.b), f32_at(a.out), n,
           code_of(a.op));
  } else {
    const auto base = [](const rt::TensorArg& t) { return static_cast<float*>(ptr_of(*t.buffer)); };
    launch(s, TORSH_CUDA_KERNEL(binary_f32_strided), grid, block, base(a.a), base(a.b), base(a.out), m,
           code_of(a.op));
  }
}

}  // namespace torsh::cuda
