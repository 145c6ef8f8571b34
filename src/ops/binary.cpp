#include <algorithm>

#include "dispatch.hpp"

namespace torsh::ops {

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  if (a == b) return a;
  const std::size_t n = std::max(a.ndim(), b.ndim());
  DimVec out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t da = i < n - a.ndim() ? 1 : a[i - (n - a.ndim())];
    const std::int64_t db = i < n - b.ndim() ? 1 : b[i - (n - b.ndim())];
    if (da != db && da != 1 && db != 1)
      throw Error(ErrorCode::ShapeMismatch,
                  "shapes " + a.to_string() + " and " + b.to_string() + " do not broadcast (dimension " +
                      std::to_string(i) + ": " + std::to_string(da) + " vs " + std::to_string(db) + ")",
                  {.op = op, .shapes = {a.to_string(), b.to_string()}},
                  {"Each trailing dimension pair must be equal or one of them 1"});
    out[i] = da == 1 ? db : da;
  }
  return Shape(out);
}

namespace {
bool overlaps_partially(const Tensor& x, const Tensor& out) {
  if (x.buffer().impl().host_ptr() != out.buffer().impl().host_ptr() || &x.buffer().impl() != &out.buffer().impl())
    return false;
  const bool same_view = x.offset() == out.offset() && x.shape() == out.shape() && x.strides() == out.strides();
  return !same_view;
}
}  // namespace

namespace {
// The checks binary() has already made are not repeated here.
void binary_checked(rt::BinaryOp op, const char* name, const Tensor& a, const Tensor& b, const Shape& s, Tensor& out) {
  if (a.dtype() == DType::Bool)
    throw Error(ErrorCode::DTypeMismatch, "arithmetic on bool tensors", detail::context(name, {a, b}),
                {"Cast to an integer or float dtype first"});
  if (s.numel() == 0) return;
  const auto run = [op](auto& in, auto& o) { return rt::BinaryArgs{op, in[0], in[1], o[0]}; };
  // Operands already of the output's shape are passed as they are (no view).
  const bool ba = a.shape() != s, bb = b.shape() != s;
  if (!ba && !bb) return detail::launch<rt::OpKind::Binary>(name, {a, b}, {out}, run);
  const Tensor av = ba ? a.broadcast_to(s) : a, bv = bb ? b.broadcast_to(s) : b;
  detail::launch<rt::OpKind::Binary>(name, {av, bv}, {out}, run);
}
}  // namespace

namespace {
// Integer semantics follow NumPy: `divide` is true division (f64), so it has
// no integer result to write; x ** y with a negative integer exponent is
// refused; add, sub, mul and positive powers wrap.
void check_integer_div_out(rt::BinaryOp op, const char* name, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (op == rt::BinaryOp::Div && is_integral(out.dtype()))
    throw Error(ErrorCode::DTypeMismatch,
                "true division of " + std::string(dtype_name(out.dtype())) + " tensors gives f64, which " +
                    std::string(dtype_name(out.dtype())) + " cannot hold",
                detail::context(name, {a, b, out}),
                {"Divide into an f64 tensor, or cast the operands to a float dtype"});
}
void check_integer_pow(rt::BinaryOp op, const char* name, const Tensor& a, const Tensor& b) {
  if (op != rt::BinaryOp::Pow || !is_integral(b.dtype()) || b.numel() == 0) return;
  if (b.dtype() == DType::U8) return;  // no negative exponents to refuse
  // Off the CPU, read the exponents back rather than reduce them on the
  // device: a backend with integer pow need not have an integer min.
  bool negative = false;
  if (b.device().type == BackendType::Cpu) {
    negative = ops::min(b, {}, false).to_vector()[0] < 0;
  } else {
    const std::vector<unsigned char> bytes = b.to_host_bytes();
    const std::size_t es = dtype_size(b.dtype());
    for (std::size_t i = 0; i < bytes.size() && !negative; i += es)
      negative = load_as_int64(bytes.data() + i, b.dtype()) < 0;
  }
  if (negative)
    throw Error(ErrorCode::InvalidArgument, "integers to negative integer powers are not allowed",
                detail::context(name, {a, b}), {"Cast the base to a float dtype for fractional results"});
}
}  // namespace

void binary_out(rt::BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  const char* name = rt::binary_op_name(op);
  detail::check_same_device(name, {a, b, out});
  detail::check_same_dtype(name, {a, b, out});
  check_integer_div_out(op, name, a, b, out);
  check_integer_pow(op, name, a, b);
  const Shape s = broadcast_shapes(a.shape(), b.shape(), name);
  if (out.shape() != s)
    throw Error(ErrorCode::ShapeMismatch,
                "output shape " + out.shape().to_string() + " != broadcast shape " + s.to_string(),
                detail::context(name, {a, b, out}));
  if (overlaps_partially(a, out) || overlaps_partially(b, out))
    throw Error(ErrorCode::InvalidArgument, "output overlaps an input without being the same view",
                detail::context(name, {a, b, out}), {"Write to a fresh tensor, or exactly in place"});
  binary_checked(op, name, a, b, s, out);
}

Tensor binary(rt::BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = rt::binary_op_name(op);
  detail::check_same_device(name, {a, b});
  detail::check_same_dtype(name, {a, b});
  if (op == rt::BinaryOp::Div && is_integral(a.dtype())) return binary(op, a.cast(DType::F64), b.cast(DType::F64));
  check_integer_pow(op, name, a, b);
  const Shape s = broadcast_shapes(a.shape(), b.shape(), name);
  Tensor out = detail::empty_like(a, s, a.dtype());
  binary_checked(op, name, a, b, s, out);
  return out;
}

Tensor add(const Tensor& a, const Tensor& b) { return binary(rt::BinaryOp::Add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(rt::BinaryOp::Sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(rt::BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(rt::BinaryOp::Div, a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(rt::BinaryOp::Maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(rt::BinaryOp::Minimum, a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return binary(rt::BinaryOp::Pow, a, b); }

void binary_(rt::BinaryOp op, Tensor& a, const Tensor& b) { binary_out(op, a, b, a); }

}  // namespace torsh::ops
