// AVX2 bodies of the Winograd transforms, eight tiles of a row at a time
// (conv_winograd.cpp runs the rest of a row, and CPUs without AVX2, through
// the portable loops). Eight tiles read 18 consecutive input columns per row:
// the even and odd columns are split by a shuffle and a cross-lane permute.
#include <immintrin.h>

#include <algorithm>

#include "conv_winograd_rows.hpp"

#define TORSH_WINO_TARGET __attribute__((target("avx2,fma")))
#define TORSH_WINO_INLINE __attribute__((target("avx2,fma"), always_inline)) inline

namespace torsh::cpu::winograd {
namespace {

// Columns c, c + 2, ..., c + 14 (even) and c + 1, ..., c + 15 (odd) of p + c.
TORSH_WINO_INLINE void split(const float* p, __m256& even, __m256& odd) {
  const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
  even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
  odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
}

TORSH_WINO_INLINE __m256i lanes(std::int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// A store of the first n (1..8) lanes.
TORSH_WINO_INLINE void store(float* p, __m256 v, std::int64_t n, __m256i mask) {
  if (n == 8)
    _mm256_storeu_ps(p, v);
  else
    _mm256_maskstore_ps(p, mask, v);
}

}  // namespace

TORSH_WINO_TARGET std::int64_t input_row_avx2(const float* rows, std::int64_t row_len, std::int64_t TQ, float* v,
                                              std::int64_t xi_stride) {
  std::int64_t tx = 0;
  for (; tx < TQ; tx += 8) {
    const std::int64_t n = std::min<std::int64_t>(8, TQ - tx);
    const __m256i mask = lanes(n);
    __m256 e[4][4];
    __m256 d[4][4];
    for (int i = 0; i < 4; ++i) {
      const float* r = rows + i * row_len + 2 * tx;
      split(r, d[i][0], d[i][1]);
      split(r + 2, d[i][2], d[i][3]);
    }
    for (int j = 0; j < 4; ++j) {
      e[0][j] = _mm256_sub_ps(d[0][j], d[2][j]);
      e[1][j] = _mm256_add_ps(d[1][j], d[2][j]);
      e[2][j] = _mm256_sub_ps(d[2][j], d[1][j]);
      e[3][j] = _mm256_sub_ps(d[1][j], d[3][j]);
    }
    for (int i = 0; i < 4; ++i) {
      float* vi = v + (i * 4) * xi_stride + tx;
      store(vi, _mm256_sub_ps(e[i][0], e[i][2]), n, mask);
      store(vi + xi_stride, _mm256_add_ps(e[i][1], e[i][2]), n, mask);
      store(vi + 2 * xi_stride, _mm256_sub_ps(e[i][2], e[i][1]), n, mask);
      store(vi + 3 * xi_stride, _mm256_sub_ps(e[i][1], e[i][3]), n, mask);
    }
  }
  return TQ;
}

TORSH_WINO_TARGET std::int64_t output_row_avx2(const float* m, std::int64_t xi_stride, std::int64_t TQ, float* y0,
                                               float* y1) {
  std::int64_t tx = 0;
  for (; tx < TQ; tx += 8) {
    // A last group of fewer than 8 tiles loads only its own lanes (the rest
    // may lie past the chunk) and writes whole vectors into y0 / y1, which
    // have room for them.
    const __m256i mask = lanes(std::min<std::int64_t>(8, TQ - tx));
    const float* mt = m + tx;
    __m256 f[2][4];
    for (int j = 0; j < 4; ++j) {
      const __m256 t0 = _mm256_maskload_ps(mt + j * xi_stride, mask);
      const __m256 t1 = _mm256_maskload_ps(mt + (4 + j) * xi_stride, mask);
      const __m256 t2 = _mm256_maskload_ps(mt + (8 + j) * xi_stride, mask);
      const __m256 t3 = _mm256_maskload_ps(mt + (12 + j) * xi_stride, mask);
      f[0][j] = _mm256_add_ps(_mm256_add_ps(t0, t1), t2);
      f[1][j] = _mm256_sub_ps(_mm256_sub_ps(t1, t2), t3);
    }
    float* out[2] = {y0, y1};
    for (int i = 0; i < 2; ++i) {
      const __m256 a = _mm256_add_ps(_mm256_add_ps(f[i][0], f[i][1]), f[i][2]);  // output column 2tx
      const __m256 b = _mm256_sub_ps(_mm256_sub_ps(f[i][1], f[i][2]), f[i][3]);  // column 2tx + 1
      const __m256 lo = _mm256_unpacklo_ps(a, b), hi = _mm256_unpackhi_ps(a, b);
      _mm256_storeu_ps(out[i] + 2 * tx, _mm256_permute2f128_ps(lo, hi, 0x20));
      _mm256_storeu_ps(out[i] + 2 * tx + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
    }
  }
  return TQ;
}

}  // namespace torsh::cpu::winograd

namespace torsh::cpu::winograd {

TORSH_WINO_TARGET std::int64_t filters_avx2(const float* w, std::int64_t Cg, std::int64_t xi_stride, float* u) {
  const __m256i idx = _mm256_setr_epi32(0, 9, 18, 27, 36, 45, 54, 63);
  const __m256 half = _mm256_set1_ps(0.5f);
  std::int64_t c = 0;
  for (; c + 8 <= Cg; c += 8) {
    __m256 g[9];
    for (int t = 0; t < 9; ++t) g[t] = _mm256_i32gather_ps(w + c * 9 + t, idx, 4);
    __m256 h[4][3];
    for (int s = 0; s < 3; ++s) {
      h[0][s] = g[s];
      h[1][s] = _mm256_mul_ps(half, _mm256_add_ps(_mm256_add_ps(g[s], g[3 + s]), g[6 + s]));
      h[2][s] = _mm256_mul_ps(half, _mm256_add_ps(_mm256_sub_ps(g[s], g[3 + s]), g[6 + s]));
      h[3][s] = g[6 + s];
    }
    for (int i = 0; i < 4; ++i) {
      float* ui = u + (i * 4) * xi_stride + c;
      _mm256_storeu_ps(ui, h[i][0]);
      _mm256_storeu_ps(ui + xi_stride, _mm256_mul_ps(half, _mm256_add_ps(_mm256_add_ps(h[i][0], h[i][1]), h[i][2])));
      _mm256_storeu_ps(ui + 2 * xi_stride,
                       _mm256_mul_ps(half, _mm256_add_ps(_mm256_sub_ps(h[i][0], h[i][1]), h[i][2])));
      _mm256_storeu_ps(ui + 3 * xi_stride, h[i][2]);
    }
  }
  return c;
}

}  // namespace torsh::cpu::winograd
