// int8 matrix products with ONNX's MatMulInteger / QLinearMatMul semantics
// (rt::IntegerMatmulArgs). Everything a kernel cannot check cheaply is checked
// here, before anything is written: dtypes, shapes, the zero points' and
// scales' lengths, and the scales' values (read back: one per row or column).
#include <cmath>
#include <string>
#include <vector>

#include "integer_matmul.hpp"
#include "torsh/backend/prepared_operand.hpp"

namespace torsh::ops {
namespace {

bool int8_dtype(DType t) { return t == DType::U8 || t == DType::I8; }

struct Operands {
  const char* op;
  std::vector<Tensor> all;  // every tensor given, for error contexts
};

ErrorContext ctx(const Operands& o) { return detail::context(o.op, o.all); }

// A zero point or scale: one value, or `per` values (a 1-D tensor) where
// per-row / per-column quantization applies.
void check_length(const Operands& o, const Tensor& t, const char* what, std::int64_t per, const char* per_what) {
  if (t.numel() == 1 && t.ndim() <= 1) return;
  if (t.ndim() == 1 && t.numel() == per) return;
  throw Error(ErrorCode::ShapeMismatch,
              std::string(what) + " has shape " + t.shape().to_string() + ": it must hold one value or " +
                  std::to_string(per) + " (one per " + per_what + ")",
              ctx(o), {"Pass a scalar, a [1] tensor or a 1-D tensor of that length"});
}

void check_zero_point(const Operands& o, const Tensor& zp, const Tensor& of, const char* what, std::int64_t per,
                      const char* per_what) {
  if (zp.dtype() != of.dtype())
    throw Error(ErrorCode::DTypeMismatch,
                std::string(what) + " is " + std::string(dtype_name(zp.dtype())) + " but its operand is " +
                    std::string(dtype_name(of.dtype())),
                ctx(o), {"Give each zero point its operand's dtype (ONNX requires it)"});
  check_length(o, zp, what, per, per_what);
}

// A scale of 0, below 0, inf or NaN has no meaning as a quantization step:
// refused with the offending value.
void check_scale(const Operands& o, const Tensor& s, const char* what, std::int64_t per, const char* per_what) {
  if (s.dtype() != DType::F32)
    throw Error(ErrorCode::DTypeMismatch,
                std::string(what) + " is " + std::string(dtype_name(s.dtype())) + "; scales are f32", ctx(o),
                {"Cast the scale with .cast(DType::F32)"});
  check_length(o, s, what, per, per_what);
  const std::vector<float> v = s.contiguous().to_host<float>();
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!(std::isfinite(v[i]) && v[i] > 0.0f))
      throw Error(ErrorCode::InvalidArgument,
                  std::string(what) + "[" + std::to_string(i) + "] is " + std::to_string(v[i]) +
                      ": every scale must be finite and > 0",
                  ctx(o), {"Derive scales from a nonzero range, e.g. (max - min) / 255"});
}

}  // namespace

