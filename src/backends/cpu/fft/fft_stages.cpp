// The Stockham stages. Stage (radix r, length L, stride s), m = L / r:
//   y[q + s (r p + k)] = w_L^(p k) * sum_j x[q + s (p + j m)] w_r^(j k)
// for p < m, q < s (decimation in frequency; the output is in natural order
// after the last stage). Each radix is its own instantiation so the butterfly
// unrolls into straight-line code and GCC vectorises the loop around it: over
// q (contiguous loads and stores) once s > 1, over p in the first stage
// (s = 1, twiddles stored k-major so they load contiguously too). Every loop
// is built per x86 level by target_clones. Also here: the batched form
// (sequences side by side), the four-step form and Bluestein's.
#include <algorithm>
#include <cstring>
#include <utility>

#include "../platform/scratch.hpp"
#include "../platform/thread_pool.hpp"
#include "../simd/simd.hpp"
#include "fft_butterfly.hpp"
#include "fft_plan.hpp"
#include "fft_vector.hpp"

namespace torsh::cpu::fft {
namespace {

template <class T>
using Stage = typename Plan<T>::Stage;

// Values in: split arrays (xr, xi), or with In the (re, im) pairs of xr.
// Values out: split (yr, yi), or with Out pairs into yr, times scale.
// conj (+1 or -1) multiplies the imaginary parts of pairs on the way in and
// out: the inverse transform is the conjugate of the forward transform of
// the conjugate (a multiply, so the loops stay free of selects).
template <bool In, class T>
TORSH_INLINE void load(const T* xr, const T* xi, std::int64_t i, T conj, T& r, T& m) {
  if constexpr (In) {
    r = xr[2 * i], m = xr[2 * i + 1] * conj;
  } else {
    r = xr[i], m = xi[i];
  }
}
template <bool Out, class T>
TORSH_INLINE void store(T* yr, T* yi, std::int64_t i, T scale, T conj_scale, T r, T m) {
  if constexpr (Out) {
    yr[2 * i] = r * scale, yr[2 * i + 1] = m * conj_scale;
  } else {
    yr[i] = r, yi[i] = m;
  }
}

// s: the stage's stride times the batch (sequences side by side).
template <int R, bool In, bool Out, class T>
TORSH_INLINE void stage_body(const Stage<T>& st, std::int64_t s, const T* xr, const T* xi, T* yr, T* yi,
                             std::int64_t p0, std::int64_t p1, std::int64_t q0, std::int64_t q1, bool swap, T scale) {
  const T conj = swap ? T(-1) : T(1), conj_scale = conj * scale;
  constexpr int kCap = R ? R : kMaxGenericRadix;
  const int r = R ? R : st.radix;
  const std::int64_t m = st.len / r;
  const T* twr = st.tw_re.data();
  const T* twi = st.tw_im.data();
  const T* rc = st.root_cos.data();
  const T* rs = st.root_sin.data();
  // x and y never overlap (ping-pong buffers): ivdep lets GCC vectorise
  // without runtime overlap checks between the 4 r streams.
  if (s == 1) {
#pragma GCC ivdep
    for (std::int64_t p = p0; p < p1; ++p) {
      T ar[kCap], ai[kCap];
#pragma GCC unroll 16
      for (int j = 0; j < r; ++j) load<In>(xr, xi, p + j * m, conj, ar[j], ai[j]);
      butterfly<R, T>(ar, ai, r, rc, rs);
      store<Out>(yr, yi, r * p, scale, conj_scale, ar[0], ai[0]);
#pragma GCC unroll 16
      for (int k = 1; k < r; ++k) {
        const T wr = twr[(k - 1) * m + p], wi = twi[(k - 1) * m + p];
        store<Out>(yr, yi, r * p + k, scale, conj_scale, ar[k] * wr - ai[k] * wi, ar[k] * wi + ai[k] * wr);
      }
    }
    return;
  }
  for (std::int64_t p = p0; p < p1; ++p) {
    T wr[kCap], wi[kCap];
#pragma GCC unroll 16
    for (int k = 1; k < r; ++k) wr[k] = twr[(k - 1) * m + p], wi[k] = twi[(k - 1) * m + p];
    const std::int64_t xo = s * p * (In ? 2 : 1), yo = s * r * p * (Out ? 2 : 1);
    const T* __restrict xrp = xr + xo;
    const T* __restrict xip = In ? xr : xi + s * p;
    T* __restrict yrp = yr + yo;
    T* __restrict yip = Out ? yr : yi + s * r * p;
#pragma GCC ivdep
    for (std::int64_t q = q0; q < q1; ++q) {
      T ar[kCap], ai[kCap];
#pragma GCC unroll 16
      for (int j = 0; j < r; ++j) load<In>(xrp, xip, q + j * s * m, conj, ar[j], ai[j]);
      butterfly<R, T>(ar, ai, r, rc, rs);
      store<Out>(yrp, yip, q, scale, conj_scale, ar[0], ai[0]);
#pragma GCC unroll 16
      for (int k = 1; k < r; ++k)
        store<Out>(yrp, yip, q + k * s, scale, conj_scale, ar[k] * wr[k] - ai[k] * wi[k],
                   ar[k] * wi[k] + ai[k] * wr[k]);
    }
  }
}

#define TORSH_FFT_STAGE_IO(R, T, In, Out)                                                                             \
  TORSH_SIMD_CLONES void stage_##R##_##T##_##In##Out(const Stage<T>& st, std::int64_t s, const T* xr, const T* xi,    \
                                                     T* yr, T* yi, std::int64_t p0, std::int64_t p1, std::int64_t q0, \
                                                     std::int64_t q1, bool swap, T scale) {                           \
    stage_body<R, In, Out, T>(st, s, xr, xi, yr, yi, p0, p1, q0, q1, swap, scale);                                    \
  }
#define TORSH_FFT_STAGE(R, T)            \
  TORSH_FFT_STAGE_IO(R, T, false, false) \
  TORSH_FFT_STAGE_IO(R, T, true, false)  \
  TORSH_FFT_STAGE_IO(R, T, false, true)  \
  TORSH_FFT_STAGE_IO(R, T, true, true)
#define TORSH_FFT_STAGES(T) \
  TORSH_FFT_STAGE(0, T)     \
  TORSH_FFT_STAGE(2, T)     \
  TORSH_FFT_STAGE(3, T)     \
  TORSH_FFT_STAGE(4, T)     \
  TORSH_FFT_STAGE(5, T)     \
  TORSH_FFT_STAGE(7, T)     \
  TORSH_FFT_STAGE(8, T)     \
  TORSH_FFT_STAGE(16, T)
TORSH_FFT_STAGES(float)
TORSH_FFT_STAGES(double)

#define TORSH_FFT_CASE(R, T)                                                                                  \
  case R:                                                                                                     \
    if (!in && !out) return stage_##R##_##T##_falsefalse(st, s, xr, xi, yr, yi, p0, p1, q0, q1, swap, scale); \
    if (in && !out) return stage_##R##_##T##_truefalse(st, s, xr, xi, yr, yi, p0, p1, q0, q1, swap, scale);   \
    if (!in) return stage_##R##_##T##_falsetrue(st, s, xr, xi, yr, yi, p0, p1, q0, q1, swap, scale);          \
    return stage_##R##_##T##_truetrue(st, s, xr, xi, yr, yi, p0, p1, q0, q1, swap, scale);
#define TORSH_FFT_SWITCH(T)                                                                                 \
  switch (st.radix) {                                                                                       \
    TORSH_FFT_CASE(2, T)                                                                                    \
    TORSH_FFT_CASE(3, T)                                                                                    \
    TORSH_FFT_CASE(4, T)                                                                                    \
    TORSH_FFT_CASE(5, T)                                                                                    \
    TORSH_FFT_CASE(7, T)                                                                                    \
    TORSH_FFT_CASE(8, T)                                                                                    \
    TORSH_FFT_CASE(16, T)                                                                                   \
    default: {                                                                                              \
      constexpr int R0 = 0;                                                                                 \
      (void)R0;                                                                                             \
      if (!in && !out) return stage_0_##T##_falsefalse(st, s, xr, xi, yr, yi, p0, p1, q0, q1, swap, scale); \
      if (in && !out) return stage_0_##T##_truefalse(st, s, xr, xi, yr, yi, p0, p1, q0, q1, swap, scale);   \
      if (!in) return stage_0_##T##_falsetrue(st, s, xr, xi, yr, yi, p0, p1, q0, q1, swap, scale);          \
      return stage_0_##T##_truetrue(st, s, xr, xi, yr, yi, p0, p1, q0, q1, swap, scale);                    \
    }                                                                                                       \
  }

// in / out: pairs instead of split arrays; swap: conjugate the pairs (see load / store).
void run_stage(const Stage<float>& st, std::int64_t s, const float* xr, const float* xi, float* yr, float* yi,
               std::int64_t p0, std::int64_t p1, std::int64_t q0, std::int64_t q1, bool in = false, bool out = false,
               bool swap = false, float scale = 1) {
  TORSH_FFT_SWITCH(float)
}
void run_stage(const Stage<double>& st, std::int64_t s, const double* xr, const double* xi, double* yr, double* yi,
               std::int64_t p0, std::int64_t p1, std::int64_t q0, std::int64_t q1, bool in = false, bool out = false,
               bool swap = false, double scale = 1) {
  TORSH_FFT_SWITCH(double)
}

template <class T>
void bluestein(const Plan<T>& plan, T* re, T* im, T* work, int threads) {
  const Plan<T>& sub = *plan.sub;
  const std::int64_t n = plan.n, m = sub.n;
  T* ar = work + kPad;
  T* ai = work + m + 3 * kPad;
  T* sw = work + 2 * m + 4 * kPad;
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

// The batch's block buffers for the four-step: thread-local, grow-only.
template <class T>
T* block_scratch(std::size_t values) {
  thread_local Scratch s;
  return static_cast<T*>(s.get(values * sizeof(T)));
}

// The four-step's data ends: pairs (x / y, (re, im) interleaved) or split
// arrays; conj multiplies the imaginary parts of pairs read and written
// (the inverse, as in load / store), scale the values written.
template <class T>
struct Ends {
  bool in_pairs, out_pairs;
  const T* xr;
  const T* xi;
  T* yr;
  T* yi;
  T conj = 1, scale = 1;
};

// The four-step's copy loops, compiled per x86 level like the stages.
// Column block: b[t][q] = value (t n2 + c0 + q), t < n1, q < bw.
template <bool Pairs, class T>
TORSH_INLINE void gather_columns(const Ends<T>& e, std::int64_t n1, std::int64_t n2, std::int64_t c0, std::int64_t bw,
                                 T* __restrict br, T* __restrict bi) {
  for (std::int64_t t = 0; t < n1; ++t) {
    const std::int64_t i = t * n2 + c0;
    // Rows are n2 apart, too far for the hardware prefetcher: ask a few rows ahead for the next block.
    if (t + 4 < n1 && c0 + bw < n2) {
      const std::int64_t ahead = i + 4 * n2 + bw;
      if constexpr (Pairs)
        __builtin_prefetch(e.xr + 2 * ahead), __builtin_prefetch(e.xr + 2 * ahead + 16);
      else
        __builtin_prefetch(e.xr + ahead), __builtin_prefetch(e.xi + ahead);
    }
#pragma GCC ivdep
    for (std::int64_t q = 0; q < bw; ++q) {
      if constexpr (Pairs)
        br[t * bw + q] = e.xr[2 * (i + q)], bi[t * bw + q] = e.xr[2 * (i + q) + 1] * e.conj;
      else
        br[t * bw + q] = e.xr[i + q], bi[t * bw + q] = e.xi[i + q];
    }
  }
}
// w[k][c0 + q] = b[k][q] * block[k] * lane[k][q].
template <class T>
TORSH_INLINE void twiddle_columns(const Plan<T>& plan, std::int64_t blk, std::int64_t n1, std::int64_t n2,
                                  std::int64_t c0, std::int64_t bw, const T* __restrict br, const T* __restrict bi,
                                  T* __restrict wr, T* __restrict wi) {
  constexpr std::int64_t B = kBlock<T>;
  const T* bkr = plan.block_re.data() + blk * n1;
  const T* bki = plan.block_im.data() + blk * n1;
  const T* lr = plan.lane_re.data();
  const T* li = plan.lane_im.data();
  for (std::int64_t k = 0; k < n1; ++k) {
    const std::int64_t o = k * n2 + c0;
    const T cr = bkr[k], ci = bki[k];
#pragma GCC ivdep
    for (std::int64_t q = 0; q < bw; ++q) {
      const T tr = cr * lr[k * B + q] - ci * li[k * B + q], ti = cr * li[k * B + q] + ci * lr[k * B + q];
      const T xr = br[k * bw + q], xi = bi[k * bw + q];
      wr[o + q] = xr * tr - xi * ti;
      wi[o + q] = xr * ti + xi * tr;
    }
  }
}
// Row block r0 .. r0 + bw of w (rows n2 long) written transposed: value (k n1 + r0 + q) = w[r0 + q][k].
template <bool Pairs, class T>
TORSH_INLINE void store_rows(const Ends<T>& e, std::int64_t n1, std::int64_t n2, std::int64_t r0, std::int64_t bw,
                             const T* __restrict wr, const T* __restrict wi) {
  const T cs = e.conj * e.scale;
  for (std::int64_t k = 0; k < n2; ++k) {
    const std::int64_t o = k * n1 + r0;
#pragma GCC ivdep
    for (std::int64_t q = 0; q < bw; ++q) {
      if constexpr (Pairs)
        e.yr[2 * (o + q)] = wr[q * n2 + k] * e.scale, e.yr[2 * (o + q) + 1] = wi[q * n2 + k] * cs;
      else
        e.yr[o + q] = wr[q * n2 + k], e.yi[o + q] = wi[q * n2 + k];
    }
  }
}

// The inverse of gather_columns for pairs: value (t n2 + c0 + q) = b[t][q] (times scale, conjugated).
template <class T>
TORSH_INLINE void scatter_columns(const Ends<T>& e, std::int64_t n1, std::int64_t n2, std::int64_t c0, std::int64_t bw,
                                  const T* __restrict br, const T* __restrict bi) {
  const T cs = e.conj * e.scale;
  for (std::int64_t t = 0; t < n1; ++t) {
    T* y = e.yr + 2 * (t * n2 + c0);
#pragma GCC ivdep
    for (std::int64_t q = 0; q < bw; ++q) y[2 * q] = br[t * bw + q] * e.scale, y[2 * q + 1] = bi[t * bw + q] * cs;
  }
}

#define TORSH_FFT_COPIES(T)                                                                                           \
  TORSH_SIMD_CLONES void gather_columns_##T(const Ends<T>& e, std::int64_t n1, std::int64_t n2, std::int64_t c0,      \
                                            std::int64_t bw, T* br, T* bi) {                                          \
    e.in_pairs ? gather_columns<true>(e, n1, n2, c0, bw, br, bi) : gather_columns<false>(e, n1, n2, c0, bw, br, bi);  \
  }                                                                                                                   \
  TORSH_SIMD_CLONES void twiddle_columns_##T(const Plan<T>& plan, std::int64_t blk, std::int64_t n1, std::int64_t n2, \
                                             std::int64_t c0, std::int64_t bw, const T* br, const T* bi, T* wr,       \
                                             T* wi) {                                                                 \
    twiddle_columns(plan, blk, n1, n2, c0, bw, br, bi, wr, wi);                                                       \
  }                                                                                                                   \
  TORSH_SIMD_CLONES void store_rows_##T(const Ends<T>& e, std::int64_t n1, std::int64_t n2, std::int64_t r0,          \
                                        std::int64_t bw, const T* wr, const T* wi) {                                  \
    e.out_pairs ? store_rows<true>(e, n1, n2, r0, bw, wr, wi) : store_rows<false>(e, n1, n2, r0, bw, wr, wi);         \
  }                                                                                                                   \
  void gather_columns_of(const Ends<T>& e, std::int64_t n1, std::int64_t n2, std::int64_t c0, std::int64_t bw, T* br, \
                         T* bi) {                                                                                     \
    gather_columns_##T(e, n1, n2, c0, bw, br, bi);                                                                    \
  }                                                                                                                   \
  void twiddle_columns_of(const Plan<T>& plan, std::int64_t blk, std::int64_t n1, std::int64_t n2, std::int64_t c0,   \
                          std::int64_t bw, const T* br, const T* bi, T* wr, T* wi) {                                  \
    twiddle_columns_##T(plan, blk, n1, n2, c0, bw, br, bi, wr, wi);                                                   \
  }                                                                                                                   \
  void store_rows_of(const Ends<T>& e, std::int64_t n1, std::int64_t n2, std::int64_t r0, std::int64_t bw,            \
                     const T* wr, const T* wi) {                                                                      \
    store_rows_##T(e, n1, n2, r0, bw, wr, wi);                                                                        \
  }                                                                                                                   \
  TORSH_SIMD_CLONES void scatter_columns_##T(const Ends<T>& e, std::int64_t n1, std::int64_t n2, std::int64_t c0,     \
                                             std::int64_t bw, const T* br, const T* bi) {                             \
    scatter_columns(e, n1, n2, c0, bw, br, bi);                                                                       \
  }                                                                                                                   \
  void scatter_columns_of(const Ends<T>& e, std::int64_t n1, std::int64_t n2, std::int64_t c0, std::int64_t bw,       \
                          const T* br, const T* bi) {                                                                 \
    scatter_columns_##T(e, n1, n2, c0, bw, br, bi);                                                                   \
  }
