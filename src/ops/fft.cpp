// numpy.fft's functions as passes of OpKind::Fft: each 1-D transform resizes
// its axis (truncate or zero-pad), makes the input contiguous and launches one
// pass over [outer, n, inner]; the N-D forms chain passes axis by axis.
#include "torsh/ops/fft.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dispatch.hpp"
#include "torsh/ops/ops.hpp"

namespace torsh::ops::fft {
namespace {

std::string dims_text(const Axes& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The dtype every transform takes, else an error naming the op.
void check_dtype(const char* op, const Tensor& x) {
  if (!x.defined()) throw Error(ErrorCode::InvalidState, "x is undefined", {.op = op});
  if (x.dtype() != DType::F32 && x.dtype() != DType::F64)
    throw Error(ErrorCode::DTypeMismatch,
                std::string("FFTs take f32 or f64 values; x is ") + std::string(dtype_name(x.dtype())),
                detail::context(op, {x}), {"Cast x to f32 or f64 first (x.cast(DType::F32))"});
}

// A complex tensor: a trailing axis of 2 holding (re, im).
void check_complex(const char* op, const Tensor& x) {
  check_dtype(op, x);
  if (x.ndim() < 2 || x.shape()[x.ndim() - 1] != 2)
    throw Error(ErrorCode::ShapeMismatch,
                "x is " + x.shape().to_string() +
                    " but a complex tensor is real with a trailing axis of 2 holding (re, im)",
                detail::context(op, {x}),
                {"For real input use rfft, or append a zero imaginary part (stack x with zeros on a new last axis)"});
}

// x resized to `len` along `axis`: truncated, or zero-padded at the end.
Tensor resize(const Tensor& x, std::size_t axis, std::int64_t len) {
  const std::int64_t have = x.shape()[axis];
  if (have == len) return x;
  if (have > len) return x.slice(static_cast<std::int64_t>(axis), 0, len);
  std::vector<std::int64_t> dims(x.shape().dims().begin(), x.shape().dims().end());
  dims[axis] = len;
  Tensor z = x.backend().zeros(Shape(dims), x.dtype());
  Tensor part = z.slice(static_cast<std::int64_t>(axis), 0, have);
  if (have > 0) copy_into(x, part);
  return z;
}

double scale_of(Norm norm, bool inverse, std::int64_t n) {
  switch (norm) {
    case Norm::Ortho: return 1.0 / std::sqrt(static_cast<double>(n));
    case Norm::Forward: return inverse ? 1.0 : 1.0 / static_cast<double>(n);
    case Norm::Backward: break;
  }
  return inverse ? 1.0 / static_cast<double>(n) : 1.0;
}

// One pass along the (complex or real) dimension `axis` of x's value shape.
// n: the logical transform length (the real length for R2C / C2R).
Tensor pass(const char* op, const Tensor& x_in, std::size_t axis, std::int64_t n, rt::FftKind kind, bool inverse,
            Norm norm) {
  if (n < 1)
    throw Error(ErrorCode::InvalidArgument,
                "invalid number of data points " + std::to_string(n) + " along axis " + std::to_string(axis),
                detail::context(op, {x_in}), {"Give n >= 1 (an axis of length 0 needs an explicit n)"});
  const std::int64_t spectrum = n / 2 + 1;
  const std::int64_t len_x = kind == rt::FftKind::C2R ? spectrum : n;
  const std::int64_t len_out = kind == rt::FftKind::R2C ? spectrum : n;
  const Tensor x = resize(x_in, axis, len_x).contiguous();
  const bool complex_out = kind != rt::FftKind::C2R;
  const std::size_t value_dims = x.ndim() - (kind == rt::FftKind::R2C ? 0 : 1);
  DimVec dims(x.shape().dims().begin(), x.shape().dims().begin() + static_cast<std::ptrdiff_t>(value_dims));
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < value_dims; ++d) (d < axis ? outer : inner) *= d == axis ? 1 : dims[d];
  dims[axis] = len_out;
  if (complex_out) dims.push_back(2);
  Tensor out = detail::empty_like(x, Shape(dims), x.dtype());
  if (out.numel() == 0) return out;
  const double scale = scale_of(norm, inverse, n);
  detail::launch<rt::OpKind::Fft>(op, {x}, {out}, [=](auto& in, auto& o) {
    rt::FftArgs f;
    f.x = in[0];
    f.out = o[0];
    f.kind = kind;
    f.inverse = inverse;
    f.outer = outer, f.n = n, f.inner = inner;
    f.scale = scale;
    return f;
  });
  return out;
}

std::size_t value_ndim(const Tensor& x, bool complex) { return x.ndim() - (complex ? 1 : 0); }

Tensor one_axis(const char* op, const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis, Norm norm,
                rt::FftKind kind, bool inverse) {
  const bool complex_in = kind != rt::FftKind::R2C;
  complex_in ? check_complex(op, x) : check_dtype(op, x);
  if (!complex_in && x.ndim() == 0)
    throw Error(ErrorCode::ShapeMismatch, "x is a scalar; a transform needs at least one axis", detail::context(op, {x}));
  const std::size_t ax = normalize_axis(axis, value_ndim(x, complex_in), op);
  const std::int64_t len = x.shape()[ax];
  const std::int64_t size = n ? *n : (kind == rt::FftKind::C2R ? 2 * (len - 1) : len);
  return pass(op, x, ax, size, kind, inverse, norm);
}

// The axes and lengths of an N-D transform, as NumPy resolves them.
void resolve(const char* op, const Tensor& x, std::size_t nd, const std::optional<Axes>& s,
             const std::optional<Axes>& axes_in, std::vector<std::size_t>& axes, Axes& lens, bool c2r_last) {
  Axes req;
  if (axes_in) req = *axes_in;
  else if (s) {
    if (s->size() > nd)
      throw Error(ErrorCode::InvalidArgument,
                  "s has " + std::to_string(s->size()) + " lengths but x has " + std::to_string(nd) + " dimensions",
                  detail::context(op, {x}));
    for (std::size_t i = nd - s->size(); i < nd; ++i) req.push_back(static_cast<std::int64_t>(i));
  } else
    for (std::size_t i = 0; i < nd; ++i) req.push_back(static_cast<std::int64_t>(i));
  if (s && s->size() != req.size())
    throw Error(ErrorCode::InvalidArgument,
                "s " + dims_text(*s) + " and axes " + dims_text(req) + " must have equal lengths",
                detail::context(op, {x}));
  if (req.empty())
    throw Error(ErrorCode::InvalidArgument, "no axes to transform", detail::context(op, {x}),
                {"Give at least one axis"});
  axes.clear();
  lens.clear();
  for (std::size_t i = 0; i < req.size(); ++i) {
    const std::size_t a = normalize_axis(req[i], nd, op);
    if (std::find(axes.begin(), axes.end(), a) != axes.end())
      throw Error(ErrorCode::InvalidArgument, "axes " + dims_text(req) + " name dimension " + std::to_string(a) + " twice",
                  detail::context(op, {x}), {"Name each axis once"});
    axes.push_back(a);
    const std::int64_t len = x.shape()[a];
    lens.push_back(s ? (*s)[i] : (c2r_last && i + 1 == req.size() ? 2 * (len - 1) : len));
  }
}

Tensor complex_nd(const char* op, const Tensor& x, const std::optional<Axes>& s, const std::optional<Axes>& axes_in,
                  Norm norm, bool inverse) {
  check_complex(op, x);
  std::vector<std::size_t> axes;
  Axes lens;
  resolve(op, x, value_ndim(x, true), s, axes_in, axes, lens, false);
  Tensor y = x;
  for (std::size_t i = axes.size(); i-- > 0;) y = pass(op, y, axes[i], lens[i], rt::FftKind::C2C, inverse, norm);
  return y;
}

}  // namespace

Norm norm_from_name(std::string_view name) {
  if (name.empty() || name == "backward") return Norm::Backward;
  if (name == "ortho") return Norm::Ortho;
  if (name == "forward") return Norm::Forward;
  throw Error(ErrorCode::InvalidArgument, "unknown FFT normalisation \"" + std::string(name) + "\"", {.op = "fft"},
              {"Use \"backward\", \"ortho\" or \"forward\""});
}

Tensor fft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis, Norm norm) {
  return one_axis("fft", x, n, axis, norm, rt::FftKind::C2C, false);
}
Tensor ifft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis, Norm norm) {
  return one_axis("ifft", x, n, axis, norm, rt::FftKind::C2C, true);
}
Tensor rfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis, Norm norm) {
  return one_axis("rfft", x, n, axis, norm, rt::FftKind::R2C, false);
}
Tensor irfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis, Norm norm) {
  return one_axis("irfft", x, n, axis, norm, rt::FftKind::C2R, true);
}

