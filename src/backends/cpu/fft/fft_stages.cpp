// The Stockham stages. Stage (radix r, length L, stride s), m = L / r:
//   y[q + s (r p + k)] = w_L^(p k) * sum_j x[q + s (p + j m)] w_r^(j k)
// for p < m, q < s (decimation in frequency; the output is in natural order
// after the last stage). Each radix is its own instantiation so the butterfly
// unrolls into straight-line code and GCC vectorises the loop around it: over
// q (contiguous loads and stores) once s > 1, over p in the first stage
// (s = 1, twiddles stored k-major so they load contiguously too). Every loop
// is built per x86 level by target_clones.
#include <algorithm>
#include <cstring>
#include <utility>

#include "../platform/thread_pool.hpp"
#include "../simd/simd.hpp"
#include "fft_plan.hpp"

#define TORSH_INLINE __attribute__((always_inline)) inline

namespace torsh::cpu::fft {
namespace {

template <class T>
using Stage = typename Plan<T>::Stage;

// The radix-r DFT of a[0..r) in place, forward sign. R = 0: r known at run
// time (odd primes above 7, by the direct sum).
template <int R, class T>
TORSH_INLINE void butterfly(T* ar, T* ai, int r, const T* rc, const T* rs) {
  if constexpr (R == 2) {
    const T tr = ar[0] - ar[1], ti = ai[0] - ai[1];
    ar[0] += ar[1], ai[0] += ai[1];
    ar[1] = tr, ai[1] = ti;
  } else if constexpr (R == 4) {
    const T t0r = ar[0] + ar[2], t0i = ai[0] + ai[2], t1r = ar[0] - ar[2], t1i = ai[0] - ai[2];
    const T t2r = ar[1] + ar[3], t2i = ai[1] + ai[3], t3r = ar[1] - ar[3], t3i = ai[1] - ai[3];
    ar[0] = t0r + t2r, ai[0] = t0i + t2i;
    ar[2] = t0r - t2r, ai[2] = t0i - t2i;
    ar[1] = t1r + t3i, ai[1] = t1i - t3r;  // t1 + (-i) t3
    ar[3] = t1r - t3i, ai[3] = t1i + t3r;
  } else if constexpr (R == 8) {
    T er[4] = {ar[0], ar[2], ar[4], ar[6]}, ei[4] = {ai[0], ai[2], ai[4], ai[6]};
    T orr[4] = {ar[1], ar[3], ar[5], ar[7]}, oi[4] = {ai[1], ai[3], ai[5], ai[7]};
    butterfly<4, T>(er, ei, 4, rc, rs);
    butterfly<4, T>(orr, oi, 4, rc, rs);
    constexpr T h = static_cast<T>(0.70710678118654752440084436210484904);
    // o1 *= (h, -h); o2 *= -i; o3 *= (-h, -h)
    T x = orr[1], y = oi[1];
    orr[1] = h * (x + y), oi[1] = h * (y - x);
    x = orr[2], y = oi[2];
    orr[2] = y, oi[2] = -x;
    x = orr[3], y = oi[3];
    orr[3] = h * (y - x), oi[3] = -h * (x + y);
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      ar[k] = er[k] + orr[k], ai[k] = ei[k] + oi[k];
      ar[k + 4] = er[k] - orr[k], ai[k + 4] = ei[k] - oi[k];
    }
  } else {
    // Odd r: with P_j = a_j + a_(r-j), M_j = a_j - a_(r-j) (j = 1..h),
    //   y_k = a_0 + sum P_j cos(2 pi j k / r) - i sum M_j sin(2 pi j k / r),
    // and y_(r-k) the same with the sine term's sign flipped.
    const int n = R ? R : r, h = (n - 1) / 2;
    constexpr int kCap = R ? (R - 1) / 2 : (kMaxGenericRadix - 1) / 2;
    T pr[kCap], pi[kCap], mr[kCap], mi[kCap];
    T y0r = ar[0], y0i = ai[0];
#pragma GCC unroll 16
    for (int j = 1; j <= h; ++j) {
      pr[j - 1] = ar[j] + ar[n - j], pi[j - 1] = ai[j] + ai[n - j];
      mr[j - 1] = ar[j] - ar[n - j], mi[j - 1] = ai[j] - ai[n - j];
      y0r += pr[j - 1], y0i += pi[j - 1];
    }
#pragma GCC unroll 16
    for (int k = 1; k <= h; ++k) {
      T sr = ar[0], si = ai[0], br = 0, bi = 0;
#pragma GCC unroll 16
      for (int j = 1; j <= h; ++j) {
        const T c = rc[j * n + k], s = rs[j * n + k];
        sr += pr[j - 1] * c, si += pi[j - 1] * c;
        br += mr[j - 1] * s, bi += mi[j - 1] * s;
      }
      ar[k] = sr + bi, ai[k] = si - br;
      ar[n - k] = sr - bi, ai[n - k] = si + br;
    }
    ar[0] = y0r, ai[0] = y0i;
  }
}

template <int R, class T>
TORSH_INLINE void stage_body(const Stage<T>& st, const T* xr, const T* xi, T* yr, T* yi, std::int64_t p0,
                             std::int64_t p1, std::int64_t q0, std::int64_t q1) {
  constexpr int kCap = R ? R : kMaxGenericRadix;
  const int r = R ? R : st.radix;
  const std::int64_t s = st.stride, m = st.len / r;
  const T* twr = st.tw_re.data();
  const T* twi = st.tw_im.data();
  const T* rc = st.root_cos.data();
  const T* rs = st.root_sin.data();
  if (s == 1) {
    for (std::int64_t p = p0; p < p1; ++p) {
      T ar[kCap], ai[kCap];
#pragma GCC unroll 16
      for (int j = 0; j < r; ++j) ar[j] = xr[p + j * m], ai[j] = xi[p + j * m];
      butterfly<R, T>(ar, ai, r, rc, rs);
      yr[r * p] = ar[0], yi[r * p] = ai[0];
#pragma GCC unroll 16
      for (int k = 1; k < r; ++k) {
        const T wr = twr[(k - 1) * m + p], wi = twi[(k - 1) * m + p];
        yr[r * p + k] = ar[k] * wr - ai[k] * wi;
        yi[r * p + k] = ar[k] * wi + ai[k] * wr;
      }
    }
    return;
  }
  for (std::int64_t p = p0; p < p1; ++p) {
    T wr[kCap], wi[kCap];
#pragma GCC unroll 16
    for (int k = 1; k < r; ++k) wr[k] = twr[(k - 1) * m + p], wi[k] = twi[(k - 1) * m + p];
    const T* xrp = xr + s * p;
    const T* xip = xi + s * p;
    T* yrp = yr + s * r * p;
    T* yip = yi + s * r * p;
    for (std::int64_t q = q0; q < q1; ++q) {
      T ar[kCap], ai[kCap];
#pragma GCC unroll 16
      for (int j = 0; j < r; ++j) ar[j] = xrp[q + j * s * m], ai[j] = xip[q + j * s * m];
      butterfly<R, T>(ar, ai, r, rc, rs);
      yrp[q] = ar[0], yip[q] = ai[0];
#pragma GCC unroll 16
      for (int k = 1; k < r; ++k) {
        yrp[q + k * s] = ar[k] * wr[k] - ai[k] * wi[k];
        yip[q + k * s] = ar[k] * wi[k] + ai[k] * wr[k];
      }
    }
  }
}

#define TORSH_FFT_STAGE(R, T)                                                                                    \
  TORSH_SIMD_CLONES void stage_##R##_##T(const Stage<T>& st, const T* xr, const T* xi, T* yr, T* yi,            \
                                         std::int64_t p0, std::int64_t p1, std::int64_t q0, std::int64_t q1) { \
    stage_body<R, T>(st, xr, xi, yr, yi, p0, p1, q0, q1);                                                      \
  }