TORSH_FFT_COPIES(float)
TORSH_FFT_COPIES(double)

// Columns then rows (see Plan::cols); the intermediate matrix lives in work.
template <class T>
void four_step(const Plan<T>& plan, const Ends<T>& e, T* work, int threads) {
  const Plan<T>& cp = *plan.cols;
  const Plan<T>& rp = *plan.rows;
  const std::int64_t n1 = cp.n, n2 = rp.n;
  constexpr std::int64_t B = kBlock<T>;
  T* wr = work + kPad;
  T* wi = work + plan.n + 3 * kPad;
  // Columns c0 .. c0 + bw: gather [n1][bw], transform side by side, twiddle into w [k1][j2].
  const auto columns = [&](std::int64_t blk0, std::int64_t blk1) {
    T* buf = block_scratch<T>(static_cast<std::size_t>(4 * n1 * B + 8 * kPad));
    T* br = buf;
    T* bi = buf + n1 * B + kPad;
    for (std::int64_t blk = blk0; blk < blk1; ++blk) {
      const std::int64_t c0 = blk * B, bw = std::min(B, n2 - c0);
      gather_columns_of(e, n1, n2, c0, bw, br, bi);
      forward_batched(cp, br, bi, buf + 2 * n1 * B + 2 * kPad, bw);
      twiddle_columns_of(plan, blk, n1, n2, c0, bw, br, bi, wr, wi);
    }
  };
  // Rows r0 .. r0 + bw: each row is contiguous in w, so it is transformed in
  // place by the flat plan (in L1), then the block is written out transposed.
  const auto rows = [&](std::int64_t blk0, std::int64_t blk1) {
    T* row_work = block_scratch<T>(static_cast<std::size_t>(rp.work_size()));
    for (std::int64_t blk = blk0; blk < blk1; ++blk) {
      const std::int64_t r0 = blk * B, bw = std::min(B, n1 - r0);
      for (std::int64_t q = 0; q < bw; ++q) forward(rp, wr + (r0 + q) * n2, wi + (r0 + q) * n2, row_work, 1);
      store_rows_of(e, n1, n2, r0, bw, wr + r0 * n2, wi + r0 * n2);
    }
  };
  const std::int64_t col_blocks = (n2 + B - 1) / B, row_blocks = (n1 + B - 1) / B;
  if (threads <= 1) {
    columns(0, col_blocks);
    rows(0, row_blocks);
    return;
  }
  pool().parallel_for(col_blocks, 1, columns);
  pool().parallel_for(row_blocks, 1, rows);
}

}  // namespace

