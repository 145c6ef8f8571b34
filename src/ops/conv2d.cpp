#include "dispatch.hpp"

namespace torsh::ops {
Tensor conv2d(const Tensor& x_in, const Tensor& w_in, const std::optional<Tensor>& bias, const Conv2dParams& p) {
  const char* name = "conv2d";
  std::vector<Tensor> all{x_in, w_in};
  if (bias) all.push_back(*bias);
  detail::check_same_device(name, all);
  detail::check_same_dtype(name, all);
  if (!is_floating(x_in.dtype()))
    throw Error(ErrorCode::DTypeMismatch, "conv2d needs floating operands", detail::context(name, all));
  if (x_in.ndim() != 4 || w_in.ndim() != 4)
    throw Error(ErrorCode::ShapeMismatch, "conv2d takes x [N, C, H, W] and w [K, C / groups, R, S]",
                detail::context(name, all));
  if (p.stride_h < 1 || p.stride_w < 1 || p.dil_h < 1 || p.dil_w < 1 || p.pad_h < 0 || p.pad_w < 0 || p.groups < 1)
    throw Error(ErrorCode::InvalidArgument, "stride and dilation must be >= 1, padding >= 0, groups >= 1",
                detail::context(name, all));
  const auto& xs = x_in.shape();
  const auto& ws = w_in.shape();
  const std::int64_t C = xs[1], K = ws[0];
  if (C % p.groups || K % p.groups || ws[1] * p.groups != C)
    throw Error(ErrorCode::ShapeMismatch,
                "channels do not match: x has " + std::to_string(C) + ", w expects " + std::to_string(ws[1]) + " x " +
                    std::to_string(p.groups) + " groups (K = " + std::to_string(K) + " must divide by groups too)",
                detail::context(name, all));
  if (bias && (bias->ndim() != 1 || bias->shape()[0] != K))
    throw Error(ErrorCode::ShapeMismatch, "bias must be [K]", detail::context(name, all));
  const std::int64_t P = detail::window_out_size(xs[2], ws[2], p.stride_h, p.pad_h, p.dil_h);
  const std::int64_t Q = detail::window_out_size(xs[3], ws[3], p.stride_w, p.pad_w, p.dil_w);
  if (P <= 0 || Q <= 0)
    throw Error(ErrorCode::ShapeMismatch, "the kernel (with dilation) is larger than the padded input",
                detail::context(name, all), {"Increase padding or use a smaller kernel"});
  if (p.algo == ConvAlgo::Winograd && (x_in.dtype() != DType::F32 || ws[2] != 3 || ws[3] != 3 || p.stride_h != 1 ||
                                       p.stride_w != 1 || p.dil_h != 1 || p.dil_w != 1))
    throw Error(ErrorCode::InvalidArgument,
                "Winograd F(2x2, 3x3) needs f32 operands, a 3x3 filter, stride 1 and dilation 1; got a " +
                    std::to_string(ws[2]) + "x" + std::to_string(ws[3]) + " filter, stride " +
                    std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) + ", dilation " +
                    std::to_string(p.dil_h) + "x" + std::to_string(p.dil_w),
                detail::context(name, all), {"Use ConvAlgo::Auto or ConvAlgo::Gemm for this convolution"});
  const Tensor x = x_in.contiguous(), w = w_in.contiguous();
  Tensor out = detail::empty_like(x, Shape{xs[0], K, P, Q}, x.dtype());
  if (out.numel() == 0) return out;
  std::vector<Tensor> ins{x, w};
  if (bias) ins.push_back(bias->contiguous());
  const bool has_bias = bias.has_value();
  detail::launch<rt::OpKind::Conv2d>(name, ins, {out}, [=](auto& in, auto& o) {
    rt::Conv2dArgs a;
    a.x = in[0];
    a.w = in[1];
    if (has_bias) a.bias = in[2];
    a.out = o[0];
    a.stride_h = p.stride_h, a.stride_w = p.stride_w, a.pad_h = p.pad_h, a.pad_w = p.pad_w;
    a.dil_h = p.dil_h, a.dil_w = p.dil_w, a.groups = p.groups;
    a.algo = p.algo;
    return a;
  });
  return out;
}

}  // namespace torsh::ops
