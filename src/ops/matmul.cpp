#include <algorithm>

#include "dispatch.hpp"

namespace torsh::ops {
namespace {

bool is_float_mm(DType t) { return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16; }

// Views `t` ([..., r, c]) as rank 3 (batch, r, c) after broadcasting its batch dims to `batch`;
// the batch dims must collapse into one stride, else the tensor is copied contiguous first.
Tensor as_rank3(const Tensor& t, const Shape& batch) {
  std::vector<std::int64_t> full = batch.dims();
  full.push_back(t.shape()[t.ndim() - 2]);
  full.push_back(t.shape()[t.ndim() - 1]);
  Tensor b = t.broadcast_to(Shape(full));
  const std::size_t nb = batch.ndim();
  std::int64_t bstride = 0, count = 1;
  bool ok = true;
  // Collapse batch dims: consecutive dims must satisfy stride[i] == stride[i+1] * size[i+1] (or be broadcast together).
  for (std::size_t i = 0; i < nb; ++i) count *= batch[i];
  if (nb > 0) {
    bstride = b.strides()[nb - 1];
    std::int64_t expect = b.strides()[nb - 1] * batch[nb - 1];
    for (std::size_t i = nb - 1; i-- > 0;) {
      if (batch[i] == 1) continue;
      if (b.strides()[i] != expect) {
        ok = false;
        break;
      }
      expect = b.strides()[i] * batch[i];
    }
    if (batch[nb - 1] == 1) {
      // Find the innermost non-trivial batch dim for the stride.
      bstride = 0;
      for (std::size_t i = nb; i-- > 0;)
        if (batch[i] != 1) {
          bstride = b.strides()[i];
          break;
        }
    }
  }
  if (!ok) return as_rank3(b.contiguous(), batch);
  const Shape s3({count, full[nb], full[nb + 1]});
  return Tensor(b.buffer(), b.dtype(), s3, {bstride, b.strides()[nb], b.strides()[nb + 1]}, b.offset());
}

void run_gemm(const Tensor& a3, const Tensor& b3, Tensor& out3, float alpha, float beta) {
  detail::launch<rt::OpKind::Matmul>("matmul", {a3, b3}, {out3}, [=](auto& in, auto& o) {
    return rt::MatmulArgs{in[0], in[1], o[0], alpha, beta};
  });
}

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  detail::check_same_device("matmul", {a_in, b_in});
  detail::check_same_dtype("matmul", {a_in, b_in});
  if (!is_float_mm(a_in.dtype()))
    throw Error(ErrorCode::DTypeMismatch, "matmul needs f32, f64, f16 or bf16 operands",
                detail::context("matmul", {a_in, b_in}), {"Cast the operands to f32"});
  if (a_in.ndim() == 0 || b_in.ndim() == 0)
    throw Error(ErrorCode::ShapeMismatch, "matmul of a 0-d tensor", detail::context("matmul", {a_in, b_in}),
                {"Use mul for scalars"});
  // NumPy rules for 1-D operands: prepend / append a unit dim, drop it afterwards.
  const bool a_vec = a_in.ndim() == 1, b_vec = b_in.ndim() == 1;
  const Tensor a = a_vec ? a_in.unsqueeze(0) : a_in;
  const Tensor b = b_vec ? b_in.unsqueeze(1) : b_in;
  const std::int64_t m = a.shape()[a.ndim() - 2], k = a.shape()[a.ndim() - 1];
  const std::int64_t k2 = b.shape()[b.ndim() - 2], n = b.shape()[b.ndim() - 1];
  if (k != k2)
    throw Error(ErrorCode::ShapeMismatch,
                "inner dimensions differ: " + a_in.shape().to_string() + " @ " + b_in.shape().to_string() + " (" +
                    std::to_string(k) + " vs " + std::to_string(k2) + ")",
                detail::context("matmul", {a_in, b_in}), {"a's last dimension must equal b's second-to-last"});
  const Shape ba(std::vector<std::int64_t>(a.shape().dims().begin(), a.shape().dims().end() - 2));
  const Shape bb(std::vector<std::int64_t>(b.shape().dims().begin(), b.shape().dims().end() - 2));
  const Shape batch = broadcast_shapes(ba, bb, "matmul");
  std::vector<std::int64_t> od = batch.dims();
  od.push_back(m);
  od.push_back(n);
  Tensor out = detail::empty_like(a, Shape(od), a.dtype());
  if (out.numel() > 0) {
    Tensor o3 = as_rank3(out, batch);
    run_gemm(as_rank3(a, batch), as_rank3(b, batch), o3, 1.0f, 0.0f);
  }
  std::vector<std::int64_t> fd = batch.dims();
  if (!a_vec) fd.push_back(m);
  if (!b_vec) fd.push_back(n);
  return out.reshape(fd);
}

Tensor gemm(const Tensor& a_in, const Tensor& b_in, float alpha, float beta, const std::optional<Tensor>& c,
            bool trans_a, bool trans_b) {
  std::vector<Tensor> all{a_in, b_in};
  if (c) all.push_back(*c);
  detail::check_same_device("gemm", all);
  detail::check_same_dtype("gemm", all);
  if (!is_float_mm(a_in.dtype()))
    throw Error(ErrorCode::DTypeMismatch, "gemm needs floating operands", detail::context("gemm", all));
  for (const auto& t : {a_in, b_in})
    if (t.ndim() != 2 && t.ndim() != 3)
      throw Error(ErrorCode::ShapeMismatch, "gemm takes 2-D or batched 3-D operands", detail::context("gemm", all),
                  {"Use matmul for other ranks"});
  const Tensor a = trans_a ? a_in.transpose(-1, -2) : a_in;
  const Tensor b = trans_b ? b_in.transpose(-1, -2) : b_in;
  const std::int64_t m = a.shape()[a.ndim() - 2], k = a.shape()[a.ndim() - 1];
  const std::int64_t k2 = b.shape()[b.ndim() - 2], n = b.shape()[b.ndim() - 1];
  if (k != k2)
    throw Error(ErrorCode::ShapeMismatch,
                "inner dimensions differ after transposes: " + std::to_string(k) + " vs " + std::to_string(k2),
                detail::context("gemm", all));
  const Shape batch =
      broadcast_shapes(Shape(std::vector<std::int64_t>(a.shape().dims().begin(), a.shape().dims().end() - 2)),
                       Shape(std::vector<std::int64_t>(b.shape().dims().begin(), b.shape().dims().end() - 2)), "gemm");
  std::vector<std::int64_t> od = batch.dims();
  od.push_back(m);
  od.push_back(n);
  const Shape os(od);
  if (beta != 0.0f && !c)
    throw Error(ErrorCode::InvalidArgument, "beta != 0 needs a c operand", detail::context("gemm", all),
                {"Pass c, or use beta = 0"});
  if (c && broadcast_shapes(c->shape(), os, "gemm") != os)
    throw Error(ErrorCode::ShapeMismatch,
                "c " + c->shape().to_string() + " does not broadcast to the result " + os.to_string(),
                detail::context("gemm", all), {"c must broadcast to [..., m, n]"});
  Tensor out = detail::empty_like(a, os, a.dtype());
  // beta == 0 means c is not read (BLAS semantics), so NaNs in c do not leak through.
  if (c && beta != 0.0f) copy_into(c->broadcast_to(os), out);
  if (out.numel() == 0) return out;
  Tensor o3 = as_rank3(out, batch);
  run_gemm(as_rank3(a, batch), as_rank3(b, batch), o3, alpha, c ? beta : 0.0f);
  return out;
}

// Matrix-vector helpers for decode loops: named shape checks, then matmul.
Tensor matmul_vec(const Tensor& w, const Tensor& x) {
  if (w.ndim() != 2 || x.ndim() != 1)
    throw Error(ErrorCode::ShapeMismatch, "matmul_vec takes w [n, k] and x [k]", detail::context("matmul_vec", {w, x}));
  if (w.shape()[1] != x.shape()[0])
    throw Error(
        ErrorCode::ShapeMismatch,
        "w has " + std::to_string(w.shape()[1]) + " columns but x has " + std::to_string(x.shape()[0]) + " elements",
        detail::context("matmul_vec", {w, x}), {"x must have one element per column of w"});
  return matmul(w, x);
}

Tensor weighted_sum_rows(const Tensor& weights, const Tensor& matrix) {
  if (weights.ndim() != 1 || matrix.ndim() != 2)
    throw Error(ErrorCode::ShapeMismatch, "weighted_sum_rows takes weights [m] and matrix [m, n]",
                detail::context("weighted_sum_rows", {weights, matrix}));
  if (weights.shape()[0] != matrix.shape()[0])
    throw Error(ErrorCode::ShapeMismatch,
                std::to_string(weights.shape()[0]) + " weights for " + std::to_string(matrix.shape()[0]) + " rows",
                detail::context("weighted_sum_rows", {weights, matrix}), {"Give one weight per matrix row"});
  return matmul(weights, matrix);
}

}  // namespace torsh::ops
