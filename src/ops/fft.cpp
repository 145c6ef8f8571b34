// numpy.fft's functions as passes of OpKind::Fft: each 1-D transform resizes
// its axis (truncate or zero-pad), makes the input contiguous and launches one
// pass over [outer, n, inner]; the N-D forms chain passes axis by axis.
#include "torsh/ops/fft.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "../runtime/registry_internal.hpp"
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
    throw Error(
        ErrorCode::ShapeMismatch,
        "x is " + x.shape().to_string() + " but a complex tensor is real with a trailing axis of 2 holding (re, im)",
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

// One pass along the (complex or real) dimension `axis` of x's value shape,
// n the logical transform length (the real length for R2C / C2R): its input
// (resized and contiguous), output shape and loop extents.
struct PassShape {
  const Tensor* x = nullptr;   // x_in itself, or `made` when it had to be resized or made contiguous
  std::optional<Tensor> made;  // engaged only then: a Tensor is a few hundred bytes to construct
  Shape out;
  std::int64_t outer = 1, inner = 1;
};

// Fills p (not returned: p.x may point into it). x_in is only referred to when
// it is the input as it stands, which saves a small transform two reference
// counts per call.
void pass_shape(PassShape& p, const char* op, const Tensor& x_in, std::size_t axis, std::int64_t n, rt::FftKind kind) {
  if (n < 1)
    throw Error(ErrorCode::InvalidArgument,
                "invalid number of data points " + std::to_string(n) + " along axis " + std::to_string(axis),
                detail::context(op, {x_in}), {"Give n >= 1 (an axis of length 0 needs an explicit n)"});
  const std::int64_t spectrum = n / 2 + 1;
  const std::int64_t len_x = kind == rt::FftKind::C2R ? spectrum : n;
  const std::int64_t len_out = kind == rt::FftKind::R2C ? spectrum : n;
  if (x_in.shape()[axis] == len_x && x_in.is_contiguous()) {
    p.x = &x_in;
  } else {
    p.made = resize(x_in, axis, len_x).contiguous();
    p.x = &*p.made;
  }
  const Tensor& x = *p.x;
  const std::size_t value_dims = x.ndim() - (kind == rt::FftKind::R2C ? 0 : 1);
  const Shape& xs = x.shape();
  for (std::size_t d = 0; d < value_dims; ++d) (d < axis ? p.outer : p.inner) *= d == axis ? 1 : xs[d];
  // A complex pass keeps x's (already resized) shape: no new Shape to validate.
  if (kind == rt::FftKind::C2C) {
    p.out = xs;
    return;
  }
  DimVec dims(xs.dims().begin(), xs.dims().begin() + static_cast<std::ptrdiff_t>(value_dims));
  dims[axis] = len_out;
  if (kind != rt::FftKind::C2R) dims.push_back(2);
  p.out = Shape(dims);
}

// The pass of p into out (contiguous, p.out's shape, p.x's dtype and device).
void pass_into(const char* op, const PassShape& p, const Tensor& out, std::int64_t n, rt::FftKind kind, bool inverse,
               Norm norm) {
  if (out.numel() == 0) return;
  const double scale = scale_of(norm, inverse, n);
  const std::int64_t outer = p.outer, inner = p.inner;
  detail::launch<rt::OpKind::Fft>(op, {*p.x}, {out}, [=](auto& in, auto& o) {
    rt::FftArgs f;
    f.x = in[0];
    f.out = o[0];
    f.kind = kind;
    f.inverse = inverse;
    f.outer = outer, f.n = n, f.inner = inner;
    f.scale = scale;
    return f;
  });
}

// Whether two tensors' storage may meet: one buffer, or host memory whose
// byte ranges overlap (two tensors wrapping one NumPy array are two buffers).
bool may_share(const Tensor& a, const Tensor& b) {
  // Both are live (checked by the caller). Two pool blocks meet only in one
  // segment, which settles the common case without the host-address calls below.
  const auto& sa = torsh::detail::Access::state(a.buffer());
  const auto& sb = torsh::detail::Access::state(b.buffer());
  if (sa == sb) return true;
  if (sa->block && sb->block) {
    if (&sa->raw() != &sb->raw()) return false;
    return sa->offset() < sb->offset() + sb->size && sb->offset() < sa->offset() + sa->size;
  }
  const auto* pa = static_cast<const unsigned char*>(a.buffer().host_ptr());
  const auto* pb = static_cast<const unsigned char*>(b.buffer().host_ptr());
  if (!pa || !pb) return false;
  return pa < pb + b.buffer().size() && pb < pa + a.buffer().size();
}

// out= of every form: defined, on x's device, of x's dtype (every transform
// keeps the real dtype). Its shape is checked by the last pass.
void check_out(const char* op, const Tensor& x, const Tensor& out) {
  if (!out.defined()) throw Error(ErrorCode::InvalidState, "out is undefined", {.op = op});
  detail::check_same_device(op, {x, out});
  if (out.dtype() != x.dtype())
    throw Error(
        ErrorCode::DTypeMismatch,
        "out is " + std::string(dtype_name(out.dtype())) + " but the result is " + std::string(dtype_name(x.dtype())),
        detail::context(op, {x, out}), {"Give out x's dtype"});
  for (std::size_t d = 0; d < out.ndim(); ++d)
    if (out.strides()[d] == 0 && out.shape()[d] > 1)
      throw Error(ErrorCode::InvalidArgument,
                  "out is a broadcast view (stride 0 on dimension " + std::to_string(d) + " of " +
                      out.shape().to_string() + "); broadcast views are read-only",
                  detail::context(op, {x, out}), {"Write into a contiguous tensor"});
}

// One pass into a new tensor (returned), or into *out (checked by
// check_out; an undefined tensor is returned, so the out= path copies no
// handles). The kernel writes a contiguous output that shares no storage
// with its input; any other out (a strided view, the input itself, a view
// of its buffer) is written through a temporary, so out= never changes the
// result.
// pass_shape, with a size the memory or a Shape refuses (n = 2^40, say)
// reported as this op's error rather than the allocator's.
void pass_shape_named(PassShape& p, const char* op, const Tensor& x_in, std::size_t axis, std::int64_t n,
                      rt::FftKind kind) {
  try {
    pass_shape(p, op, x_in, axis, n, kind);
  } catch (const Error& e) {
    const std::string& from = e.context().op;
    if (from != "allocate" && from != "shape" && from != "empty") throw;
    throw Error(
        e.code(),
        "a transform of length " + std::to_string(n) + " along axis " + std::to_string(axis) + ": " + e.message(),
        detail::context(op, {x_in}), {"Give a smaller n, or split the transform"});
  }
}

Tensor pass(const char* op, const Tensor& x_in, std::size_t axis, std::int64_t n, rt::FftKind kind, bool inverse,
            Norm norm, Tensor* out = nullptr) {
  PassShape p;
  pass_shape_named(p, op, x_in, axis, n, kind);
  if (out && out->shape() != p.out)
    throw Error(ErrorCode::ShapeMismatch,
                "out is " + out->shape().to_string() + " but the result is " + p.out.to_string(),
                detail::context(op, {x_in, *out}), {"Allocate out as " + p.out.to_string()});
  if (out && out->is_contiguous() && !may_share(*out, *p.x)) {
    pass_into(op, p, *out, n, kind, inverse, norm);
    return {};
  }
  Tensor y = detail::empty_like(*p.x, p.out, p.x->dtype());
  pass_into(op, p, y, n, kind, inverse, norm);
  if (!out) return y;
  copy_into(y, *out);
  return {};
}

std::size_t value_ndim(const Tensor& x, bool complex) { return x.ndim() - (complex ? 1 : 0); }

// A 1-D transform's axis and length, as NumPy resolves them; x checked.
struct OneAxis {
  std::size_t axis;
  std::int64_t n;
};

OneAxis resolve_one(const char* op, const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
                    rt::FftKind kind) {
  const bool complex_in = kind != rt::FftKind::R2C;
  complex_in ? check_complex(op, x) : check_dtype(op, x);
  if (!complex_in && x.ndim() == 0)
    throw Error(ErrorCode::ShapeMismatch, "x is a scalar; a transform needs at least one axis",
                detail::context(op, {x}));
  const std::size_t ax = normalize_axis(axis, value_ndim(x, complex_in), op);
  const std::int64_t len = x.shape()[ax];
  return {ax, n ? *n : (kind == rt::FftKind::C2R ? 2 * (len - 1) : len)};
}

// A 1-D form: the result, or (written into *out) an undefined tensor, as pass().
Tensor one_axis(const char* op, const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis, Norm norm,
                rt::FftKind kind, bool inverse, Tensor* out = nullptr) {
  const OneAxis a = resolve_one(op, x, n, axis, kind);
  if (out) check_out(op, x, *out);
  return pass(op, x, a.axis, a.n, kind, inverse, norm, out);
}

// The axes and lengths of an N-D transform, as NumPy resolves them.
void resolve(const char* op, const Tensor& x, std::size_t nd, const std::optional<Axes>& s,
             const std::optional<Axes>& axes_in, std::vector<std::size_t>& axes, Axes& lens, bool c2r_last) {
  Axes req;
  if (axes_in)
    req = *axes_in;
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
      throw Error(ErrorCode::InvalidArgument,
                  "axes " + dims_text(req) + " name dimension " + std::to_string(a) + " twice",
                  detail::context(op, {x}), {"Name each axis once"});
    axes.push_back(a);
    const std::int64_t len = x.shape()[a];
    lens.push_back(s ? (*s)[i] : (c2r_last && i + 1 == req.size() ? 2 * (len - 1) : len));
    // Every length checked before any pass runs (the passes go last axis
    // first, and would report an intermediate shape or first compute the others).
    if (lens.back() < 1)
      throw Error(ErrorCode::InvalidArgument,
                  "invalid number of data points " + std::to_string(lens.back()) + " along axis " + std::to_string(a),
                  detail::context(op, {x}),
                  {s ? "Give lengths >= 1 in s" : "Give s with lengths >= 1 (an axis of length 0 needs one)"});
  }
}

