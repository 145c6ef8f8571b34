#include "dispatch.hpp"

namespace torsh::ops {
namespace {
bool integer_ok(rt::UnaryOp op) { return op == rt::UnaryOp::Neg || op == rt::UnaryOp::Abs || op == rt::UnaryOp::Relu; }
}  // namespace

void unary_out(rt::UnaryOp op, const Tensor& x, Tensor& out) {
  const char* name = rt::unary_op_name(op);
  detail::check_same_device(name, {x, out});
  detail::check_same_dtype(name, {x, out});
  if (x.dtype() == DType::Bool || (!is_floating(x.dtype()) && !integer_ok(op)))
    throw Error(ErrorCode::DTypeMismatch, std::string(name) + " needs a floating dtype", detail::context(name, {x}),
                {"Cast to f32 first"});
  if (x.shape() != out.shape())
    throw Error(ErrorCode::ShapeMismatch, "output shape differs from the input's", detail::context(name, {x, out}));
  const bool same_buffer = &x.buffer().impl() == &out.buffer().impl();
  if (same_buffer && !(x.offset() == out.offset() && x.strides() == out.strides()))
    throw Error(ErrorCode::InvalidArgument, "output overlaps the input without being the same view",
                detail::context(name, {x, out}), {"Write to a fresh tensor, or exactly in place"});
  if (x.numel() == 0) return;
  detail::launch<rt::OpKind::Unary>(name, {x}, {out}, [op](auto& in, auto& o) {
    return rt::UnaryArgs{op, in[0], o[0]};
  });
}

Tensor unary(rt::UnaryOp op, const Tensor& x) {
  detail::check_same_device(rt::unary_op_name(op), {x});
  Tensor out = detail::empty_like(x, x.shape(), x.dtype());
  unary_out(op, x, out);
  return out;
}

Tensor neg(const Tensor& x) { return unary(rt::UnaryOp::Neg, x); }
Tensor abs(const Tensor& x) { return unary(rt::UnaryOp::Abs, x); }
Tensor exp(const Tensor& x) { return unary(rt::UnaryOp::Exp, x); }
Tensor log(const Tensor& x) { return unary(rt::UnaryOp::Log, x); }
Tensor sqrt(const Tensor& x) { return unary(rt::UnaryOp::Sqrt, x); }
Tensor rsqrt(const Tensor& x) { return unary(rt::UnaryOp::Rsqrt, x); }
Tensor tanh(const Tensor& x) { return unary(rt::UnaryOp::Tanh, x); }
Tensor sigmoid(const Tensor& x) { return unary(rt::UnaryOp::Sigmoid, x); }
Tensor relu(const Tensor& x) { return unary(rt::UnaryOp::Relu, x); }
Tensor gelu(const Tensor& x, bool tanh_approximation) {
  return unary(tanh_approximation ? rt::UnaryOp::GeluTanh : rt::UnaryOp::Gelu, x);
}
Tensor silu(const Tensor& x) { return unary(rt::UnaryOp::Silu, x); }

}  // namespace torsh::ops
