#include <algorithm>
#include <atomic>

#include "dispatch.hpp"
#include "widened_reduction.hpp"

namespace torsh::ops {
namespace {

// Which of x's axes `axes` reduces (none listed: all), each checked.
std::vector<bool> reduced_axes(const char* name, const Tensor& x, const std::vector<std::int64_t>& axes) {
  std::vector<bool> red(x.ndim(), axes.empty());
  for (auto a : axes) {
    const auto ax = normalize_axis(a, x.ndim(), name);
    if (red[ax])
      throw Error(ErrorCode::InvalidArgument, "axis " + std::to_string(a) + " listed twice",
                  detail::context(name, {x}));
    red[ax] = true;
  }
  return red;
}

Tensor reduce_impl(rt::ReduceOp op, const Tensor& x_in, std::vector<std::int64_t> axes_in, bool keepdim,
                   std::int64_t correction) {
  const char* name = rt::reduce_op_name(op);
  detail::check_same_device(name, {x_in});
  if (x_in.dtype() == DType::Bool ||
      (op != rt::ReduceOp::Max && op != rt::ReduceOp::Min && op != rt::ReduceOp::Argmax && op != rt::ReduceOp::Sum &&
       !is_floating(x_in.dtype())))
    throw Error(ErrorCode::DTypeMismatch, std::string(name) + " needs a floating dtype here",
                detail::context(name, {x_in}), {"Cast to f32 first"});
  const std::size_t nd = x_in.ndim();
  const std::vector<bool> red = reduced_axes(name, x_in, axes_in);
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
    if (red[d]) {
      first = std::min(first, d);
      last = d;
    }
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

// An integer sum, mean or variance reduces its input widened (to i64 for
// sums, f64 for the others): a widened copy of the whole of a large tensor
// would be 8x an 8-bit input. Past this many bytes of widened values the
// input is reduced in slices along its outermost axes instead, each slice
// widened on its own, so the memory the widening takes stays bounded. 16
// MiB slices are also faster than one copy, and than 64 MiB slices
// (src/backends/cpu/README.md, src/ops/reduce.cpp).
constexpr std::int64_t kWidenBytes = std::int64_t{16} << 20;
std::atomic<std::int64_t> g_widen_bytes{kWidenBytes};

// How many values widened to `wide` one slice may hold.
std::int64_t widened_values_limit(DType wide) {
  return std::max<std::int64_t>(1, g_widen_bytes.load() / static_cast<std::int64_t>(dtype_size(wide)));
}

// The sum over the reduced axes (red) of x widened to `wide`, keepdim
// shaped; of (x - center)^2 when center (keepdim shaped) is given. In
// slices along the first axis longer than 1 while x is larger than the
// bound: sums of slices along a reduced axis are added, slices along a kept
// axis land in their part of the result.
Tensor widened_sum(const Tensor& x, const std::vector<bool>& red, DType wide, const Tensor* center) {
  const std::int64_t limit = widened_values_limit(wide);
  if (x.numel() <= limit) {
    Tensor w = x.cast(wide);
    if (center) {
      const Tensor d = sub(w, *center);
      w = mul(d, d);
    }
    std::vector<std::int64_t> axes;
    for (std::size_t d = 0; d < red.size(); ++d)
      if (red[d]) axes.push_back(static_cast<std::int64_t>(d));
    if (axes.empty()) return w;  // nothing reduced; empty axes would mean all
    return reduce_impl(rt::ReduceOp::Sum, w, axes, true, 0);
  }
  std::size_t d = 0;
  while (x.shape()[d] == 1) ++d;  // x has more than one value, so some axis is longer than 1
  const std::int64_t len = x.shape()[d], step = std::max<std::int64_t>(1, limit / (x.numel() / len));
  Tensor out;
  if (!red[d]) {
    std::vector<std::int64_t> dims;
    for (std::size_t i = 0; i < red.size(); ++i) dims.push_back(red[i] ? 1 : x.shape()[i]);
    out = detail::empty_like(x, Shape(dims), wide);
  }
  for (std::int64_t s = 0; s < len; s += step) {
    const std::int64_t e = std::min(len, s + step);
    Tensor part_center;
    if (center) part_center = red[d] ? *center : center->slice(static_cast<std::int64_t>(d), s, e);
    const Tensor part =
        widened_sum(x.slice(static_cast<std::int64_t>(d), s, e), red, wide, center ? &part_center : nullptr);
    if (red[d]) {
      out = out.defined() ? add(out, part) : part;
    } else {
      Tensor dst = out.slice(static_cast<std::int64_t>(d), s, e);
      copy_into(part, dst);
    }
  }
  return out;
}

// Whether an integer x reduces through widened_sum: when its widened copy
// would pass the bound.
bool widen_in_slices(const Tensor& x, DType wide) {
  return is_integral(x.dtype()) && x.numel() > widened_values_limit(wide);
}

// The values each result of a reduction over `red` combines.
std::int64_t reduced_count(const Tensor& x, const std::vector<bool>& red) {
  std::int64_t n = 1;
  for (std::size_t d = 0; d < red.size(); ++d)
    if (red[d]) n *= x.shape()[d];
  return n;
}

// A keepdim result without its reduced axes, unless keepdim.
Tensor drop_reduced(const Tensor& r, const std::vector<bool>& red, bool keepdim) {
  if (keepdim) return r;
  std::vector<std::int64_t> dims;
  for (std::size_t d = 0; d < red.size(); ++d)
    if (!red[d]) dims.push_back(r.shape()[d]);
  return r.reshape(dims);
}

Tensor f64_scalar_like(const Tensor& x, double v) {
  Backend b = x.backend();
  return b.from_host(&v, Shape{}, DType::F64);
}

}  // namespace

void set_widened_reduction_bytes(std::int64_t bytes) { g_widen_bytes.store(bytes > 0 ? bytes : kWidenBytes); }

// Integer sums accumulate and return i64, and integer means and variances
// are f64, as in NumPy: a sum of u8 or i32 does not wrap in the input dtype.
Tensor sum(const Tensor& x, const std::vector<std::int64_t>& axes, bool keepdim) {
  const bool widen = is_integral(x.dtype()) && x.dtype() != DType::I64;
  if (widen && widen_in_slices(x, DType::I64)) {
    const auto red = reduced_axes("sum", x, axes);
    return drop_reduced(widened_sum(x, red, DType::I64, nullptr), red, keepdim);
  }
  return reduce_impl(rt::ReduceOp::Sum, widen ? x.cast(DType::I64) : x, axes, keepdim, 0);
}
Tensor mean(const Tensor& x, const std::vector<std::int64_t>& axes, bool keepdim) {
  if (widen_in_slices(x, DType::F64)) {
    const auto red = reduced_axes("mean", x, axes);
    const Tensor s = widened_sum(x, red, DType::F64, nullptr);
    return drop_reduced(div(s, f64_scalar_like(x, static_cast<double>(reduced_count(x, red)))), red, keepdim);
  }
  return reduce_impl(rt::ReduceOp::Mean, is_integral(x.dtype()) ? x.cast(DType::F64) : x, axes, keepdim, 0);
}
Tensor max(const Tensor& x, const std::vector<std::int64_t>& axes, bool keepdim) {
  return reduce_impl(rt::ReduceOp::Max, x, axes, keepdim, 0);
}
Tensor min(const Tensor& x, const std::vector<std::int64_t>& axes, bool keepdim) {
  return reduce_impl(rt::ReduceOp::Min, x, axes, keepdim, 0);
}
Tensor var(const Tensor& x, const std::vector<std::int64_t>& axes, std::int64_t correction, bool keepdim) {
  if (widen_in_slices(x, DType::F64)) {
    // Two passes over slices: the mean, then the sum of squared deviations
    // from it, divided by max(n - correction, 0) as the kernels do.
    const auto red = reduced_axes("var", x, axes);
    const std::int64_t n = reduced_count(x, red);
    const Tensor m = div(widened_sum(x, red, DType::F64, nullptr), f64_scalar_like(x, static_cast<double>(n)));
    const Tensor ss = widened_sum(x, red, DType::F64, &m);
    const double denom = static_cast<double>(std::max<std::int64_t>(n - correction, 0));
    return drop_reduced(div(ss, f64_scalar_like(x, denom)), red, keepdim);
  }
  return reduce_impl(rt::ReduceOp::Var, is_integral(x.dtype()) ? x.cast(DType::F64) : x, axes, keepdim, correction);
}
Tensor argmax(const Tensor& x, std::int64_t axis, bool keepdim) {
  return reduce_impl(rt::ReduceOp::Argmax, x, {axis}, keepdim, 0);
}

}  // namespace torsh::ops
