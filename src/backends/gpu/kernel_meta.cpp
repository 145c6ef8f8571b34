#include "kernel_meta.hpp"

#include <algorithm>

#include "torsh/core/error.hpp"

namespace torsh::gpu {

StridedMeta strided_meta(const Shape& shape, std::initializer_list<const rt::TensorArg*> tensors) {
  StridedMeta m{};
  int nd = 0;
  for (std::size_t d = 0; d < shape.ndim(); ++d) {
    if (shape[d] == 1) continue;
    if (nd > 0) {
      bool merge = true;
      std::size_t k = 0;
      for (const auto* t : tensors) merge = merge && m.st[k++][nd - 1] == t->strides[d] * shape[d];
      if (merge) {
        m.dims[nd - 1] *= shape[d];
        k = 0;
        for (const auto* t : tensors) m.st[k++][nd - 1] = t->strides[d];
        continue;
      }
    }
    m.dims[nd] = shape[d];
    std::size_t k = 0;
    for (const auto* t : tensors) m.st[k++][nd] = t->strides[d];
    ++nd;
  }
  if (nd == 0) {
    m.dims[0] = 1;
    for (std::size_t k = 0; k < tensors.size(); ++k) m.st[k][0] = 1;
    nd = 1;
  }
  m.nd = nd;
  m.numel = shape.numel();
  std::size_t k = 0;
  for (const auto* t : tensors) m.off[k++] = t->offset;
  return m;
}

MatmulMeta matmul_meta(const rt::MatmulArgs& a) {
  MatmulMeta g{};
  g.m = a.out.shape[1];
  g.n = a.out.shape[2];
  g.k = a.a.shape[2];
  for (int i = 0; i < 3; ++i) {
    g.sa[i] = a.a.strides[i];
    g.sb[i] = a.b.strides[i];
    g.so[i] = a.out.strides[i];
  }
  g.oa = a.a.offset;
  g.ob = a.b.offset;
  g.oo = a.out.offset;
  g.alpha = a.alpha;
  g.beta = a.beta;
  g.dt = a.out.dtype == DType::F16    ? ELEM_F16
         : a.out.dtype == DType::BF16 ? ELEM_BF16
         : a.out.dtype == DType::F64  ? ELEM_F64
                                      : ELEM_F32;
  return g;
}

int binary_code(rt::BinaryOp op) {
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

std::int64_t grid_groups(std::int64_t n, std::int64_t group, int compute_units) {
  return std::clamp<std::int64_t>((std::max<std::int64_t>(n, 1) + group - 1) / group, 1, max_groups(compute_units));
}

}  // namespace torsh::gpu