#define TORSH_FFT_STAGES(T) \
  TORSH_FFT_STAGE(0, T)     \
  TORSH_FFT_STAGE(2, T)     \
  TORSH_FFT_STAGE(3, T)     \
  TORSH_FFT_STAGE(4, T)     \
  TORSH_FFT_STAGE(5, T)     \
  TORSH_FFT_STAGE(7, T)     \
  TORSH_FFT_STAGE(8, T)
TORSH_FFT_STAGES(float)
TORSH_FFT_STAGES(double)

#define TORSH_FFT_SWITCH(T)                                  \
  switch (st.radix) {                                        \
    case 2: return stage_2_##T(st, xr, xi, yr, yi, p0, p1, q0, q1); \
    case 3: return stage_3_##T(st, xr, xi, yr, yi, p0, p1, q0, q1); \
    case 4: return stage_4_##T(st, xr, xi, yr, yi, p0, p1, q0, q1); \
    case 5: return stage_5_##T(st, xr, xi, yr, yi, p0, p1, q0, q1); \
    case 7: return stage_7_##T(st, xr, xi, yr, yi, p0, p1, q0, q1); \
    case 8: return stage_8_##T(st, xr, xi, yr, yi, p0, p1, q0, q1); \
    default: return stage_0_##T(st, xr, xi, yr, yi, p0, p1, q0, q1); \
  }