Tensor fftn(const Tensor& x, const std::optional<Axes>& s, const std::optional<Axes>& axes, Norm norm) {
  return complex_nd("fftn", x, s, axes, norm, false);
}
Tensor ifftn(const Tensor& x, const std::optional<Axes>& s, const std::optional<Axes>& axes, Norm norm) {
  return complex_nd("ifftn", x, s, axes, norm, true);
}

Tensor rfftn(const Tensor& x, const std::optional<Axes>& s, const std::optional<Axes>& axes_in, Norm norm) {
  const char* op = "rfftn";
  check_dtype(op, x);
  std::vector<std::size_t> axes;
  Axes lens;
  resolve(op, x, x.ndim(), s, axes_in, axes, lens, false);
  Tensor y = pass(op, x, axes.back(), lens.back(), rt::FftKind::R2C, false, norm);
  for (std::size_t i = axes.size() - 1; i-- > 0;) y = pass(op, y, axes[i], lens[i], rt::FftKind::C2C, false, norm);
  return y;
}

Tensor irfftn(const Tensor& x, const std::optional<Axes>& s, const std::optional<Axes>& axes_in, Norm norm) {
  const char* op = "irfftn";
  check_complex(op, x);
  std::vector<std::size_t> axes;
  Axes lens;
  resolve(op, x, value_ndim(x, true), s, axes_in, axes, lens, true);
  Tensor y = x;
  for (std::size_t i = 0; i + 1 < axes.size(); ++i) y = pass(op, y, axes[i], lens[i], rt::FftKind::C2C, true, norm);
  return pass(op, y, axes.back(), lens.back(), rt::FftKind::C2R, true, norm);
}

Tensor fft2(const Tensor& x, const std::optional<Axes>& s, const Axes& axes, Norm norm) {
  return fftn(x, s, axes, norm);
}
Tensor ifft2(const Tensor& x, const std::optional<Axes>& s, const Axes& axes, Norm norm) {
  return ifftn(x, s, axes, norm);
}
Tensor rfft2(const Tensor& x, const std::optional<Axes>& s, const Axes& axes, Norm norm) {
  return rfftn(x, s, axes, norm);
}
Tensor irfft2(const Tensor& x, const std::optional<Axes>& s, const Axes& axes, Norm norm) {
  return irfftn(x, s, axes, norm);
}

}  // namespace torsh::ops::fft