template <class T>
void forward_batched(const Plan<T>& plan, T* re, T* im, T* work, std::int64_t batch) {
  if (plan.lanes && batch % plan.lanes == 0) return vector_batched(plan, re, im, work, batch);
  const std::int64_t len = plan.n * batch;
  T *cr = re, *ci = im, *nr = work + kPad, *ni = work + len + 3 * kPad;
  for (const auto& st : plan.stages) {
    const std::int64_t s = st.stride * batch;
    run_stage(st, s, cr, ci, nr, ni, 0, st.len / st.radix, 0, s);
    std::swap(cr, nr), std::swap(ci, ni);
  }
  if (cr != re) {
    std::memcpy(re, cr, sizeof(T) * len);
    std::memcpy(im, ci, sizeof(T) * len);
  }
}

template <class T>
void forward(const Plan<T>& plan, T* re, T* im, T* work, int threads) {
  if (plan.bluestein) return bluestein(plan, re, im, work, threads);
  if (plan.cols) return four_step(plan, Ends<T>{false, false, re, im, re, im}, work, threads);
  if (plan.lanes) return vector_transform<T>(plan, re, im, re, im, false, false, false, T(1), work, nullptr);
  T *cr = re, *ci = im, *nr = work + kPad, *ni = work + plan.n + 3 * kPad;
  for (const auto& st : plan.stages) {
    run_stage(st, st.stride, cr, ci, nr, ni, 0, st.len / st.radix, 0, st.stride);
    std::swap(cr, nr), std::swap(ci, ni);
  }
  if (cr != re) {
    std::memcpy(re, cr, sizeof(T) * plan.n);
    std::memcpy(im, ci, sizeof(T) * plan.n);
  }
}