// The axes and lengths of an N-D form, with x (and out when given) checked.
struct NdAxes {
  std::vector<std::size_t> axes;
  Axes lens;
};

NdAxes nd_axes(const char* op, const Tensor& x, bool complex_in, const std::optional<Axes>& s,
               const std::optional<Axes>& axes_in, bool c2r_last, const Tensor* out) {
  complex_in ? check_complex(op, x) : check_dtype(op, x);
  if (out) check_out(op, x, *out);
  NdAxes a;
  resolve(op, x, value_ndim(x, complex_in), s, axes_in, a.axes, a.lens, c2r_last);
  return a;
}

// The N-D forms: passes axis by axis, the last one into out when given
// (then they return an undefined tensor, as pass()).
Tensor complex_nd(const char* op, const Tensor& x, const std::optional<Axes>& s, const std::optional<Axes>& axes_in,
                  Norm norm, bool inverse, Tensor* out = nullptr) {
  const NdAxes a = nd_axes(op, x, true, s, axes_in, false, out);
  Tensor y = x;
  for (std::size_t i = a.axes.size(); i-- > 0;)
    y = pass(op, y, a.axes[i], a.lens[i], rt::FftKind::C2C, inverse, norm, i == 0 ? out : nullptr);
  return y;
}

// rfft along the last axis, then fft along the others.
Tensor real_nd(const char* op, const Tensor& x, const std::optional<Axes>& s, const std::optional<Axes>& axes_in,
               Norm norm, Tensor* out = nullptr) {
  const NdAxes a = nd_axes(op, x, false, s, axes_in, false, out);
  const std::size_t last = a.axes.size() - 1;
  Tensor y = pass(op, x, a.axes[last], a.lens[last], rt::FftKind::R2C, false, norm, last == 0 ? out : nullptr);
  for (std::size_t i = last; i-- > 0;)
    y = pass(op, y, a.axes[i], a.lens[i], rt::FftKind::C2C, false, norm, i == 0 ? out : nullptr);
  return y;
}

