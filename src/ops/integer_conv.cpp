// int8 convolutions with ONNX's ConvInteger / QLinearConv semantics, through
// the int8 GEMM: per group, the input's columns [N, P*Q, C/G*R*S] (a strided
// view of the padded input, copied contiguous; padding holds x's zero point,
// so it contributes 0 after the subtraction) times the weights' transpose
// [C/G*R*S, K/G], whose per-output-channel zero points and scales are then
// per column, as the GEMM wants them. Every backend with a copy and an
// IntegerMatmul kernel runs it.
#include <string>

#include "integer_matmul.hpp"

namespace torsh::ops {
namespace {

struct Geometry {
  std::int64_t n, c, h, w, k, r, s, p, q, groups;
};

Geometry check(const char* op, const Tensor& x, const Tensor& w, const Conv2dParams& prm,
               const std::optional<Tensor>& x_zp) {
  const auto ctx = [&] { return detail::context(op, {x, w}); };
  for (const Tensor* t : {&x, &w})
    if (t->dtype() != DType::U8 && t->dtype() != DType::I8)
      throw Error(ErrorCode::DTypeMismatch,
                  std::string(op) + " takes u8 or i8 x and w, not " + std::string(dtype_name(x.dtype())) + " and " +
                      std::string(dtype_name(w.dtype())),
                  ctx(), {"Quantize the operands with quantize_linear first"});
  if (x.ndim() != 4 || w.ndim() != 4)
    throw Error(ErrorCode::ShapeMismatch, std::string(op) + " takes x [N, C, H, W] and w [K, C / groups, R, S]", ctx(),
                {"Add the batch dimension with unsqueeze(0)"});
  if (prm.stride_h < 1 || prm.stride_w < 1 || prm.dil_h < 1 || prm.dil_w < 1 || prm.pad_h < 0 || prm.pad_w < 0 ||
      prm.groups < 1)
    throw Error(ErrorCode::InvalidArgument, "strides and dilations must be >= 1, padding >= 0 and groups >= 1", ctx());
  Geometry g{x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3], w.shape()[0], w.shape()[2], w.shape()[3], 0, 0,
             prm.groups};
  if (g.c % g.groups || g.k % g.groups || w.shape()[1] != g.c / g.groups)
    throw Error(ErrorCode::ShapeMismatch,
                "x has " + std::to_string(g.c) + " channels and w " + w.shape().to_string() + " with groups = " +
                    std::to_string(g.groups) + ": w must be [K, C / groups, R, S] with groups dividing C and K",
                ctx(), {"Check the weight layout (OIHW) and the group count"});
  if (g.r < 1 || g.s < 1)
    throw Error(ErrorCode::ShapeMismatch, "w " + w.shape().to_string() + " has an empty kernel", ctx(),
                {"Give w a kernel of at least 1 x 1"});
  const std::int64_t eh = prm.dil_h * (g.r - 1) + 1, ew = prm.dil_w * (g.s - 1) + 1;
  if (g.h + 2 * prm.pad_h < eh || g.w + 2 * prm.pad_w < ew)
    throw Error(ErrorCode::ShapeMismatch, "the (dilated) kernel is larger than the padded input", ctx(),
                {"Pad more or use a smaller kernel"});
  g.p = (g.h + 2 * prm.pad_h - eh) / prm.stride_h + 1;
  g.q = (g.w + 2 * prm.pad_w - ew) / prm.stride_w + 1;
  if (x_zp && x_zp->numel() != 1)
    throw Error(ErrorCode::ShapeMismatch,
                "x_zero_point has shape " + x_zp->shape().to_string() + ": ONNX takes one x zero point", ctx(),
                {"Pass a scalar"});
  if (x_zp && x_zp->dtype() != x.dtype())
    throw Error(
        ErrorCode::DTypeMismatch,
        "x_zero_point is " + std::string(dtype_name(x_zp->dtype())) + " but x is " + std::string(dtype_name(x.dtype())),
        ctx(), {"Give the zero point x's dtype"});
  return g;
}

// Per-output-channel tensors (w's zero point and scale, the bias) for group g.
std::optional<Tensor> group_slice(const std::optional<Tensor>& t, std::int64_t g, std::int64_t kg) {
  if (!t || t->numel() <= 1 || t->ndim() != 1) return t;
  return t->slice(0, g * kg, (g + 1) * kg);
}

Tensor run(const char* op, const Tensor& x, const Tensor& w, const Conv2dParams& prm, detail::IntegerRequant q,
           DType out_dtype) {
  std::vector<Tensor> all{x, w};
  for (const auto* t : q.slots())
    if (*t) all.push_back(**t);
  detail::check_same_device(op, all);
  const Geometry g = check(op, x, w, prm, q.a_zp);
  // Per-channel parameters hold one value or one per output channel (K);
  // x's scale one value (ONNX). Checked here, in conv terms: the GEMM per
  // group below would see a slice of them.
  const auto per_channel = [&](const std::optional<Tensor>& t, const char* name, bool one_only) {
    if (!t) return;
    if (t->ndim() > 1 || (t->numel() != 1 && (one_only || t->numel() != g.k)))
      throw Error(ErrorCode::ShapeMismatch,
                  std::string(name) + " has shape " + t->shape().to_string() +
                      (one_only ? ": ONNX takes one value"
                                : ": expected one value or one per output channel (K = " + std::to_string(g.k) + ")"),
                  detail::context(op, {x, w, *t}), {one_only ? "Pass a scalar" : "Pass a scalar or a 1-D [K] tensor"});
  };
  per_channel(q.b_zp, "w_zero_point", false);
  per_channel(q.b_scale, "w_scale", false);
  per_channel(q.bias, "bias", false);
  per_channel(q.a_scale, "x_scale", true);
  Tensor out = detail::empty_like(x, Shape{g.n, g.k, g.p, g.q}, out_dtype);
  if (out.numel() == 0) return out;
  const std::int64_t cg = g.c / g.groups, kg = g.k / g.groups;

  // The padded input; its border holds x's zero point (read back: one byte).
  Tensor xp = x.contiguous();
  if (prm.pad_h > 0 || prm.pad_w > 0) {
    const std::int64_t hp = g.h + 2 * prm.pad_h, wp = g.w + 2 * prm.pad_w;
    Backend dev = x.backend();
    xp = dev.empty(Shape{g.n, g.c, hp, wp}, x.dtype());
    const unsigned char fill = q.a_zp ? q.a_zp->contiguous().to_host<unsigned char>()[0] : 0;
    Buffer storage = xp.buffer();
    storage.fill_bytes(fill);
    xp.slice(2, prm.pad_h, prm.pad_h + g.h).slice(3, prm.pad_w, prm.pad_w + g.w).copy_(x);
  }
  const std::int64_t hp = xp.shape()[2], wp = xp.shape()[3];
  const std::int64_t sc = hp * wp, sn = g.c * sc;
  for (std::int64_t gi = 0; gi < g.groups; ++gi) {
    // Columns [N, P, Q, C/G, R, S] as a view of the padded input.
    const Tensor view(xp.buffer(), xp.dtype(), Shape{g.n, g.p, g.q, cg, g.r, g.s},
                      {sn, prm.stride_h * wp, prm.stride_w, sc, prm.dil_h * wp, prm.dil_w}, xp.offset() + gi * cg * sc);
    const Tensor cols = view.contiguous().reshape({g.n, g.p * g.q, cg * g.r * g.s});
    const Tensor wt = w.slice(0, gi * kg, (gi + 1) * kg).contiguous().reshape({kg, cg * g.r * g.s}).transpose(0, 1);
    detail::IntegerRequant qg = q;
    qg.b_zp = group_slice(q.b_zp, gi, kg);
    qg.b_scale = group_slice(q.b_scale, gi, kg);
    qg.bias = group_slice(q.bias, gi, kg);
    const Tensor r = detail::integer_matmul(op, cols, wt, qg, out_dtype);  // [N, P*Q, K/G]
    out.slice(1, gi * kg, (gi + 1) * kg).permute({0, 2, 3, 1}).copy_(r.reshape({g.n, g.p, g.q, kg}));
  }
  return out;
}

}  // namespace