namespace detail {

Tensor integer_matmul(const char* op, const Tensor& a_in, const Tensor& b_in, const IntegerRequant& q, DType out_dtype,
                      const std::shared_ptr<rt::PreparedOperand>& b_prepared) {
  Operands o{op, {a_in, b_in}};
  for (const auto* t : q.slots())
    if (*t) {
      if (!(*t)->defined()) throw Error(ErrorCode::InvalidState, "an operand is undefined", {.op = op});
      o.all.push_back(**t);
    }
  if (!a_in.defined() || !b_in.defined()) throw Error(ErrorCode::InvalidState, "an operand is undefined", {.op = op});
  detail::check_same_device(op, o.all);
  if (!int8_dtype(a_in.dtype()) || !int8_dtype(b_in.dtype()))
    throw Error(ErrorCode::DTypeMismatch,
                std::string(op) + " takes u8 or i8 operands, not " + std::string(dtype_name(a_in.dtype())) + " and " +
                    std::string(dtype_name(b_in.dtype())),
                ctx(o), {"Quantize the operands with quantize_linear first"});
  if (a_in.ndim() < 2 || b_in.ndim() < 2)
    throw Error(ErrorCode::ShapeMismatch, std::string(op) + " takes operands of rank 2 or more", ctx(o),
                {"Add a unit dimension with unsqueeze for a vector"});
  const std::int64_t m = a_in.shape()[a_in.ndim() - 2], k = a_in.shape()[a_in.ndim() - 1];
  const std::int64_t k2 = b_in.shape()[b_in.ndim() - 2], n = b_in.shape()[b_in.ndim() - 1];
  if (k != k2)
    throw Error(ErrorCode::ShapeMismatch,
                "inner dimensions differ: " + a_in.shape().to_string() + " @ " + b_in.shape().to_string() + " (" +
                    std::to_string(k) + " vs " + std::to_string(k2) + ")",
                ctx(o), {"a's last dimension must equal b's second-to-last"});
  if (q.a_zp) check_zero_point(o, *q.a_zp, a_in, "a_zero_point", m, "row of a");
  if (q.b_zp) check_zero_point(o, *q.b_zp, b_in, "b_zero_point", n, "column of b");
  if (q.a_scale) check_scale(o, *q.a_scale, "a_scale", m, "row of a");
  if (q.b_scale) check_scale(o, *q.b_scale, "b_scale", n, "column of b");
  if (q.y_scale) check_scale(o, *q.y_scale, "y_scale", 1, "output");
  if (q.y_zp) check_length(o, *q.y_zp, "y_zero_point", 1, "output");
  if (q.bias && (q.bias->dtype() != DType::I32 || q.bias->ndim() != 1 || q.bias->numel() != n))
    throw Error(ErrorCode::ShapeMismatch,
                "the bias is " + std::string(dtype_name(q.bias->dtype())) + q.bias->shape().to_string() +
                    ": it must be i32 [" + std::to_string(n) + "], one per output channel",
                ctx(o), {"Quantize the bias to int32 with scale x_scale * w_scale and zero point 0"});

  const Shape ba(std::vector<std::int64_t>(a_in.shape().dims().begin(), a_in.shape().dims().end() - 2));
  const Shape bb(std::vector<std::int64_t>(b_in.shape().dims().begin(), b_in.shape().dims().end() - 2));
  const Shape batch = broadcast_shapes(ba, bb, op);
  std::int64_t nb = 1;
  for (std::size_t i = 0; i < batch.ndim(); ++i) nb *= batch[i];
  std::vector<std::int64_t> od = batch.dims();
  od.push_back(m);
  od.push_back(n);
  Tensor out = detail::empty_like(a_in, Shape(od), out_dtype);
  if (out.numel() == 0) return out;

  // a as [batch, m, k] rows; b shared when it has no batch of its own (the
  // usual weights), else broadcast to the batch. Both contiguous.
  const auto full = [&](const Tensor& t, std::int64_t r, std::int64_t c) {
    std::vector<std::int64_t> d = batch.dims();
    d.push_back(r);
    d.push_back(c);
    return t.broadcast_to(Shape(d)).contiguous();
  };
  std::int64_t b_count = 1;
  for (std::size_t i = 0; i < bb.ndim(); ++i) b_count *= bb[i];
  const bool b_batched = b_count > 1;
  const Tensor a = full(a_in, m, k);
  const Tensor b = b_batched ? full(b_in, k, n) : b_in.contiguous();

  std::vector<Tensor> ins{a, b};
  int slot[7] = {-1, -1, -1, -1, -1, -1, -1};
  const auto extra = q.slots();
  for (int i = 0; i < 7; ++i)
    if (*extra[static_cast<std::size_t>(i)]) {
      slot[i] = static_cast<int>(ins.size());
      ins.push_back((*extra[static_cast<std::size_t>(i)])->contiguous());
    }
  const std::int64_t batches = nb;
  const auto build = [=](auto& in, auto& outs) {
    rt::IntegerMatmulArgs x;
    x.a = in[0];
    x.b = in[1];
    rt::TensorArg* fields[7] = {&x.a_zero_point, &x.b_zero_point, &x.a_scale, &x.b_scale,
                                &x.y_scale,      &x.y_zero_point, &x.bias};
    for (int i = 0; i < 7; ++i)
      if (slot[i] >= 0) *fields[i] = in[static_cast<std::size_t>(slot[i])];
    x.out = outs[0];
    x.batch = batches, x.m = m, x.n = n, x.k = k;
    x.b_batched = b_batched;
    if (!b_batched) x.b_prepared = b_prepared;
    return x;
  };
  detail::launch<rt::OpKind::IntegerMatmul>(op, ins, {out}, build);
  return out;
}

}  // namespace detail

