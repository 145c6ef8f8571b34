#include "dispatch.hpp"

namespace torsh::ops {

Tensor batch_norm(const Tensor& x_in, const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, bool training, float momentum, float eps) {
  const char* name = "batch_norm";
  detail::check_same_device(name, {x_in});
  if (!is_floating(x_in.dtype()))
    throw Error(ErrorCode::DTypeMismatch, "batch_norm needs a floating dtype", detail::context(name, {x_in}));
  if (x_in.ndim() < 2)
    throw Error(ErrorCode::ShapeMismatch, "batch_norm needs [N, C, ...]", detail::context(name, {x_in}));
  const std::int64_t c = x_in.shape()[1];
  for (auto* t : {&running_mean, &running_var, &weight, &bias})
    detail::check_vector(name, "per-channel tensor", *t, x_in, c);
  if (!training && (!running_mean || !running_var))
    throw Error(ErrorCode::InvalidArgument, "inference needs running_mean and running_var",
                detail::context(name, {x_in}), {"Pass the running statistics, or training=true"});
  if (running_mean.has_value() != running_var.has_value())
    throw Error(ErrorCode::InvalidArgument, "pass both running statistics or neither", detail::context(name, {x_in}));
  for (auto* t : {&running_mean, &running_var})
    if (*t && !(*t)->is_contiguous())
      throw Error(ErrorCode::InvalidArgument, "running statistics must be contiguous (they are updated in place)",
                  detail::context(name, {x_in}));
  if (!(momentum >= 0.0f && momentum <= 1.0f) || !(eps >= 0.0f))
    throw Error(ErrorCode::InvalidArgument, "momentum must be in [0, 1] and eps >= 0", detail::context(name, {x_in}));
  const Tensor x = x_in.contiguous();
  Tensor out = detail::empty_like(x, x.shape(), x.dtype());
  if (x.numel() == 0) return out;
  rt::BatchNormArgs proto;
  proto.n = x.shape()[0];
  proto.c = c;
  proto.spatial = x.numel() / (proto.n * c);
  proto.training = training;
  proto.momentum = momentum;
  proto.eps = eps;
  if (training && proto.n * proto.spatial < 2 && running_var)
    throw Error(ErrorCode::InvalidArgument, "training batch_norm needs more than one value per channel",
                detail::context(name, {x_in}));
  std::vector<Tensor> ins{x};
  const bool has_w = weight.has_value(), has_b = bias.has_value();
  for (auto& t : detail::present({&weight, &bias})) ins.push_back(t);
  std::vector<Tensor> outs{out};
  const bool has_rs = running_mean.has_value();
  if (has_rs) {
    outs.push_back(*running_mean);
    outs.push_back(*running_var);
  }
  detail::launch<rt::OpKind::BatchNorm>(name, ins, outs, [=](auto& in, auto& o) {
    rt::BatchNormArgs a = proto;
    a.x = in[0];
    std::size_t i = 1;
    if (has_w) a.weight = in[i++];
    if (has_b) a.bias = in[i++];
    a.out = o[0];
    if (has_rs) {
      a.running_mean = o[1];
      a.running_var = o[2];
    }
    return a;
  });
  return out;
}

}  // namespace torsh::ops
