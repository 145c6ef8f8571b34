// int8 quantization with ONNX's QuantizeLinear / DequantizeLinear semantics.
// Scales become f32 on x's device; a zero point given as Python ints is
// range-checked for the quantized dtype before it becomes a tensor (a tensor
// or an array keeps its own dtype).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <string>

#include "common.hpp"

namespace torsh::py {
namespace {

using nb::arg;

// b as a prepared weight, or nullptr when it is anything else.
const ops::IntegerWeight* weight_of(const WeightLike& b) {
  return nb::isinstance<ops::IntegerWeight>(b.obj) ? nb::inst_ptr<ops::IntegerWeight>(b.obj) : nullptr;
}

Tensor on_device_of(Tensor t, const Tensor& x) {
  if (t.device() == x.device()) return t;
  Backend b = x.backend();
  return t.to(b);
}

// A zero point or scale written as Python ints (an int, a list or a tuple), as
// opposed to a tensor or an array, which carries its own dtype.
bool ints_given(const TensorLike& zp) {
  nb::handle h = zp.obj;
  return PyLong_Check(h.ptr()) || nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h);
}

Tensor scale_tensor(const TensorLike& s, const Tensor& x) {
  Tensor t = as_tensor(s);
  // A scale written as Python numbers (1, [1, 2]) is f32 like 0.5; an array
  // or tensor of integers keeps its dtype and is refused by the op.
  if ((is_floating(t.dtype()) || ints_given(s)) && t.dtype() != DType::F32) t = t.cast(DType::F32);
  return on_device_of(t, x);
}

std::optional<Tensor> zero_point_tensor(const std::optional<TensorLike>& zp, DType q, const Tensor& x, const char* op) {
  if (!zp || zp->obj.is_none()) return std::nullopt;
  if (!ints_given(*zp)) return on_device_of(as_tensor(*zp), x);
  const std::vector<std::int64_t> v = to_int_list(zp->obj, "zero_point");
  const std::int64_t lo = q == DType::I8 ? -128 : 0, hi = q == DType::I8 ? 127 : 255;
  std::vector<std::uint8_t> bytes;
  for (std::int64_t z : v) {
    if (z < lo || z > hi)
      raise_error(ErrorCode::OutOfRange,
                  "zero point " + std::to_string(z) + " is outside " + std::string(dtype_name(q)) + "'s [" +
                      std::to_string(lo) + ", " + std::to_string(hi) + "]",
                  op, {"Use dtype='int8' for negative zero points, or a zero point in range"});
    bytes.push_back(static_cast<std::uint8_t>(z));
  }
  const bool scalar = PyLong_Check(zp->obj.ptr());
  return on_device_of(
      cpu_backend().from_host(bytes.data(), scalar ? Shape{} : Shape{static_cast<std::int64_t>(v.size())}, q), x);
}

// The output dtype of a QLinear op: y_zero_point's when it is a tensor or
// an array, which a dtype= that says otherwise contradicts (an error, as in
// quantize_linear, rather than dtype= silently ignored).
void check_output_dtype(const std::optional<Tensor>& zy, const std::optional<DTypeArg>& dtype, const char* op) {
  if (!zy || !dtype) return;
  const DType q = to_dtype(*dtype);
  if (zy->dtype() != q)
    raise_error(
        ErrorCode::DTypeMismatch,
        "dtype is " + std::string(dtype_name(q)) + " but y_zero_point is " + std::string(dtype_name(zy->dtype())), op,
        {"Drop dtype: the zero point's dtype is the output's"});
}

// QLinearConv's bias is int32 (ONNX); an int64 one is taken when every value
// fits, refused otherwise (a cast would wrap it).
Tensor int32_bias(Tensor b, const char* op) {
  if (b.dtype() != DType::I64) return b;
  for (std::int64_t v : b.contiguous().to_host<std::int64_t>())
    if (v < INT32_MIN || v > INT32_MAX)
      raise_error(ErrorCode::OutOfRange, "bias value " + std::to_string(v) + " does not fit the int32 bias ONNX takes",
                  op, {"Requantize the bias (bias / (x_scale * w_scale)) into int32's range"});
  return b.cast(DType::I32);
}

}  // namespace

