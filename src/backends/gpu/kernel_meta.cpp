#include "kernel_meta.hpp"

#include <algorithm>
#include <string>

#include "torsh/core/error.hpp"

namespace torsh::gpu {

namespace {
// Merges the dimensions of `shape` as strided_meta() does and reports the
// count; fills m when given.
int merge_dims(const Shape& shape, std::initializer_list<const rt::TensorArg*> tensors, StridedMeta* m) {
  StridedMeta scratch{};
  StridedMeta& out = m ? *m : scratch;
  int nd = 0;
  for (std::size_t d = 0; d < shape.ndim(); ++d) {
    if (shape[d] == 1) continue;
    if (nd > 0) {
      bool merge = true;
      std::size_t k = 0;
      for (const auto* t : tensors) merge = merge && out.st[k++][nd - 1] == t->strides[d] * shape[d];
      if (merge) {
        out.dims[nd - 1] *= shape[d];
        k = 0;
        for (const auto* t : tensors) out.st[k++][nd - 1] = t->strides[d];
        continue;
      }
    }
    if (nd == TORSH_MAX_DIMS) return nd + 1;
    out.dims[nd] = shape[d];
    std::size_t k = 0;
    for (const auto* t : tensors) out.st[k++][nd] = t->strides[d];
    ++nd;
  }
  return nd;
}
}  // namespace

bool strided_fits(const Shape& shape, std::initializer_list<const rt::TensorArg*> tensors) {
  // Up to TORSH_MAX_DIMS dimensions always fit; only longer shapes need the merge.
  return shape.ndim() <= TORSH_MAX_DIMS || merge_dims(shape, tensors, nullptr) <= TORSH_MAX_DIMS;
}

StridedMeta strided_meta(const Shape& shape, std::initializer_list<const rt::TensorArg*> tensors) {
  StridedMeta m{};
  int nd = merge_dims(shape, tensors, &m);
  if (nd > TORSH_MAX_DIMS)
    throw Error(ErrorCode::Internal, "a strided kernel was handed a view of " + shape.to_string() +
                                         " that does not fit its metadata (strided_fits() was not asked)");
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
