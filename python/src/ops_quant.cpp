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

Tensor on_device_of(Tensor t, const Tensor& x) {
  if (t.device() == x.device()) return t;
  Backend b = x.backend();
  return t.to(b);
}

Tensor scale_tensor(const TensorLike& s, const Tensor& x) {
  Tensor t = as_tensor(s);
  if (is_floating(t.dtype()) && t.dtype() != DType::F32) t = t.cast(DType::F32);
  return on_device_of(t, x);
}

// A zero point written as Python ints (an int, a list or a tuple), as
// opposed to a tensor or an array, which carries its own dtype.
bool ints_given(const TensorLike& zp) {
  nb::handle h = zp.obj;
  return PyLong_Check(h.ptr()) || nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h);
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

}  // namespace

void bind_ops_quant(nb::module_& m) {
  m.def("quantize_linear", [](const TensorLike& x, const TensorLike& scale, std::optional<TensorLike> zero_point,
                              int axis, std::optional<DTypeArg> dtype) {
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
      }, arg("x"), arg("scale"), arg("zero_point").none() = nb::none(), nb::kw_only(), arg("axis") = 1,
      arg("dtype").none() = nb::none(),
      "ONNX QuantizeLinear: saturate(round_half_even(x / scale) + zero_point) as uint8 or int8. scale (f32) and "
      "zero_point hold one value (per tensor) or x.shape[axis] values (per channel along axis, ONNX's default 1). "
      "The quantized dtype is the zero point's when it is a tensor or array, else dtype (default uint8); a zero "
      "point given as ints must fit it. +-inf saturate; NaN gives the zero point. Scales must be finite and > 0.");
  m.def("dequantize_linear", [](const TensorLike& x, const TensorLike& scale, std::optional<TensorLike> zero_point,
                                int axis, const DTypeArg& dtype) {
        Tensor tx = as_tensor(x);
        Tensor ts = scale_tensor(scale, tx);
        std::optional<Tensor> tz = zero_point_tensor(zero_point, tx.dtype() == DType::I8 ? DType::I8 : DType::U8, tx,
                                                     "dequantize_linear");
        const DType out = to_dtype(dtype);
        nb::gil_scoped_release r;
        return ops::dequantize_linear(tx, ts, tz, axis, out);
      }, arg("x"), arg("scale"), arg("zero_point").none() = nb::none(), nb::kw_only(), arg("axis") = 1,
      arg("dtype") = "float32",
      "ONNX DequantizeLinear: (x - zero_point) * scale, computed in f32, as dtype (float32, float16 or bfloat16). "
      "x is uint8 or int8; zero_point, when given, has x's dtype and scale's shape.");
}

}  // namespace torsh::py
