// int8 quantization with ONNX's QuantizeLinear / DequantizeLinear semantics:
// one affine map per tensor or per channel along one axis. Everything a kernel
// cannot check cheaply is checked here, before anything is written: the scale's
// values (read back: one per channel), shapes, dtypes and devices.
#include <cmath>
#include <string>

#include "dispatch.hpp"

namespace torsh::ops {
namespace {

bool quantized_dtype(DType t) { return t == DType::U8 || t == DType::I8; }

// The channel geometry of x: outer, channels, inner.
struct Channels {
  std::int64_t outer = 1, channels = 1, inner = 1;
};

Channels channels_of(const char* op, const Tensor& x, const Tensor& scale, const std::optional<Tensor>& zero_point,
                     int axis) {
  const auto ctx = [&] {
    ErrorContext c = detail::context(op, {x, scale});
    if (zero_point) {
      c.shapes.push_back(zero_point->shape().to_string());
      c.dtypes.push_back(std::string(dtype_name(zero_point->dtype())));
    }
    return c;
  };
  if (scale.dtype() != DType::F32)
    throw Error(
        ErrorCode::DTypeMismatch,
        std::string("the scale is ") + std::string(dtype_name(scale.dtype())) + "; " + op + " takes an f32 scale",
        ctx(), {"Cast the scale with .cast(DType::F32)"});
  if (scale.ndim() > 1 || scale.numel() == 0)
    throw Error(ErrorCode::ShapeMismatch,
                "the scale has shape " + scale.shape().to_string() +
                    ": it must hold one value (per tensor) or one per channel (1-D)",
                ctx(), {"Pass a scalar, a [1] tensor or a [channels] tensor"});
  if (zero_point && zero_point->shape() != scale.shape())
    throw Error(ErrorCode::ShapeMismatch,
                "the zero point has shape " + zero_point->shape().to_string() + " but the scale " +
                    scale.shape().to_string() + ": they must match",
                ctx(), {"Give one zero point per scale value"});
  Channels g;
  g.inner = x.numel();
  if (scale.numel() == 1) return g;  // per tensor: one channel
  const std::size_t ax = normalize_axis(axis, x.ndim(), op);
  if (x.shape()[ax] != scale.numel())
    throw Error(ErrorCode::ShapeMismatch,
                "per-channel scale of " + std::to_string(scale.numel()) + " values, but x has " +
                    std::to_string(x.shape()[ax]) + " along axis " + std::to_string(axis),
                ctx(), {"Give x.shape(axis) scale values, or choose the axis they belong to"});
  g.outer = 1;
  for (std::size_t d = 0; d < ax; ++d) g.outer *= x.shape()[d];
  g.channels = x.shape()[ax];
  g.inner = 1;
  for (std::size_t d = ax + 1; d < x.ndim(); ++d) g.inner *= x.shape()[d];
  return g;
}

// A scale of 0, below 0, inf or NaN would divide by it or map everything to
// one level: refused with the offending value, before anything runs.
void check_scale_values(const char* op, const Tensor& scale) {
  const std::vector<float> v = scale.contiguous().to_host<float>();
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!(std::isfinite(v[i]) && v[i] > 0.0f))
      throw Error(
          ErrorCode::InvalidArgument,
          "scale[" + std::to_string(i) + "] is " + std::to_string(v[i]) + ": every scale must be finite and > 0",
          detail::context(op, {scale}), {"Derive scales from a nonzero range, e.g. (max - min) / 255"});
}

Tensor run_linear_quant(bool quantize, const Tensor& x_in, const Tensor& scale, const std::optional<Tensor>& zero_point,
                        int axis, DType out_dtype) {
  const char* op = quantize ? "quantize_linear" : "dequantize_linear";
  if (!x_in.defined() || !scale.defined() || (zero_point && !zero_point->defined()))
    throw Error(ErrorCode::InvalidState, "an operand is undefined", {.op = op});
  if (zero_point)
    detail::check_same_device(op, {x_in, scale, *zero_point});
  else
    detail::check_same_device(op, {x_in, scale});
  const Channels g = channels_of(op, x_in, scale, zero_point, axis);
  check_scale_values(op, scale);
  Tensor out = detail::empty_like(x_in, x_in.shape(), out_dtype);
  if (out.numel() == 0) return out;
  const Tensor x = x_in.is_contiguous() ? x_in : x_in.contiguous();
  std::vector<Tensor> ins{x, scale.contiguous()};
  if (zero_point) ins.push_back(zero_point->contiguous());
  const bool has_zp = zero_point.has_value();
  const auto build = [=](auto& in, auto& o) {
    rt::LinearQuantArgs a;
    a.x = in[0];
    a.scale = in[1];
    if (has_zp) a.zero_point = in[2];
    a.out = o[0];
    a.outer = g.outer, a.channels = g.channels, a.inner = g.inner;
    return a;
  };
  if (quantize)
    detail::launch<rt::OpKind::QuantizeLinear>(op, ins, {out}, build);
  else
    detail::launch<rt::OpKind::DequantizeLinear>(op, ins, {out}, build);
  return out;
}

}  // namespace

Tensor quantize_linear(const Tensor& x, const Tensor& scale, const std::optional<Tensor>& zero_point, int axis,
                       DType dtype) {
  const char* op = "quantize_linear";
  if (x.defined() && !is_floating(x.dtype()))
    throw Error(ErrorCode::DTypeMismatch,
                "x is " + std::string(dtype_name(x.dtype())) + "; quantize_linear takes a floating x",
                detail::context(op, {x}), {"Cast x to f32 first"});
  const DType q = zero_point && zero_point->defined() ? zero_point->dtype() : dtype;
  if (!quantized_dtype(q))
    throw Error(ErrorCode::DTypeMismatch,
                std::string("quantize_linear produces u8 or i8, not ") + std::string(dtype_name(q)) +
                    (zero_point ? " (the zero point's dtype)" : ""),
                detail::context(op, {x}), {"Give a u8 or i8 zero point, or dtype U8 / I8"});
  return run_linear_quant(true, x, scale, zero_point, axis, q);
}

Tensor dequantize_linear(const Tensor& x, const Tensor& scale, const std::optional<Tensor>& zero_point, int axis,
                         DType dtype) {
  const char* op = "dequantize_linear";
  if (x.defined() && !quantized_dtype(x.dtype()))
    throw Error(ErrorCode::DTypeMismatch,
                "x is " + std::string(dtype_name(x.dtype())) + "; dequantize_linear takes u8 or i8",
                detail::context(op, {x}), {"Quantize with quantize_linear first"});
  if (zero_point && zero_point->defined() && x.defined() && zero_point->dtype() != x.dtype())
    throw Error(ErrorCode::DTypeMismatch,
                "the zero point is " + std::string(dtype_name(zero_point->dtype())) + " but x is " +
                    std::string(dtype_name(x.dtype())),
                detail::context(op, {x, *zero_point}), {"Give the zero point x's dtype"});
  if (dtype != DType::F32 && dtype != DType::F16 && dtype != DType::BF16)
    throw Error(ErrorCode::DTypeMismatch,
                "dequantize_linear produces f32, f16 or bf16, not " + std::string(dtype_name(dtype)),
                detail::context(op, {x}), {"Ask for f32 and cast the result"});
  return run_linear_quant(false, x, scale, zero_point, axis, dtype);
}

}  // namespace torsh::ops
