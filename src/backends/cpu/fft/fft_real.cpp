// The passes that make a real transform of even length 2h from a complex
// one of length h (fft.cpp's R2C and C2R lines). Compiled per x86 level
// with restrict-qualified pointers and the pair step known at compile time,
// so each is one vector loop whose reversed reads are permutes: in the
// baseline build the R2C pass takes a third of a 1024-point rfft, more than
// the complex transform before it.
#include <algorithm>
#include <cstdint>

#include "../simd/simd.hpp"
#include "fft_butterfly.hpp"
#include "fft_plan.hpp"

namespace torsh::cpu::fft {
namespace {

// Step Os between values (0: the runtime os).
// Twiddle k is hr[k - k0], hi[k - k0] (the table from k0 on).
template <int Os, class T>
TORSH_INLINE void r2c_body(const T* __restrict re, const T* __restrict im, const T* __restrict hr,
                           const T* __restrict hi, T* __restrict out, std::int64_t os_rt, std::int64_t h,
                           std::int64_t k0, std::int64_t k1, T half) {
  const std::int64_t os = Os ? Os : os_rt;
  const T* rr = re + h;
  const T* ri = im + h;
  for (std::int64_t k = k0; k < k1; ++k) {
    const T zr = re[k], zi = im[k], cr = rr[-k], ci = -ri[-k];
    const T er = zr + cr, ei = zi + ci;   // 2 E
    const T or_ = zi - ci, oi = cr - zr;  // 2 O = -i (Z - C)
    const T wr = hr[k - k0], wi = hi[k - k0];
    out[k * os] = (er + or_ * wr - oi * wi) * half;
    out[k * os + 1] = (ei + or_ * wi + oi * wr) * half;
  }
}

template <int Xs, class T>
TORSH_INLINE void c2r_body(const T* __restrict x, std::int64_t xs_rt, const T* __restrict hr, const T* __restrict hi,
                           T* __restrict re, T* __restrict im, std::int64_t h, std::int64_t k0, std::int64_t k1) {
  const std::int64_t xs = Xs ? Xs : xs_rt;
  const T* xh = x + h * xs;
  for (std::int64_t k = k0; k < k1; ++k) {
    const T xr = x[k * xs], xi = x[k * xs + 1], cr = xh[-k * xs], ci = -xh[-k * xs + 1];
    const T er = xr + cr, ei = xi + ci;  // 2 E
    const T dr = xr - cr, di = xi - ci;  // X - conj X_(h-k)
    const T wr = hr[k - k0], wi = -hi[k - k0];
    const T or_ = dr * wr - di * wi, oi = dr * wi + di * wr;  // 2 O
    re[k] = T(0.5) * (er - oi), im[k] = T(0.5) * (ei + or_);
  }
}

template <int Os, class T>
TORSH_INLINE void interleave_body(const T* __restrict re, const T* __restrict im, T* __restrict out, std::int64_t os_rt,
                                  std::int64_t t0, std::int64_t t1, T s) {
  const std::int64_t os = Os ? Os : os_rt;
  for (std::int64_t t = t0; t < t1; ++t) out[2 * t * os] = re[t] * s, out[(2 * t + 1) * os] = im[t] * s;
}

// Per dtype: the passes compiled per x86 level (target_clones functions
// cannot be templates), and one overload each that picks the constant-step
// form when the step is the contiguous one.
#define TORSH_FFT_REAL_PASSES(T)                                                                                      \
  TORSH_SIMD_CLONES void r2c_pairs_##T(const T* re, const T* im, const T* hr, const T* hi, T* out, std::int64_t h,    \
                                       std::int64_t k0, std::int64_t k1, T half) {                                    \
    r2c_body<2>(re, im, hr, hi, out, 2, h, k0, k1, half);                                                             \
  }                                                                                                                   \
  TORSH_SIMD_CLONES void r2c_strided_##T(const T* re, const T* im, const T* hr, const T* hi, T* out, std::int64_t os, \
                                         std::int64_t h, std::int64_t k0, std::int64_t k1, T half) {                  \
    r2c_body<0>(re, im, hr, hi, out, os, h, k0, k1, half);                                                            \
  }                                                                                                                   \
  TORSH_SIMD_CLONES void c2r_pairs_##T(const T* x, const T* hr, const T* hi, T* re, T* im, std::int64_t h,            \
                                       std::int64_t k0, std::int64_t k1) {                                            \
    c2r_body<2>(x, 2, hr, hi, re, im, h, k0, k1);                                                                     \
  }                                                                                                                   \
  TORSH_SIMD_CLONES void c2r_strided_##T(const T* x, std::int64_t xs, const T* hr, const T* hi, T* re, T* im,         \
                                         std::int64_t h, std::int64_t k0, std::int64_t k1) {                          \
    c2r_body<0>(x, xs, hr, hi, re, im, h, k0, k1);                                                                    \
  }                                                                                                                   \
  TORSH_SIMD_CLONES void interleave_unit_##T(const T* re, const T* im, T* out, std::int64_t t0, std::int64_t t1,      \
                                             T s) {                                                                   \
    interleave_body<1>(re, im, out, 1, t0, t1, s);                                                                    \
  }                                                                                                                   \
  TORSH_SIMD_CLONES void interleave_strided_##T(const T* re, const T* im, T* out, std::int64_t os, std::int64_t t0,   \
                                                std::int64_t t1, T s) {                                               \
    interleave_body<0>(re, im, out, os, t0, t1, s);                                                                   \
  }                                                                                                                   \
  void r2c(const T* re, const T* im, const T* hr, const T* hi, T* out, std::int64_t os, std::int64_t h,               \
           std::int64_t k0, std::int64_t k1, T half) {                                                                \
    os == 2 ? r2c_pairs_##T(re, im, hr, hi, out, h, k0, k1, half)                                                     \
            : r2c_strided_##T(re, im, hr, hi, out, os, h, k0, k1, half);                                              \
  }                                                                                                                   \
  void c2r(const T* x, std::int64_t xs, const T* hr, const T* hi, T* re, T* im, std::int64_t h, std::int64_t k0,      \
           std::int64_t k1) {                                                                                         \
    xs == 2 ? c2r_pairs_##T(x, hr, hi, re, im, h, k0, k1) : c2r_strided_##T(x, xs, hr, hi, re, im, h, k0, k1);        \
  }                                                                                                                   \
  void interleave(const T* re, const T* im, T* out, std::int64_t os, std::int64_t t0, std::int64_t t1, T s) {         \
    os == 1 ? interleave_unit_##T(re, im, out, t0, t1, s) : interleave_strided_##T(re, im, out, os, t0, t1, s);       \
  }
