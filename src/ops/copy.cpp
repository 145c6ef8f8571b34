#include "dispatch.hpp"

namespace torsh::ops {

void copy_into(const Tensor& x, Tensor& out) {
  detail::check_same_device("copy", {x, out});
  if (x.shape() != out.shape())
    throw Error(ErrorCode::ShapeMismatch, "copy needs equal shapes", detail::context("copy", {x, out}));
  if (x.numel() == 0) return;
  const bool same = x.dtype() == out.dtype();
  const auto build = [](auto& in, auto& o) { return rt::CopyArgs{in[0], o[0]}; };
  if (same) return detail::launch<rt::OpKind::Copy>("copy", {x}, {out}, build);
  detail::launch<rt::OpKind::Cast>("cast", {x}, {out}, build);
}

Tensor cast(const Tensor& x, DType dtype) {
  detail::check_same_device("cast", {x});
  Tensor out = detail::empty_like(x, x.shape(), dtype);
  copy_into(x, out);
  return out;
}

Tensor contiguous(const Tensor& x) { return cast(x, x.dtype()); }

}  // namespace torsh::ops