// ifft along all but the last axis, then irfft along it.
Tensor inverse_real_nd(const char* op, const Tensor& x, const std::optional<Axes>& s,
                       const std::optional<Axes>& axes_in, Norm norm, Tensor* out = nullptr) {
  const NdAxes a = nd_axes(op, x, true, s, axes_in, true, out);
  Tensor y = x;
  for (std::size_t i = 0; i + 1 < a.axes.size(); ++i)
    y = pass(op, y, a.axes[i], a.lens[i], rt::FftKind::C2C, true, norm);
  return pass(op, y, a.axes.back(), a.lens.back(), rt::FftKind::C2R, true, norm, out);
}

// numpy.fft's hfft and ihfft run the real transforms the other way round:
// backward and forward trade places, ortho stays.
Norm swapped(Norm norm) {
  return norm == Norm::Backward ? Norm::Forward : norm == Norm::Forward ? Norm::Backward : Norm::Ortho;
}

// (1, -1) on x's device in x's dtype: a complex tensor times it is its conjugate.
Tensor conj_signs(const Tensor& x) {
  Backend b = x.backend();
  if (x.dtype() == DType::F64) {
    const double v[2] = {1.0, -1.0};
    return b.from_host(v, Shape{2}, DType::F64);
  }
  const float v[2] = {1.0f, -1.0f};
  return b.from_host(v, Shape{2}, DType::F32);
}

// hfft: irfft of conj(x) with the norm swapped; into *out when given.
Tensor hermitian(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis, Norm norm, Tensor* out = nullptr) {
  check_complex("hfft", x);
  const Tensor conj = ops::mul(x, conj_signs(x));
  return one_axis("hfft", conj, n, axis, swapped(norm), rt::FftKind::C2R, true, out);
}