template void forward<float>(const Plan<float>&, float*, float*, float*, int);
template void forward<double>(const Plan<double>&, double*, double*, double*, int);
namespace {

// A flat plan's stages from pairs x to y (pairs when out_pairs, else the
// split arrays yr / yi). The stages between ping-pong through the split
// arrays a and b (each plan.work_size() values, laid out as forward()'s
// work); with split output, through a and y itself (b unused).
template <class T>
void flat_from_pairs(const Plan<T>& plan, const T* x, T* yr, T* yi, bool out_pairs, bool conj, T scale, T* a, T* b) {
  const std::int64_t n = plan.n;
  const std::size_t count = plan.stages.size();
  if (count == 0) {  // n == 1
    if (out_pairs)
      yr[0] = x[0] * scale, yr[1] = x[1] * scale;
    else
      yr[0] = x[0], yi[0] = x[1];
    return;
  }
  T* const sets[2][2] = {{a + kPad, a + n + 3 * kPad}, {out_pairs ? b + kPad : yr, out_pairs ? b + n + 3 * kPad : yi}};
  const T* cr = x;
  const T* ci = nullptr;
  for (std::size_t i = 0; i < count; ++i) {
    const auto& st = plan.stages[i];
    const bool last = i + 1 == count;
    // Split output: the parity that makes the last stage land in y.
    const std::size_t set = out_pairs ? i % 2 : (count - 1 - i) % 2 == 0 ? 1 : 0;
    T* nr = last ? yr : sets[set][0];
    T* ni = last ? yi : sets[set][1];
    run_stage(st, st.stride, cr, ci, nr, ni, 0, st.len / st.radix, 0, st.stride, i == 0, last && out_pairs, conj,
              last ? scale : T(1));
    cr = nr, ci = ni;
  }
}

}  // namespace

