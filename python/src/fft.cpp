// torsh_backend._core.fft: numpy.fft's transforms over torsh tensors, with
// NumPy's names, arguments and norms. Complex values are f32 / f64 tensors with
// a trailing axis of 2 holding (re, im) (torch.view_as_real's layout), in and
// out. torsh_backend/fft.py (what `tb.fft` is) wraps these so that NumPy
// complex arrays go in and come back as NumPy complex arrays.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"

namespace torsh::py {
namespace {

using nb::arg;
namespace fft = ops::fft;

using OptInt = std::optional<std::int64_t>;
using OptAxes = std::optional<fft::Axes>;
using OptName = std::optional<std::string>;

fft::Norm norm_arg(const OptName& name, const char* op) {
  return name ? fft::norm_from_name(*name, op) : fft::Norm::Backward;
}

using OneAxis = Tensor (*)(const Tensor&, OptInt, std::int64_t, fft::Norm);
using OneAxisOut = void (*)(const Tensor&, Tensor&, OptInt, std::int64_t, fft::Norm);
using ManyAxes = Tensor (*)(const Tensor&, const OptAxes&, const OptAxes&, fft::Norm);
using ManyAxesOut = void (*)(const Tensor&, Tensor&, const OptAxes&, const OptAxes&, fft::Norm);

// A transform into a new tensor, or into out: a Tensor or a writable array
// of the result's shape and x's dtype, written in place (an array is shared,
// never copied). With out the caller's own object is returned, as NumPy
// returns out.
template <class New, class Into>
nb::object new_or_into(const char* name, const std::optional<TensorLike>& out, New make, Into into) {
  if (out && !out->obj.is_none()) {
    Tensor o = as_inplace_tensor(*out, name, "out");
    {
      nb::gil_scoped_release r;
      into(o);
    }
    return nb::borrow(out->obj);
  }
  Tensor y;
  {
    nb::gil_scoped_release r;
    y = make();
  }
  return nb::cast(std::move(y));
}

void def_one_axis(nb::module_& m, const char* name, OneAxis f, OneAxisOut f_out, const char* doc) {
  m.def(
      name,
      [name, f, f_out](const TensorLike& x, OptInt n, std::int64_t axis, const OptName& norm,
                       const std::optional<TensorLike>& out) -> nb::object {
        const Tensor t = as_tensor(x);
        const fft::Norm nm = norm_arg(norm, name);
        return new_or_into(
            name, out, [&] { return f(t, n, axis, nm); }, [&](Tensor& o) { f_out(t, o, n, axis, nm); });
      },
      arg("x"), arg("n").none() = nb::none(), arg("axis") = -1, arg("norm").none() = nb::none(),
      arg("out").none() = nb::none(), doc);
}

// fftn and its kin; `axes_default` is None for the N-D forms, (-2, -1) for the 2-D ones
// (None there also means every axis, as in NumPy).
void def_many_axes(nb::module_& m, const char* name, ManyAxes f, ManyAxesOut f_out, nb::object axes_default,
                   const char* doc) {
  m.def(
      name,
      [name, f, f_out](const TensorLike& x, const OptAxes& s, const OptAxes& axes, const OptName& norm,
                       const std::optional<TensorLike>& out) -> nb::object {
        const Tensor t = as_tensor(x);
        const fft::Norm nm = norm_arg(norm, name);
        return new_or_into(
            name, out, [&] { return f(t, s, axes, nm); }, [&](Tensor& o) { f_out(t, o, s, axes, nm); });
      },
      arg("x"), arg("s").none() = nb::none(), arg("axes").none() = axes_default, arg("norm").none() = nb::none(),
      arg("out").none() = nb::none(), doc);
}

}  // namespace

void bind_fft(nb::module_& parent) {
  nb::module_ m = parent.def_submodule(
      "fft",
      "numpy.fft's transforms over torsh tensors: complex values are f32 / f64 tensors with a trailing axis of 2 "
      "holding (re, im), as torch.view_as_real. norm is None / 'backward', 'ortho' or 'forward'. "
      "torsh_backend.fft wraps these for NumPy complex arrays.");
  def_one_axis(m, "fft", fft::fft, fft::fft_out,
               "The 1-D DFT of complex x ([..., 2]) along `axis`, zero-padded or truncated to n first. out: a Tensor "
               "(or writable array) of the result's shape and x's dtype, written and returned.");
  def_one_axis(m, "ifft", fft::ifft, fft::ifft_out, "The inverse 1-D DFT of complex x ([..., 2]) along `axis`.");
  def_one_axis(m, "rfft", fft::rfft, fft::rfft_out,
               "The 1-D DFT of real x along `axis`: its n // 2 + 1 non-negative frequencies, complex ([..., 2]).");
  def_one_axis(m, "irfft", fft::irfft, fft::irfft_out,
               "The inverse of rfft: complex x ([..., 2]) of non-negative frequencies -> the real signal of length n "
               "(default 2 * (m - 1) for m frequencies).");
  def_one_axis(m, "hfft", fft::hfft, fft::hfft_out,
               "The real spectrum (length n, default 2 * (m - 1)) of a signal with Hermitian symmetry, from the m "
               "complex values ([..., 2]) of its first half: irfft(conj(x)) with the norm's direction swapped.");
  def_one_axis(m, "ihfft", fft::ihfft, fft::ihfft_out,
               "The inverse of hfft: real x -> the n // 2 + 1 complex values ([..., 2]) of the Hermitian signal, "
               "conj(rfft(x)) with the norm's direction swapped.");
  const nb::object all = nb::none(), last_two = nb::make_tuple(-2, -1);
  def_many_axes(m, "fftn", fft::fftn, fft::fftn_out, all,
                "The N-D DFT of complex x ([..., 2]) over `axes` (default: the last len(s) axes, or all) with "
                "lengths s.");
  def_many_axes(m, "ifftn", fft::ifftn, fft::ifftn_out, all, "The inverse N-D DFT of complex x ([..., 2]).");
  def_many_axes(m, "rfftn", fft::rfftn, fft::rfftn_out, all,
                "The N-D DFT of real x: rfft along the last of `axes`, then fft along the others.");
  def_many_axes(m, "irfftn", fft::irfftn, fft::irfftn_out, all,
                "The inverse of rfftn: ifft along all but the last of `axes`, then irfft along it (real result).");
  def_many_axes(m, "fft2", fft::fftn, fft::fftn_out, last_two, "fftn over axes (-2, -1) by default.");
  def_many_axes(m, "ifft2", fft::ifftn, fft::ifftn_out, last_two, "ifftn over axes (-2, -1) by default.");
  def_many_axes(m, "rfft2", fft::rfftn, fft::rfftn_out, last_two, "rfftn over axes (-2, -1) by default.");
  def_many_axes(m, "irfft2", fft::irfftn, fft::irfftn_out, last_two, "irfftn over axes (-2, -1) by default.");
}

}  // namespace torsh::py
