#include "dispatch.hpp"

namespace torsh::ops {

namespace {
// The bytes [first, last) a view's elements occupy in its segment.
std::pair<std::int64_t, std::int64_t> byte_span(const rt::TensorArg& a) {
  const auto [lo, hi] = detail::element_span(a.shape, a.strides, a.offset);
  const auto es = static_cast<std::int64_t>(dtype_size(a.dtype));
  return {lo * es, (hi + 1) * es};
}

enum class Alias { None, Same, Partial };

// Whether out's storage meets x's: the same view, or some other overlap
// (x.T into x, a reversed slice into its source), where an element-by-element
// copy would read what it has already overwritten.
Alias alias_of(const Tensor& x, const Tensor& out) {
  if (&x.buffer().impl() != &out.buffer().impl()) return Alias::None;
  const rt::TensorArg a = x.arg(), b = out.arg();
  const auto [a0, a1] = byte_span(a);
  const auto [b0, b1] = byte_span(b);
  if (a1 <= b0 || b1 <= a0) return Alias::None;
  const bool same = a.dtype == b.dtype && a.offset == b.offset && a.shape == b.shape && a.strides == b.strides;
  return same ? Alias::Same : Alias::Partial;
}
}  // namespace

void copy_into(const Tensor& x, Tensor& out) {
  detail::check_same_device("copy", {x, out});
  if (x.shape() != out.shape())
    throw Error(ErrorCode::ShapeMismatch, "copy needs equal shapes", detail::context("copy", {x, out}));
  if (x.numel() == 0) return;
  switch (alias_of(x, out)) {
    case Alias::Same: return;  // every element onto itself
    case Alias::Partial: {
      // As if through a temporary (NumPy's and PyTorch's semantics for overlapping copies).
      const Tensor tmp = contiguous(x);
      return copy_into(tmp, out);
    }
    case Alias::None: break;
  }
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

namespace torsh {

// The Tensor methods that run an op live with the op (the runtime layer below
// does not call up into ops).
Tensor Tensor::contiguous() const { return is_contiguous() ? *this : ops::contiguous(*this); }
Tensor Tensor::cast(DType dtype) const { return ops::cast(*this, dtype); }

void Tensor::copy_(const Tensor& src) {
  if (src.dtype() != dtype_)
    throw Error(ErrorCode::DTypeMismatch, "copy from " + src.describe() + " into " + describe(),
                ops::detail::context("copy_", {*this}), {"Use cast() to convert dtypes"});
  if (src.shape() != shape_)
    throw Error(ErrorCode::ShapeMismatch, "copy from " + src.describe() + " into " + describe(),
                ops::detail::context("copy_", {*this}));
  if (src.device() == device()) {
    ops::copy_into(src, *this);
    return;
  }
  Backend here = backend();
  Tensor staged = src.to(here);
  ops::copy_into(staged, *this);
}

}  // namespace torsh