template <class T>
void forward_pairs(const Plan<T>& plan, const T* x, T* y, bool inverse, T scale, T* work, int threads) {
  if (!plan.cols && plan.lanes)
    return vector_transform<T>(plan, x, nullptr, y, nullptr, true, true, inverse, scale, work, work + plan.work_size());
  if (!plan.cols) return flat_from_pairs<T>(plan, x, y, nullptr, true, inverse, scale, work, work + plan.work_size());
  // The inverse as the conjugate of the forward transform of the conjugate.
  four_step(plan, Ends<T>{true, true, x, nullptr, y, nullptr, inverse ? T(-1) : T(1), scale}, work, threads);
}

template <class T>
void forward_from_pairs(const Plan<T>& plan, const T* x, T* re, T* im, T* work, int threads) {
  if (plan.cols) return four_step(plan, Ends<T>{true, false, x, nullptr, re, im}, work, threads);
  if (plan.lanes) return vector_transform<T>(plan, x, nullptr, re, im, true, false, false, T(1), work, nullptr);
  flat_from_pairs<T>(plan, x, re, im, false, false, T(1), work, nullptr);
}

template <class T>
void forward_side_by_side(const Plan<T>& plan, const T* x, T* y, std::int64_t stride, std::int64_t bw, bool inverse,
                          T scale, T* buf) {
  const std::int64_t n = plan.n;
  T* re = buf;
  T* im = buf + n * bw + kPad;
  const Ends<T> e{true, true, x, nullptr, y, nullptr, inverse ? T(-1) : T(1), scale};
  gather_columns_of(e, n, stride, 0, bw, re, im);
  forward_batched(plan, re, im, buf + 2 * n * bw + 2 * kPad, bw);
  scatter_columns_of(e, n, stride, 0, bw, re, im);
}

template void forward_side_by_side<float>(const Plan<float>&, const float*, float*, std::int64_t, std::int64_t, bool,
                                          float, float*);
template void forward_side_by_side<double>(const Plan<double>&, const double*, double*, std::int64_t, std::int64_t,
                                           bool, double, double*);
template void forward_from_pairs<float>(const Plan<float>&, const float*, float*, float*, float*, int);
template void forward_from_pairs<double>(const Plan<double>&, const double*, double*, double*, double*, int);
template void forward_pairs<float>(const Plan<float>&, const float*, float*, bool, float, float*, int);
template void forward_pairs<double>(const Plan<double>&, const double*, double*, bool, double, double*, int);
template void forward_batched<float>(const Plan<float>&, float*, float*, float*, std::int64_t);
template void forward_batched<double>(const Plan<double>&, double*, double*, double*, std::int64_t);

}  // namespace torsh::cpu::fft