// ihfft: conj(rfft(x)) with the norm swapped, conjugated where it was written.
Tensor inverse_hermitian(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis, Norm norm,
                         Tensor* out = nullptr) {
  Tensor y = one_axis("ihfft", x, n, axis, swapped(norm), rt::FftKind::R2C, false, out);
  Tensor& dst = out ? *out : y;
  binary_out(rt::BinaryOp::Mul, dst, conj_signs(dst), dst);
  return y;
}

}  // namespace

Norm norm_from_name(std::string_view name, const char* op) {
  if (name == "backward") return Norm::Backward;
  if (name == "ortho") return Norm::Ortho;
  if (name == "forward") return Norm::Forward;
  throw Error(ErrorCode::InvalidArgument, "unknown FFT normalisation \"" + std::string(name) + "\"", {.op = op},
              {"Use \"backward\", \"ortho\" or \"forward\" (or no norm, which is \"backward\")"});
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

void fft_out(const Tensor& x, Tensor& out, std::optional<std::int64_t> n, std::int64_t axis, Norm norm) {
  one_axis("fft", x, n, axis, norm, rt::FftKind::C2C, false, &out);
}
void ifft_out(const Tensor& x, Tensor& out, std::optional<std::int64_t> n, std::int64_t axis, Norm norm) {
  one_axis("ifft", x, n, axis, norm, rt::FftKind::C2C, true, &out);
}
void rfft_out(const Tensor& x, Tensor& out, std::optional<std::int64_t> n, std::int64_t axis, Norm norm) {
  one_axis("rfft", x, n, axis, norm, rt::FftKind::R2C, false, &out);
}
void irfft_out(const Tensor& x, Tensor& out, std::optional<std::int64_t> n, std::int64_t axis, Norm norm) {
  one_axis("irfft", x, n, axis, norm, rt::FftKind::C2R, true, &out);
}

Tensor hfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis, Norm norm) {
  return hermitian(x, n, axis, norm);
}
Tensor ihfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis, Norm norm) {
  return inverse_hermitian(x, n, axis, norm);
}
void hfft_out(const Tensor& x, Tensor& out, std::optional<std::int64_t> n, std::int64_t axis, Norm norm) {
  hermitian(x, n, axis, norm, &out);
}
void ihfft_out(const Tensor& x, Tensor& out, std::optional<std::int64_t> n, std::int64_t axis, Norm norm) {
  inverse_hermitian(x, n, axis, norm, &out);
}

Tensor fftn(const Tensor& x, const std::optional<Axes>& s, const std::optional<Axes>& axes, Norm norm) {
  return complex_nd("fftn", x, s, axes, norm, false);
}
Tensor ifftn(const Tensor& x, const std::optional<Axes>& s, const std::optional<Axes>& axes, Norm norm) {
  return complex_nd("ifftn", x, s, axes, norm, true);
}

Tensor rfftn(const Tensor& x, const std::optional<Axes>& s, const std::optional<Axes>& axes, Norm norm) {
  return real_nd("rfftn", x, s, axes, norm);
}
Tensor irfftn(const Tensor& x, const std::optional<Axes>& s, const std::optional<Axes>& axes, Norm norm) {
  return inverse_real_nd("irfftn", x, s, axes, norm);
}

void fftn_out(const Tensor& x, Tensor& out, const std::optional<Axes>& s, const std::optional<Axes>& axes, Norm norm) {
  complex_nd("fftn", x, s, axes, norm, false, &out);
}
void ifftn_out(const Tensor& x, Tensor& out, const std::optional<Axes>& s, const std::optional<Axes>& axes, Norm norm) {
  complex_nd("ifftn", x, s, axes, norm, true, &out);
}
void rfftn_out(const Tensor& x, Tensor& out, const std::optional<Axes>& s, const std::optional<Axes>& axes, Norm norm) {
  real_nd("rfftn", x, s, axes, norm, &out);
}
void irfftn_out(const Tensor& x, Tensor& out, const std::optional<Axes>& s, const std::optional<Axes>& axes,
                Norm norm) {
  inverse_real_nd("irfftn", x, s, axes, norm, &out);
}

Tensor fft2(const Tensor& x, const std::optional<Axes>& s, const Axes& axes, Norm norm) {
  return complex_nd("fft2", x, s, axes, norm, false);
}
Tensor ifft2(const Tensor& x, const std::optional<Axes>& s, const Axes& axes, Norm norm) {
  return complex_nd("ifft2", x, s, axes, norm, true);
}
Tensor rfft2(const Tensor& x, const std::optional<Axes>& s, const Axes& axes, Norm norm) {
  return real_nd("rfft2", x, s, axes, norm);
}
Tensor irfft2(const Tensor& x, const std::optional<Axes>& s, const Axes& axes, Norm norm) {
  return inverse_real_nd("irfft2", x, s, axes, norm);
}

}  // namespace torsh::ops::fft
