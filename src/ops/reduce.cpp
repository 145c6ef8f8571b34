#include <algorithm>

#include "dispatch.hpp"

namespace torsh::ops {
namespace {

Tensor reduce_impl(rt::ReduceOp op, const Tensor& x_in, std::vector<std::int64_t> axes_in, bool keepdim,
                   std::int64_t correction) {
  const char* name = rt::reduce_op_name(op);
  detail::check_same_device(name, {x_in});
  if (x_in.dtype() == DType::Bool || (op != rt::ReduceOp::Max && op != rt::ReduceOp::Min &&
                                      op != rt::ReduceOp::Argmax && op != rt::ReduceOp::Sum && !is_floating(x_in.dtype())))
    throw Error(ErrorCode::DTypeMismatch, std::string(name) + " needs a floating dtype here",
                detail::context(name, {x_in}), {"Cast to f32 first"});
  const std::size_t nd = x_in.ndim();
  std::vector<bool> red(nd, axes_in.empty());
  for (auto a : axes_in) {
    const auto ax = normalize_axis(a, nd, name);
    if (red[ax])
      throw Error(ErrorCode::InvalidArgument, "axis " + std::to_string(a) + " listed twice", detail::context(name, {x_in}));
    red[ax] = true;
  }
  // Output shape.
  std::vector<std::int64_t> out_dims, kept_dims;
  for (std::size_t d = 0; d < nd; ++d) {
    if (red[d]) {
      if (keepdim) out_dims.push_back(1);
    } else {
      out_dims.push_back(x_in.shape()[d]);
      kept_dims.push_back(x_in.shape()[d]);
    }
  }
  std::int64_t n = 1;
  for (std::size_t d = 0; d < nd; ++d)
    if (red[d]) n *= x_in.shape()[d];
  if (n == 0 && (op == rt::ReduceOp::Max || op == rt::ReduceOp::Min || op == rt::ReduceOp::Argmax))
    throw Error(ErrorCode::InvalidArgument, std::string(name) + " of an empty dimension has no identity",
                detail::context(name, {x_in}), {"Reduce a non-empty dimension, or use sum"});
  const DType out_dtype = op == rt::ReduceOp::Argmax ? DType::I64 : x_in.dtype();
  Tensor out = detail::empty_like(x_in, Shape(out_dims), out_dtype);
  if (out.numel() == 0) return out;

  // Lay the reduced axes out as one block: [outer, n, inner] if they already are
  // consecutive in a contiguous tensor, else permute them last and copy.
  rt::ReduceArgs args;
  args.op = op;
  args.correction = correction;
  std::size_t first = nd, last = 0;
  for (std::size_t d = 0; d < nd; ++d)
    if (red[d]) { first = std::min(first, d); last = d; }
  bool block = true;
  for (std::size_t d = first; d <= last && first < nd; ++d) block &= red[d];
  Tensor x = x_in;
  if (block && first < nd) {
    x = x_in.contiguous();
    for (std::size_t d = 0; d < first; ++d) args.outer *= x.shape()[d];
    for (std::size_t d = last + 1; d < nd; ++d) args.inner *= x.shape()[d];
  } else {
    std::vector<std::int64_t> order;
    for (std::size_t d = 0; d < nd; ++d)
      if (!red[d]) order.push_back(static_cast<std::int64_t>(d));
    for (std::size_t d = 0; d < nd; ++d)
      if (red[d]) order.push_back(static_cast<std::int64_t>(d));
    x = x_in.permute(order).contiguous();
    for (auto k : kept_dims) args.outer *= k;
  }
  args.n = n;
  if (nd == 0) args.n = 1;
  detail::launch<rt::OpKind::Reduce>(name, {x}, {out}, [args](auto& in, auto& o) {
    rt::ReduceArgs a = args;
    a.x = in[0];
    a.out = o[0];
    return a;
  });
  return out;
}

}  // namespace

// Integer sums accumulate and return i64, and integer means and variances
// are f64, as in NumPy: a sum of u8 or i32 does not wrap in the input dtype.
Tensor sum(const Tensor& x, const std::vector<std::int64_t>& axes, bool keepdim) {
  const bool widen = is_integral(x.dtype()) && x.dtype() != DType::I64;
  return reduce_impl(rt::ReduceOp::Sum, widen ? x.cast(DType::I64) : x, axes, keepdim, 0);
}
Tensor mean(const Tensor& x, const std::vector<std::int64_t>& axes, bool keepdim) {
  return reduce_impl(rt::ReduceOp::Mean, is_integral(x.dtype()) ? x.cast(DType::F64) : x, axes, keepdim, 0);
}
Tensor max(const Tensor& x, const std::vector<std::int64_t>& axes, bool keepdim) {
  return reduce_impl(rt::ReduceOp::Max, x, axes, keepdim, 0);
}
Tensor min(const Tensor& x, const std::vector<std::int64_t>& axes, bool keepdim) {
  return reduce_impl(rt::ReduceOp::Min, x, axes, keepdim, 0);
}
Tensor var(const Tensor& x, const std::vector<std::int64_t>& axes, std::int64_t correction, bool keepdim) {
  return reduce_impl(rt::ReduceOp::Var, is_integral(x.dtype()) ? x.cast(DType::F64) : x, axes, keepdim, correction);
}
Tensor argmax(const Tensor& x, std::int64_t axis, bool keepdim) {
  return reduce_impl(rt::ReduceOp::Argmax, x, {axis}, keepdim, 0);
}

}  // namespace torsh::ops