Tensor matmul_integer(const Tensor& a, const Tensor& b, const std::optional<Tensor>& a_zero_point,
                      const std::optional<Tensor>& b_zero_point) {
  detail::IntegerRequant q;
  q.a_zp = a_zero_point;
  q.b_zp = b_zero_point;
  return detail::integer_matmul("matmul_integer", a, b, q, DType::I32);
}

namespace {

Tensor qlinear_matmul_impl(const Tensor& a, const Tensor& a_scale, const Tensor& a_zero_point, const Tensor& b,
                           const Tensor& b_scale, const Tensor& b_zero_point, const std::optional<Tensor>& y_scale,
                           const std::optional<Tensor>& y_zero_point,
                           const std::shared_ptr<rt::PreparedOperand>& b_prepared) {
  const char* op = "qlinear_matmul";
  if (y_scale.has_value() != y_zero_point.has_value())
    throw Error(ErrorCode::InvalidArgument,
                "y_scale and y_zero_point come together (a quantized output) or not at all (an f32 output)", {.op = op},
                {"Give both, or neither for the dequantized f32 product"});
  DType out = DType::F32;
  if (y_zero_point && y_zero_point->defined()) {
    out = y_zero_point->dtype();
    if (!int8_dtype(out))
      throw Error(ErrorCode::DTypeMismatch,
                  "y_zero_point is " + std::string(dtype_name(out)) + "; the quantized output is u8 or i8",
                  detail::context(op, {*y_zero_point}), {"Give a u8 or i8 y_zero_point"});
  }
  detail::IntegerRequant q;
  q.a_zp = a_zero_point;
  q.b_zp = b_zero_point;
  q.a_scale = a_scale;
  q.b_scale = b_scale;
  q.y_scale = y_scale;
  q.y_zp = y_zero_point;
  return detail::integer_matmul(op, a, b, q, out, b_prepared);
}

}  // namespace

Tensor qlinear_matmul(const Tensor& a, const Tensor& a_scale, const Tensor& a_zero_point, const Tensor& b,
                      const Tensor& b_scale, const Tensor& b_zero_point, const std::optional<Tensor>& y_scale,
                      const std::optional<Tensor>& y_zero_point) {
  return qlinear_matmul_impl(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point, nullptr);
}

IntegerWeight::IntegerWeight(const Tensor& b) {
  const char* op = "IntegerWeight";
  if (!b.defined()) throw Error(ErrorCode::InvalidState, "the weight is undefined", {.op = op});
  if (!int8_dtype(b.dtype()) || b.ndim() != 2)
    throw Error(ErrorCode::InvalidArgument,
                "a prepared int8 weight is a 2-D u8 or i8 tensor [k, n], not " + std::string(dtype_name(b.dtype())) +
                    b.shape().to_string(),
                detail::context(op, {b}), {"Quantize it with quantize_linear; give batched weights as plain tensors"});
  b_ = cast(b, b.dtype());  // always a copy: the weight keeps its values whatever happens to b
  prepared_ = std::make_shared<rt::PreparedOperand>();
}

Tensor matmul_integer(const Tensor& a, const IntegerWeight& b, const std::optional<Tensor>& a_zero_point,
                      const std::optional<Tensor>& b_zero_point) {
  if (!b.defined()) throw Error(ErrorCode::InvalidState, "the weight is undefined", {.op = "matmul_integer"});
  detail::IntegerRequant q;
  q.a_zp = a_zero_point;
  q.b_zp = b_zero_point;
  return detail::integer_matmul("matmul_integer", a, b.tensor(), q, DType::I32, b.prepared());
}

Tensor qlinear_matmul(const Tensor& a, const Tensor& a_scale, const Tensor& a_zero_point, const IntegerWeight& b,
                      const Tensor& b_scale, const Tensor& b_zero_point, const std::optional<Tensor>& y_scale,
                      const std::optional<Tensor>& y_zero_point) {
  if (!b.defined()) throw Error(ErrorCode::InvalidState, "the weight is undefined", {.op = "qlinear_matmul"});
  return qlinear_matmul_impl(a, a_scale, a_zero_point, b.tensor(), b_scale, b_zero_point, y_scale, y_zero_point,
                             b.prepared());
}

}  // namespace torsh::ops