Tensor conv_integer(const Tensor& x, const Tensor& w, const std::optional<Tensor>& x_zero_point,
                    const std::optional<Tensor>& w_zero_point, const Conv2dParams& p) {
  detail::IntegerRequant q;
  q.a_zp = x_zero_point;
  q.b_zp = w_zero_point;
  return run("conv_integer", x, w, p, q, DType::I32);
}

Tensor qlinear_conv(const Tensor& x, const Tensor& x_scale, const Tensor& x_zero_point, const Tensor& w,
                    const Tensor& w_scale, const Tensor& w_zero_point, const Tensor& y_scale,
                    const Tensor& y_zero_point, const std::optional<Tensor>& bias, const Conv2dParams& p) {
  const char* op = "qlinear_conv";
  if (y_zero_point.dtype() != DType::U8 && y_zero_point.dtype() != DType::I8)
    throw Error(ErrorCode::DTypeMismatch,
                "y_zero_point is " + std::string(dtype_name(y_zero_point.dtype())) + "; the output is u8 or i8",
                detail::context(op, {y_zero_point}), {"Give a u8 or i8 y_zero_point"});
  detail::IntegerRequant q;
  q.a_zp = x_zero_point;
  q.b_zp = w_zero_point;
  q.a_scale = x_scale;
  q.b_scale = w_scale;
  q.y_scale = y_scale;
  q.y_zp = y_zero_point;
  q.bias = bias;
  return run(op, x, w, p, q, y_zero_point.dtype());
}

}  // namespace torsh::ops
