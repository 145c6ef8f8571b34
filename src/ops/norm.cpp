#include "dispatch.hpp"

namespace torsh::ops {
namespace {

Tensor norm_impl(bool rms, const Tensor& x_in, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                 float eps) {
  const char* name = rms ? "rms_norm" : "layer_norm";
  detail::check_same_device(name, {x_in});
  if (!is_floating(x_in.dtype()))
    throw Error(ErrorCode::DTypeMismatch, std::string(name) + " needs a floating dtype", detail::context(name, {x_in}));
  if (x_in.ndim() == 0)
    throw Error(ErrorCode::ShapeMismatch, std::string(name) + " of a 0-d tensor", detail::context(name, {x_in}));
  if (!(eps >= 0.0f)) throw Error(ErrorCode::InvalidArgument, "eps must be >= 0", detail::context(name, {x_in}));
  const std::int64_t n = x_in.shape()[x_in.ndim() - 1];
  detail::check_vector(name, "weight", weight, x_in, n);
  detail::check_vector(name, "bias", bias, x_in, n);
  const Tensor x = x_in.contiguous();
  Tensor out = detail::empty_like(x, x.shape(), x.dtype());
  if (x.numel() == 0) return out;
  rt::NormArgs proto;
  proto.rows = x.numel() / n;
  proto.n = n;
  proto.eps = eps;
  proto.rms = rms;
  std::vector<Tensor> ins{x};
  const bool has_w = weight.has_value(), has_b = bias.has_value();
  for (auto& t : detail::present({&weight, &bias})) ins.push_back(t);
  detail::launch<rt::OpKind::Norm>(name, ins, {out}, [proto, has_w, has_b](auto& in, auto& o) {
    rt::NormArgs a = proto;
    a.x = in[0];
    std::size_t i = 1;
    if (has_w) a.weight = in[i++];
    if (has_b) a.bias = in[i++];
    a.out = o[0];
    return a;
  });
  return out;
}

}  // namespace

Tensor layer_norm(const Tensor& x, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, float eps) {
  return norm_impl(false, x, weight, bias, eps);
}

Tensor rms_norm(const Tensor& x, const std::optional<Tensor>& weight, float eps) {
  return norm_impl(true, x, weight, std::nullopt, eps);
}

}  // namespace torsh::ops
