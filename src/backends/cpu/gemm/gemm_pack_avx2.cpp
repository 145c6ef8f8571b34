// AVX2 packing for the 6x16 kernel. The scalar A packer writes one float at
// a time into the transposed panel and costs as much as a tenth of a large
// GEMM; here 8 k values of up to 8 rows are loaded as 8 vectors, transposed
// in registers (3 shuffle stages) and stored as one MR-wide column per k.
// B panels are row copies, widened from f16/bf16 on the way.
#include <immintrin.h>

#include <cstring>

#include "gemm.hpp"

#define TORSH_PACK_TARGET __attribute__((target("avx2,fma,f16c")))
#define TORSH_PACK_INLINE __attribute__((target("avx2,fma,f16c"), always_inline)) inline

namespace torsh::cpu::gemm {
namespace {

// Up to 8 values of one row as f32 lanes, zero past n.
struct LoadF32 {
  using T = float;
  static TORSH_PACK_INLINE __m256 row(const T* p, std::int64_t n) {
    if (n >= 8) return _mm256_loadu_ps(p);
    const __m256i m =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    return _mm256_maskload_ps(p, m);
  }
};
// 16-bit sources have no masked load in AVX2: a short tail goes through a
// zeroed stack copy.
template <class Widen>
struct Load16 {
  using T = std::uint16_t;
  static TORSH_PACK_INLINE __m256 row(const T* p, std::int64_t n) {
    if (n >= 8) return Widen::f(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    alignas(16) T tmp[8] = {};
    std::memcpy(tmp, p, static_cast<std::size_t>(n > 0 ? n : 0) * sizeof(T));
    return Widen::f(_mm_load_si128(reinterpret_cast<const __m128i*>(tmp)));
  }
};
struct WidenF16 {
  static TORSH_PACK_INLINE __m256 f(__m128i h) { return _mm256_cvtph_ps(h); }
};
struct WidenBf16 {
  static TORSH_PACK_INLINE __m256 f(__m128i h) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
};
using LoadF16 = Load16<WidenF16>;
using LoadBf16 = Load16<WidenBf16>;

// r[i] lane p -> r[p] lane i.
TORSH_PACK_INLINE void transpose8(__m256 (&r)[8]) {
  __m256 t[8], u[8];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 2
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xee);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xee);
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
    r[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
  }
}

// The first mr lanes of v at d (mr <= 8), without touching d[mr..8).
TORSH_PACK_INLINE void store_lanes(float* d, __m256 v, int mr) {
  if (mr == 8) return _mm256_storeu_ps(d, v);
  if (mr == 6) {
    _mm_storeu_ps(d, _mm256_castps256_ps128(v));
    _mm_storel_pi(reinterpret_cast<__m64*>(d + 4), _mm256_extractf128_ps(v, 1));
    return;
  }
  alignas(32) float tmp[8];
  _mm256_store_ps(tmp, v);
  std::memcpy(d, tmp, static_cast<std::size_t>(mr) * sizeof(float));
}

// dst[q * mr + i] = row i, column q for q < cols; mr <= 8.
template <class L>
TORSH_PACK_INLINE void transpose_rows(const typename L::T* src, std::int64_t rs, std::int64_t rows, std::int64_t cols,
                                      int mr, float* dst) {
  for (std::int64_t q0 = 0; q0 < cols; q0 += 8) {
    __m256 r[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) r[i] = i < rows ? L::row(src + i * rs + q0, cols - q0) : _mm256_setzero_ps();
    transpose8(r);
    float* d = dst + q0 * mr;
    const std::int64_t qn = cols - q0 < 8 ? cols - q0 : 8;
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q)
      if (q < qn) store_lanes(d + q * mr, r[q], mr);
  }
}

// Panels of mr rows, `stride` floats apart.
template <class L>
TORSH_PACK_TARGET void transpose_panels(const typename L::T* src, std::int64_t rs, std::int64_t rows, std::int64_t cols,
                                        int mr, float* dst, std::int64_t stride) {
  for (std::int64_t r = 0; r < rows; r += mr) {
    const std::int64_t n = rows - r < mr ? rows - r : mr;
    transpose_rows<L>(src + r * rs, rs, n, cols, mr, dst + r / mr * stride);
  }
}

// B panels (nr columns, `stride` floats apart) filled row by row, so B is read
// along its rows: contiguous runs that the hardware prefetcher follows.
template <class L>
TORSH_PACK_TARGET void copy_panels(const typename L::T* src, std::int64_t rs, std::int64_t kc, std::int64_t cols,
                                   int nr, float* dst, std::int64_t stride) {
  const std::int64_t panels = (cols + nr - 1) / nr;
  for (std::int64_t p = 0; p < kc; ++p) {
    const typename L::T* s = src + p * rs;
    if (p + kPackRowsAhead < kc) prefetch_bytes(s + kPackRowsAhead * rs, cols * std::int64_t(sizeof(typename L::T)));
    for (std::int64_t jp = 0; jp < panels; ++jp)
      for (int v = 0; v < nr / 8; ++v) {
        const std::int64_t j = jp * nr + 8 * v;
        _mm256_store_ps(dst + jp * stride + p * nr + 8 * v, j < cols ? L::row(s + j, cols - j) : _mm256_setzero_ps());
      }
  }
}

}  // namespace

void pack_a_avx2(const Kernel& kern, const Mat& a, std::int64_t rows, std::int64_t kc, void* dst) {
  if (a.cs != 1 || kern.mr > 8 || kern.panel != Panel::F32) return pack_a_generic(kern, a, rows, kc, dst);
  float* d = static_cast<float*>(dst);
  const auto stride = static_cast<std::int64_t>(a_panel_bytes(kern, kc) / 4);
  const auto* s16 = static_cast<const std::uint16_t*>(a.p);
  switch (a.dtype) {
    case DType::F32:
      return transpose_panels<LoadF32>(static_cast<const float*>(a.p), a.rs, rows, kc, kern.mr, d, stride);
    case DType::F16: return transpose_panels<LoadF16>(s16, a.rs, rows, kc, kern.mr, d, stride);
    case DType::BF16: return transpose_panels<LoadBf16>(s16, a.rs, rows, kc, kern.mr, d, stride);
    default: return pack_a_generic(kern, a, rows, kc, dst);
  }
}

void pack_b_avx2(const Kernel& kern, const Mat& b, std::int64_t kc, std::int64_t cols, void* dst) {
  if (b.cs != 1 || kern.nr % 8 || kern.panel != Panel::F32) return pack_b_generic(kern, b, kc, cols, dst);
  const auto stride = static_cast<std::int64_t>(b_panel_bytes(kern, kc) / 4);
  const auto* s16 = static_cast<const std::uint16_t*>(b.p);
  float* d = static_cast<float*>(dst);
  switch (b.dtype) {
    case DType::F32: return copy_panels<LoadF32>(static_cast<const float*>(b.p), b.rs, kc, cols, kern.nr, d, stride);
    case DType::F16: return copy_panels<LoadF16>(s16, b.rs, kc, cols, kern.nr, d, stride);
    case DType::BF16: return copy_panels<LoadBf16>(s16, b.rs, kc, cols, kern.nr, d, stride);
    default: return pack_b_generic(kern, b, kc, cols, dst);
  }
}

}  // namespace torsh::cpu::gemm