void run_stage(const Stage<float>& st, const float* xr, const float* xi, float* yr, float* yi, std::int64_t p0,
               std::int64_t p1, std::int64_t q0, std::int64_t q1) {
  TORSH_FFT_SWITCH(float)
}
void run_stage(const Stage<double>& st, const double* xr, const double* xi, double* yr, double* yi,
               std::int64_t p0, std::int64_t p1, std::int64_t q0, std::int64_t q1) {
  TORSH_FFT_SWITCH(double)
}

// One stage over the pool: split over p while there are enough of them, else
// over q (the last stages have few p and long q runs).
template <class T>
void stage_parallel(const Stage<T>& st, const T* xr, const T* xi, T* yr, T* yi, int threads) {
  const std::int64_t m = st.len / st.radix, s = st.stride;
  if (threads <= 1) return run_stage(st, xr, xi, yr, yi, 0, m, 0, s);
  if (m >= 4 * threads || s == 1)
    pool().parallel_for(m, std::max<std::int64_t>(1, m / (4 * threads)),
                        [&](std::int64_t p0, std::int64_t p1) { run_stage(st, xr, xi, yr, yi, p0, p1, 0, s); });
  else
    pool().parallel_for(s, std::max<std::int64_t>(16, s / (4 * threads)),
                        [&](std::int64_t q0, std::int64_t q1) { run_stage(st, xr, xi, yr, yi, 0, m, q0, q1); });
}

template <class T>
void bluestein(const Plan<T>& plan, T* re, T* im, T* work, int threads) {
  const Plan<T>& sub = *plan.sub;
  const std::int64_t n = plan.n, m = sub.n;
  T* ar = work;
  T* ai = work + m;
  T* sw = work + 2 * m;
  const T* cr = plan.chirp_re.data();
  const T* ci = plan.chirp_im.data();
  for (std::int64_t k = 0; k < n; ++k) {
    ar[k] = re[k] * cr[k] - im[k] * ci[k];
    ai[k] = re[k] * ci[k] + im[k] * cr[k];
  }
  std::fill(ar + n, ar + m, T(0));
  std::fill(ai + n, ai + m, T(0));
  forward(sub, ar, ai, sw, threads);
  const T* kr = plan.kernel_re.data();
  const T* ki = plan.kernel_im.data();
  for (std::int64_t k = 0; k < m; ++k) {
    const T xr = ar[k], xi = ai[k];
    ar[k] = xr * kr[k] - xi * ki[k];
    ai[k] = xr * ki[k] + xi * kr[k];
  }
  forward(sub, ai, ar, sw, threads);  // the inverse, by swapping
  for (std::int64_t k = 0; k < n; ++k) {
    re[k] = ar[k] * cr[k] - ai[k] * ci[k];
    im[k] = ar[k] * ci[k] + ai[k] * cr[k];
  }
}

}  // namespace

template <class T>
void forward(const Plan<T>& plan, T* re, T* im, T* work, int threads) {
  if (plan.bluestein) return bluestein(plan, re, im, work, threads);
  T *cr = re, *ci = im, *nr = work, *ni = work + plan.n;
  for (const auto& st : plan.stages) {
    stage_parallel(st, cr, ci, nr, ni, threads);
    std::swap(cr, nr), std::swap(ci, ni);
  }
  if (cr != re) {
    std::memcpy(re, cr, sizeof(T) * plan.n);
    std::memcpy(im, ci, sizeof(T) * plan.n);
  }
}

template void forward<float>(const Plan<float>&, float*, float*, float*, int);
template void forward<double>(const Plan<double>&, double*, double*, double*, int);

}  // namespace torsh::cpu::fft
