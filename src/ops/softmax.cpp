#include "dispatch.hpp"

namespace torsh::ops {
namespace {

Tensor softmax_impl(const Tensor& x_in, std::int64_t axis, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  detail::check_same_device(name, {x_in});
  if (!is_floating(x_in.dtype()))
    throw Error(ErrorCode::DTypeMismatch, std::string(name) + " needs a floating dtype", detail::context(name, {x_in}),
                {"Cast to f32 first"});
  if (x_in.ndim() == 0)
    throw Error(ErrorCode::ShapeMismatch, std::string(name) + " of a 0-d tensor", detail::context(name, {x_in}));
  const std::size_t ax = normalize_axis(axis, x_in.ndim(), name);
  const Tensor x = x_in.contiguous();
  Tensor out = detail::empty_like(x, x.shape(), x.dtype());
  if (x.numel() == 0) return out;
  rt::SoftmaxArgs proto;
  for (std::size_t i = 0; i < ax; ++i) proto.outer *= x.shape()[i];
  proto.n = x.shape()[ax];
  for (std::size_t i = ax + 1; i < x.ndim(); ++i) proto.inner *= x.shape()[i];
  proto.log = log;
  detail::launch<rt::OpKind::Softmax>(name, {x}, {out}, [proto](auto& in, auto& o) {
    rt::SoftmaxArgs a = proto;
    a.x = in[0];
    a.out = o[0];
    return a;
  });
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, std::int64_t axis) { return softmax_impl(x, axis, false); }
Tensor log_softmax(const Tensor& x, std::int64_t axis) { return softmax_impl(x, axis, true); }

}  // namespace torsh::ops
