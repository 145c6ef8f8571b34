#pragma once
// Discrete Fourier transforms with NumPy's names, arguments and
// normalisations (numpy.fft): fft / ifft / rfft / irfft / hfft / ihfft along one axis,
// their N-D forms over any axes, and the 2-D shorthands.
//
// Complex values are pairs of reals: a complex tensor of shape [..] is an
// f32 or f64 tensor of shape [.., 2] holding (re, im), as PyTorch's
// view_as_real. Axes and lengths name the complex dimensions (the trailing 2
// is not one of them); rfft and rfftn take real tensors and give complex
// ones, irfft and irfftn the reverse. n (or s) pads with zeros or truncates
// the input along the axis first, as NumPy does.
//
// Any length runs (radices 2, 3, 4, 5, 7, 8, other primes up to 31 directly,
// larger prime factors by Bluestein's algorithm); plans are cached per
// length and dtype. Each 1-D pass is one launch of OpKind::Fft.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "torsh/runtime/tensor.hpp"

namespace torsh::ops::fft {

// backward: the inverse divides by n; ortho: both by sqrt(n); forward: the forward does.
enum class Norm { Backward, Ortho, Forward };
// "backward", "ortho", "forward"; anything else (the empty name too, as
// NumPy) is InvalidArgument naming `op`.
Norm norm_from_name(std::string_view name, const char* op = "fft");

using Axes = std::vector<std::int64_t>;

Tensor fft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = -1,
           Norm norm = Norm::Backward);
Tensor ifft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = -1,
            Norm norm = Norm::Backward);
// Real x -> its n / 2 + 1 non-negative frequencies.
Tensor rfft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = -1,
            Norm norm = Norm::Backward);
// The n / 2 + 1 non-negative frequencies -> the real signal of length n
// (default 2 (m - 1) for m given frequencies).
Tensor irfft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = -1,
             Norm norm = Norm::Backward);

// The same into a tensor the caller holds (NumPy 2's and PyTorch's out=):
// out has the result's shape and x's dtype, on x's device. A contiguous out
// that shares no storage with x is written directly, with no allocation;
// any other view (x itself included) through a temporary.
void fft_out(const Tensor& x, Tensor& out, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = -1,
             Norm norm = Norm::Backward);
void ifft_out(const Tensor& x, Tensor& out, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = -1,
              Norm norm = Norm::Backward);
void rfft_out(const Tensor& x, Tensor& out, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = -1,
              Norm norm = Norm::Backward);
void irfft_out(const Tensor& x, Tensor& out, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = -1,
               Norm norm = Norm::Backward);

// The transforms of a signal with a Hermitian-symmetric spectrum, as
// numpy.fft's: hfft takes the n / 2 + 1 complex values of such a signal's
// first half (default n 2 (m - 1)) and gives its real spectrum of length n,
// irfft(conj(x)) with the norm's direction swapped; ihfft is its inverse,
// conj(rfft(x)) likewise. Each is one Fft pass and one elementwise multiply.
Tensor hfft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = -1,
            Norm norm = Norm::Backward);
Tensor ihfft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = -1,
             Norm norm = Norm::Backward);
void hfft_out(const Tensor& x, Tensor& out, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = -1,
              Norm norm = Norm::Backward);
void ihfft_out(const Tensor& x, Tensor& out, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = -1,
               Norm norm = Norm::Backward);

// Over `axes` (default: the last s.size() dimensions, or all), with lengths s.
Tensor fftn(const Tensor& x, const std::optional<Axes>& s = std::nullopt,
            const std::optional<Axes>& axes = std::nullopt, Norm norm = Norm::Backward);
Tensor ifftn(const Tensor& x, const std::optional<Axes>& s = std::nullopt,
             const std::optional<Axes>& axes = std::nullopt, Norm norm = Norm::Backward);
// rfft along the last of `axes`, then fft along the others.
Tensor rfftn(const Tensor& x, const std::optional<Axes>& s = std::nullopt,
             const std::optional<Axes>& axes = std::nullopt, Norm norm = Norm::Backward);
// ifft along all but the last of `axes`, then irfft along it.
Tensor irfftn(const Tensor& x, const std::optional<Axes>& s = std::nullopt,
              const std::optional<Axes>& axes = std::nullopt, Norm norm = Norm::Backward);

// The N-D forms into out, as fft_out (the passes before the last go through
// temporaries). For the 2-D forms pass axes {-2, -1}.
void fftn_out(const Tensor& x, Tensor& out, const std::optional<Axes>& s = std::nullopt,
              const std::optional<Axes>& axes = std::nullopt, Norm norm = Norm::Backward);
void ifftn_out(const Tensor& x, Tensor& out, const std::optional<Axes>& s = std::nullopt,
               const std::optional<Axes>& axes = std::nullopt, Norm norm = Norm::Backward);
void rfftn_out(const Tensor& x, Tensor& out, const std::optional<Axes>& s = std::nullopt,
               const std::optional<Axes>& axes = std::nullopt, Norm norm = Norm::Backward);
void irfftn_out(const Tensor& x, Tensor& out, const std::optional<Axes>& s = std::nullopt,
                const std::optional<Axes>& axes = std::nullopt, Norm norm = Norm::Backward);

// The N-D forms over axes {-2, -1}.
Tensor fft2(const Tensor& x, const std::optional<Axes>& s = std::nullopt, const Axes& axes = {-2, -1},
            Norm norm = Norm::Backward);
Tensor ifft2(const Tensor& x, const std::optional<Axes>& s = std::nullopt, const Axes& axes = {-2, -1},
             Norm norm = Norm::Backward);
Tensor rfft2(const Tensor& x, const std::optional<Axes>& s = std::nullopt, const Axes& axes = {-2, -1},
             Norm norm = Norm::Backward);
Tensor irfft2(const Tensor& x, const std::optional<Axes>& s = std::nullopt, const Axes& axes = {-2, -1},
              Norm norm = Norm::Backward);

}  // namespace torsh::ops::fft