TORSH_FFT_REAL_PASSES(float)
TORSH_FFT_REAL_PASSES(double)
#undef TORSH_FFT_REAL_PASSES

// w^k for k in [0, count) of a block: fine w^j times the block's coarse w.
template <class T>
TORSH_INLINE void twiddle_block_body(const T* __restrict fr, const T* __restrict fi, T cr, T ci, std::int64_t count,
                                     T* __restrict wr, T* __restrict wi) {
  for (std::int64_t j = 0; j < count; ++j) wr[j] = fr[j] * cr - fi[j] * ci, wi[j] = fr[j] * ci + fi[j] * cr;
}
TORSH_SIMD_CLONES void twiddle_block(const float* fr, const float* fi, float cr, float ci, std::int64_t count,
                                     float* wr, float* wi) {
  twiddle_block_body(fr, fi, cr, ci, count, wr, wi);
}
TORSH_SIMD_CLONES void twiddle_block(const double* fr, const double* fi, double cr, double ci, std::int64_t count,
                                     double* wr, double* wi) {
  twiddle_block_body(fr, fi, cr, ci, count, wr, wi);
}

// fn(kb, ke, wr, wi) over [k0, k1) in pieces, the twiddles of piece [kb, ke)
// from wr / wi on: the plan's table, or blocks made from fine x coarse.
template <class T, class F>
void with_twiddles(const Plan<T>& plan, std::int64_t k0, std::int64_t k1, F&& fn) {
  const auto& hw = plan.half();
  if (!hw.re.empty()) return fn(k0, k1, hw.re.data() + k0, hw.im.data() + k0);
  constexpr std::int64_t kFine = Plan<T>::kHalfFine;
  alignas(64) T wr[kFine], wi[kFine];
  for (std::int64_t kb = k0; kb < k1;) {
    const std::int64_t block = kb / kFine, j0 = kb - block * kFine, ke = std::min(k1, (block + 1) * kFine);
    twiddle_block(hw.fine_re.data() + j0, hw.fine_im.data() + j0, hw.coarse_re[block], hw.coarse_im[block], ke - kb, wr,
                  wi);
    fn(kb, ke, wr, wi);
    kb = ke;
  }
}

}  // namespace

template <class T>
void untangle_r2c(const Plan<T>& plan, const T* re, const T* im, T* out, std::int64_t os, std::int64_t k0,
                  std::int64_t k1, T half) {
  with_twiddles(plan, k0, k1, [&](std::int64_t kb, std::int64_t ke, const T* wr, const T* wi) {
    r2c(re, im, wr, wi, out, os, plan.n, kb, ke, half);
  });
}
template <class T>
void untangle_c2r(const Plan<T>& plan, const T* x, std::int64_t xs, T* re, T* im, std::int64_t k0, std::int64_t k1) {
  with_twiddles(plan, k0, k1, [&](std::int64_t kb, std::int64_t ke, const T* wr, const T* wi) {
    c2r(x, xs, wr, wi, re, im, plan.n, kb, ke);
  });
}
template <class T>
void interleave_scaled(const T* re, const T* im, T* out, std::int64_t os, std::int64_t t0, std::int64_t t1, T scale) {
  interleave(re, im, out, os, t0, t1, scale);
}

#define TORSH_FFT_REAL_INSTANTIATE(T)                                                                                 \
  template void untangle_r2c<T>(const Plan<T>&, const T*, const T*, T*, std::int64_t, std::int64_t, std::int64_t, T); \
  template void untangle_c2r<T>(const Plan<T>&, const T*, std::int64_t, T*, T*, std::int64_t, std::int64_t);          \
  template void interleave_scaled<T>(const T*, const T*, T*, std::int64_t, std::int64_t, std::int64_t, T);
TORSH_FFT_REAL_INSTANTIATE(float)
TORSH_FFT_REAL_INSTANTIATE(double)

}  // namespace torsh::cpu::fft