void bind_ops_quant(nb::module_& m) {
  m.def(
      "quantize_linear",
      [](const TensorLike& x, const TensorLike& scale, std::optional<TensorLike> zero_point, int axis,
         std::optional<DTypeArg> dtype) {
        Tensor tx = as_tensor(x);
        Tensor ts = scale_tensor(scale, tx);
        DType q = dtype ? to_dtype(*dtype) : DType::U8;
        std::optional<Tensor> tz = zero_point_tensor(zero_point, q, tx, "quantize_linear");
        if (tz && !ints_given(*zero_point)) {
          if (dtype && tz->dtype() != q)
            raise_error(ErrorCode::DTypeMismatch,
                        "dtype is " + std::string(dtype_name(q)) + " but the zero point is " +
                            std::string(dtype_name(tz->dtype())),
                        "quantize_linear", {"Drop dtype: the zero point's dtype is the quantized dtype"});
          q = tz->dtype();
        }
        nb::gil_scoped_release r;
        return ops::quantize_linear(tx, ts, tz, axis, q);
      },
      arg("x"), arg("scale"), arg("zero_point").none() = nb::none(), nb::kw_only(), arg("axis") = 1,
      arg("dtype").none() = nb::none(),
      "ONNX QuantizeLinear: saturate(round_half_even(x / scale) + zero_point) as uint8 or int8. scale (f32) and "
      "zero_point hold one value (per tensor) or x.shape[axis] values (per channel along axis, ONNX's default 1). "
      "The quantized dtype is the zero point's when it is a tensor or array, else dtype (default uint8); a zero "
      "point given as ints must fit it. +-inf saturate; NaN gives the zero point. Scales must be finite and > 0.");
  m.def(
      "dequantize_linear",
      [](const TensorLike& x, const TensorLike& scale, std::optional<TensorLike> zero_point, int axis,
         const DTypeArg& dtype) {
        Tensor tx = as_tensor(x);
        Tensor ts = scale_tensor(scale, tx);
        std::optional<Tensor> tz =
            zero_point_tensor(zero_point, tx.dtype() == DType::I8 ? DType::I8 : DType::U8, tx, "dequantize_linear");
        const DType out = to_dtype(dtype);
        nb::gil_scoped_release r;
        return ops::dequantize_linear(tx, ts, tz, axis, out);
      },
      arg("x"), arg("scale"), arg("zero_point").none() = nb::none(), nb::kw_only(), arg("axis") = 1,
      arg("dtype") = "float32",
      "ONNX DequantizeLinear: (x - zero_point) * scale, computed in f32, as dtype (float32, float16 or bfloat16). "
      "x is uint8 or int8; zero_point, when given, has x's dtype and scale's shape.");

  nb::class_<ops::IntegerWeight>(
      m, "IntegerWeight",
      "An int8 weight b [k, n] (uint8 or int8) prepared once for repeated matmul_integer / qlinear_matmul "
      "products, as ONNX initializers are. It holds its own copy of b, so later writes to b do not reach it; the "
      "CPU keeps it packed in its tile layout after the first product instead of packing it on every call. "
      "Results equal those with the plain array.")
      .def(
          "__init__",
          [](ops::IntegerWeight* self, const TensorLike& b) {
            Tensor tb = as_tensor(b);
            nb::gil_scoped_release r;
            new (self) ops::IntegerWeight(tb);
          },
          arg("b"))
      .def_prop_ro("tensor", &ops::IntegerWeight::tensor, "The weight's own copy of b.")
      .def("__repr__", [](const ops::IntegerWeight& w) {
        return "IntegerWeight(" + std::string(dtype_name(w.tensor().dtype())) + w.tensor().shape().to_string() +
               " on " + w.tensor().device().to_string() + ")";
      });

  m.def(
      "matmul_integer",
      [](const TensorLike& a, const WeightLike& b, std::optional<TensorLike> a_zero_point,
         std::optional<TensorLike> b_zero_point) {
        Tensor ta = as_tensor(a);
        const ops::IntegerWeight* w = weight_of(b);
        Tensor tb = w ? w->tensor() : on_device_of(as_tensor(TensorLike{b.obj}), ta);
        std::optional<Tensor> za = zero_point_tensor(a_zero_point, ta.dtype(), ta, "matmul_integer");
        std::optional<Tensor> zb = zero_point_tensor(b_zero_point, tb.dtype(), ta, "matmul_integer");
        nb::gil_scoped_release r;
        return w ? ops::matmul_integer(ta, *w, za, zb) : ops::matmul_integer(ta, tb, za, zb);
      },
      arg("a"), arg("b"), arg("a_zero_point").none() = nb::none(), arg("b_zero_point").none() = nb::none(),
      "ONNX MatMulInteger: the int32 product of (a - a_zero_point) and (b - b_zero_point), a [..., m, k] and b "
      "[..., k, n] uint8 or int8 (batch dimensions broadcast), summed exactly, wrapping as int32. A zero point has "
      "its operand's dtype and holds one value, or m (a's, per row) / n (b's, per column) values. b may be an "
      "IntegerWeight (prepared once).");
  m.def(
      "qlinear_matmul",
      [](const TensorLike& a, const TensorLike& a_scale, const TensorLike& a_zero_point, const WeightLike& b,
         const TensorLike& b_scale, const TensorLike& b_zero_point, std::optional<TensorLike> y_scale,
         std::optional<TensorLike> y_zero_point, std::optional<DTypeArg> dtype) {
        Tensor ta = as_tensor(a);
        const ops::IntegerWeight* w = weight_of(b);
        Tensor tb = w ? w->tensor() : on_device_of(as_tensor(TensorLike{b.obj}), ta);
        Tensor sa = scale_tensor(a_scale, ta), sb = scale_tensor(b_scale, ta);
        std::optional<Tensor> za = zero_point_tensor(a_zero_point, ta.dtype(), ta, "qlinear_matmul");
        std::optional<Tensor> zb = zero_point_tensor(b_zero_point, tb.dtype(), ta, "qlinear_matmul");
        if (!za || !zb)
          raise_error(ErrorCode::InvalidArgument, "a_zero_point and b_zero_point are required", "qlinear_matmul",
                      {"Pass 0 for an operand quantized without an offset"});
        std::optional<Tensor> sy;
        if (y_scale && !y_scale->obj.is_none()) sy = scale_tensor(*y_scale, ta);
        const DType q = dtype ? to_dtype(*dtype) : DType::U8;
        std::optional<Tensor> zy = zero_point_tensor(y_zero_point, q, ta, "qlinear_matmul");
        check_output_dtype(zy, dtype, "qlinear_matmul");
        nb::gil_scoped_release r;
        return w ? ops::qlinear_matmul(ta, sa, *za, *w, sb, *zb, sy, zy)
                 : ops::qlinear_matmul(ta, sa, *za, tb, sb, *zb, sy, zy);
      },
      arg("a"), arg("a_scale"), arg("a_zero_point"), arg("b"), arg("b_scale"), arg("b_zero_point"),
      arg("y_scale").none() = nb::none(), arg("y_zero_point").none() = nb::none(), nb::kw_only(),
      arg("dtype").none() = nb::none(),
      "ONNX QLinearMatMul: the int32 sum s of matmul_integer, requantized as saturate(round_half_even(s * "
      "((a_scale * b_scale) / y_scale)) + y_zero_point) in f32, as y_zero_point's dtype (uint8 or int8; for a "
      "zero point given as an int, dtype, default uint8). Scales are f32, finite and > 0: a_scale one value or m, "
      "b_scale one value or n, y_scale one value. Without y_scale and y_zero_point: the f32 product s * (a_scale * "
      "b_scale). b may be an IntegerWeight (prepared once).");

  const auto conv_params = [](const PairArg& stride, const PairArg& padding, const PairArg& dilation,
                              std::int64_t groups) {
    ops::Conv2dParams p;
    std::tie(p.stride_h, p.stride_w) = pair_arg(stride, "stride");
    std::tie(p.pad_h, p.pad_w) = pair_arg(padding, "padding");
    std::tie(p.dil_h, p.dil_w) = pair_arg(dilation, "dilation");
    p.groups = groups;
    return p;
  };
  m.def(
      "conv_integer",
      [conv_params](const TensorLike& x, const TensorLike& w, std::optional<TensorLike> x_zero_point,
                    std::optional<TensorLike> w_zero_point, const PairArg& stride, const PairArg& padding,
                    const PairArg& dilation, std::int64_t groups) {
        Tensor tx = as_tensor(x);
        Tensor tw = on_device_of(as_tensor(w), tx);
        std::optional<Tensor> zx = zero_point_tensor(x_zero_point, tx.dtype(), tx, "conv_integer");
        std::optional<Tensor> zw = zero_point_tensor(w_zero_point, tw.dtype(), tx, "conv_integer");
        const ops::Conv2dParams p = conv_params(stride, padding, dilation, groups);
        nb::gil_scoped_release r;
        return ops::conv_integer(tx, tw, zx, zw, p);
      },
      arg("x"), arg("weight"), arg("x_zero_point").none() = nb::none(), arg("w_zero_point").none() = nb::none(),
      nb::kw_only(), arg("stride") = 1, arg("padding") = 0, arg("dilation") = 1, arg("groups") = 1,
      "ONNX ConvInteger: the int32 convolution of (x - x_zero_point) by (weight - w_zero_point), x [N, C, H, W] and "
      "weight [K, C / groups, R, S] uint8 or int8. x_zero_point is one value (padding holds it); w_zero_point one "
      "value or one per output channel.");
  m.def(
      "qlinear_conv",
      [conv_params](const TensorLike& x, const TensorLike& x_scale, const TensorLike& x_zero_point, const TensorLike& w,
                    const TensorLike& w_scale, const TensorLike& w_zero_point, const TensorLike& y_scale,
                    const TensorLike& y_zero_point, std::optional<TensorLike> bias, const PairArg& stride,
                    const PairArg& padding, const PairArg& dilation, std::int64_t groups,
                    std::optional<DTypeArg> dtype) {
        Tensor tx = as_tensor(x);
        Tensor tw = on_device_of(as_tensor(w), tx);
        std::optional<Tensor> zx = zero_point_tensor(x_zero_point, tx.dtype(), tx, "qlinear_conv");
        std::optional<Tensor> zw = zero_point_tensor(w_zero_point, tw.dtype(), tx, "qlinear_conv");
        std::optional<Tensor> zy =
            zero_point_tensor(y_zero_point, dtype ? to_dtype(*dtype) : DType::U8, tx, "qlinear_conv");
        check_output_dtype(zy, dtype, "qlinear_conv");
        std::optional<Tensor> tb;
        if (bias && !bias->obj.is_none()) tb = on_device_of(int32_bias(as_tensor(*bias), "qlinear_conv"), tx);
        const ops::Conv2dParams p = conv_params(stride, padding, dilation, groups);
        Tensor sx = scale_tensor(x_scale, tx), sw = scale_tensor(w_scale, tx), sy = scale_tensor(y_scale, tx);
        nb::gil_scoped_release r;
        return ops::qlinear_conv(tx, sx, *zx, tw, sw, *zw, sy, *zy, tb, p);
      },
      arg("x"), arg("x_scale"), arg("x_zero_point"), arg("weight"), arg("w_scale"), arg("w_zero_point"), arg("y_scale"),
      arg("y_zero_point"), arg("bias").none() = nb::none(), nb::kw_only(), arg("stride") = 1, arg("padding") = 0,
      arg("dilation") = 1, arg("groups") = 1, arg("dtype").none() = nb::none(),
      "ONNX QLinearConv: the sums of conv_integer plus bias (int32, one per output channel), requantized as "
      "qlinear_matmul: x_scale one value, w_scale one value or one per output channel, y_scale one value; the output "
      "has y_zero_point's dtype (for an int zero point, dtype, default uint8).");
}

}  // namespace torsh::py
