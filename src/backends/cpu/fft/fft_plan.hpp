#pragma once
// The CPU FFT engine: mixed-radix Stockham (autosort, so no bit reversal) on
// split real / imaginary arrays, radices 8, 4, 2, 3, 5, 7 with their own
// butterflies and any other prime up to kMaxGenericRadix by a direct DFT;
// lengths with a larger prime factor go through Bluestein's chirp-z transform
// on a power-of-two plan. A plan holds the factorisation and every twiddle
// (computed in double, rounded once), is immutable once built and shared
// through a per-(length, dtype) cache.
#include <cstdint>
#include <memory>
#include <vector>

namespace torsh::cpu::fft {

inline constexpr int kMaxGenericRadix = 31;

template <class T>
struct Plan {
  std::int64_t n = 0;
  // Stockham stages in order: radix r, sub-length L (the stage splits
  // sequences of length L, stride s = n / L, into r of length L / r).
  struct Stage {
    int radix = 0;
    std::int64_t len = 0;
    std::int64_t stride = 0;
    // w_L^(p * k) for k in [1, radix), p in [0, L / radix): k-major, so the
    // first stage (stride 1, p innermost) reads them contiguously.
    std::vector<T> tw_re, tw_im;
    // cos / sin(2 pi j k / radix) for the odd butterflies, [j][k].
    std::vector<T> root_cos, root_sin;
  };
  std::vector<Stage> stages;

  // Bluestein: the chirp exp(-i pi k^2 / n) (n values), the power-of-two
  // plan of length m >= 2n - 1, and the transform of the conjugate chirp
  // divided by m (m values).
  bool bluestein = false;
  std::vector<T> chirp_re, chirp_im, kernel_re, kernel_im;
  std::shared_ptr<const Plan<T>> sub;

  // exp(-2 pi i k / 2n) for k in [0, n]: the post-twiddles that turn this
  // plan's transform of a real sequence of length 2n, read as n complex
  // pairs, into that sequence's spectrum.
  std::vector<T> half_re, half_im;

  // Scratch (complex values) execute() needs besides the data's own buffers.
  std::int64_t scratch() const { return bluestein ? sub->n + sub->scratch() : n; }
};

// The plan for length n >= 1, cached (thread-safe).
template <class T>
std::shared_ptr<const Plan<T>> plan_for(std::int64_t n);

// The forward DFT (sign -1, unnormalised) of re/im (n values each), in place.
// work holds 2 * plan.scratch() values. For the inverse, swap re and im: the
// DFT of the swapped input, swapped back, is the unnormalised inverse.
// threads > 1 splits each stage over the CPU pool (one long transform).
template <class T>
void forward(const Plan<T>& plan, T* re, T* im, T* work, int threads);

}  // namespace torsh::cpu::fft
