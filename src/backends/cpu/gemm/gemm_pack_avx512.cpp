// AVX-512 packing. An A panel is A's rows transposed (k becomes the slow
// index), which scalar code does one element at a time; here 16 k values of
// up to 16 rows are loaded as 16 vectors, transposed in registers (4 shuffle
// stages) and stored as one MR-wide column per k. The same 32-bit transpose
// packs bf16 pairs, which are 32-bit words of a row. B panels are row copies
// with f16/bf16 widening or pair interleaving on the way.
#include <immintrin.h>

#include "gemm.hpp"

// GCC 12's unpack intrinsics pass an _mm512_undefined_* operand that its own
// -Wmaybe-uninitialized then reports once they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define TORSH_PACK_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))
#define TORSH_PACK_INLINE __attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline

namespace torsh::cpu::gemm {
namespace {

TORSH_PACK_INLINE __mmask16 mask16(std::int64_t n) {
  return n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1u);
}

// 16 values of one row, widened to f32 lanes (or kept as 32-bit pairs).
// kStep: source elements per 32-bit lane.
struct LoadF32 {
  using T = float;
  static constexpr int kStep = 1;
  static TORSH_PACK_INLINE __m512 row(const T* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
};
struct LoadF16 {
  using T = std::uint16_t;
  static constexpr int kStep = 1;
  static TORSH_PACK_INLINE __m512 row(const T* p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
  }
};
struct LoadBf16 {
  using T = std::uint16_t;
  static constexpr int kStep = 1;
  static TORSH_PACK_INLINE __m512 row(const T* p, __mmask16 m) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
  }
};
struct LoadPairs {  // a bf16 row read as 32-bit words: lane q is (a[2q], a[2q+1])
  using T = std::uint16_t;
  static constexpr int kStep = 2;
  static TORSH_PACK_INLINE __m512 row(const T* p, __mmask16 m) {
    return _mm512_castsi512_ps(_mm512_maskz_loadu_epi32(m, p));
  }
};

// r[i] lane p -> r[p] lane i.
TORSH_PACK_INLINE void transpose16(__m512 (&r)[16]) {
  __m512 a[16], b[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // b[4i + j], 128-bit lane L: column 4L + j of rows 4i .. 4i + 3.
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const __m512d a0 = _mm512_castps_pd(a[4 * i]), a1 = _mm512_castps_pd(a[4 * i + 1]);
    const __m512d a2 = _mm512_castps_pd(a[4 * i + 2]), a3 = _mm512_castps_pd(a[4 * i + 3]);
    b[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
    b[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
    b[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
    b[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
  }
  // Gather lane L of b[j], b[4 + j], b[8 + j], b[12 + j] into r[4L + j].
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const __m512 c0 = _mm512_shuffle_f32x4(b[j], b[4 + j], 0x44), c1 = _mm512_shuffle_f32x4(b[j], b[4 + j], 0xee);
    const __m512 c2 = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0x44),
                 c3 = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0xee);
    r[j] = _mm512_shuffle_f32x4(c0, c2, 0x88);
    r[4 + j] = _mm512_shuffle_f32x4(c0, c2, 0xdd);
    r[8 + j] = _mm512_shuffle_f32x4(c1, c3, 0x88);
    r[12 + j] = _mm512_shuffle_f32x4(c1, c3, 0xdd);
  }
}

// dst[q * ld + i] = row i, column q for q < cols (32-bit elements), mr <= 16
// lanes stored (rows past `rows` are zeros); ld is mr for A panels.
// `next` is the next panel's first row: its first lines are fetched while
// this panel is transposed, since each panel reads its rows from a new place.
template <class L>
TORSH_PACK_INLINE void transpose_rows(const typename L::T* src, std::int64_t rs, std::int64_t rows, std::int64_t cols,
                                      int mr, float* dst, const typename L::T* next, std::int64_t next_rows,
                                      std::int64_t ld) {
  constexpr std::int64_t kAhead = 64;  // columns: 4 blocks ahead along each row
  const __mmask16 out_mask = mask16(mr);
  for (std::int64_t q0 = 0; q0 < cols; q0 += 16) {
    const __mmask16 in_mask = mask16(cols - q0);
    __m512 r[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      if (i < rows) {
        if (q0 + kAhead < cols)
          _mm_prefetch(reinterpret_cast<const char*>(src + i * rs + (q0 + kAhead) * L::kStep), _MM_HINT_T0);
        else if (i < next_rows)
          _mm_prefetch(reinterpret_cast<const char*>(next + i * rs + (q0 + kAhead - cols) * L::kStep), _MM_HINT_T0);
      }
      r[i] = i < rows ? L::row(src + i * rs + q0 * L::kStep, in_mask) : _mm512_setzero_ps();
    }
    transpose16(r);
    float* d = dst + q0 * ld;
#pragma GCC unroll 16
    for (int q = 0; q < 16; ++q)
      if (q0 + q < cols) _mm512_mask_storeu_ps(d + q * ld, out_mask, r[q]);
  }
}

// Panels of mr rows, `stride` floats apart.
template <class L>
TORSH_PACK_TARGET void transpose_panels(const typename L::T* src, std::int64_t rs, std::int64_t rows, std::int64_t cols,
                                        int mr, float* dst, std::int64_t stride) {
  for (std::int64_t r = 0; r < rows; r += mr) {
    const std::int64_t n = rows - r < mr ? rows - r : mr;
    const std::int64_t next_rows = rows - r - n < mr ? rows - r - n : mr;
    transpose_rows<L>(src + r * rs, rs, n, cols, mr, dst + r / mr * stride, src + (r + n) * rs, next_rows, mr);
  }
}

// B panels of a B whose columns are contiguous (B = W^T for a weight W [n, k]
// stored by rows, as a linear layer applies it): 16 rows of W at a time
// transposed into 16 columns of a panel, zeros past the last row.
template <class L>
TORSH_PACK_TARGET void transposed_panels(const typename L::T* w, std::int64_t w_rs, std::int64_t kc, std::int64_t cols,
                                         int nr, float* dst, std::int64_t stride) {
  for (std::int64_t j = 0; j < (cols + nr - 1) / nr * nr; j += 16) {
    const std::int64_t n = cols - j < 16 ? (cols - j > 0 ? cols - j : 0) : 16;
    const std::int64_t next_rows = cols - j - 16 < 16 ? (cols - j - 16 > 0 ? cols - j - 16 : 0) : 16;
    transpose_rows<L>(w + j * w_rs, w_rs, n, kc, 16, dst + j / nr * stride + j % nr, w + (j + 16) * w_rs, next_rows,
                      nr);
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
      for (int v = 0; v < nr / 16; ++v) {
        const std::int64_t j = jp * nr + 16 * v;
        _mm512_store_ps(dst + jp * stride + p * nr + 16 * v, L::row(s + j, mask16(cols - j)));
      }
  }
}

// Pair panels: word (q, j) = b[2q, j] | b[2q + 1, j] << 16, zero past kc and cols.
TORSH_PACK_TARGET void interleave_panels(const std::uint16_t* src, std::int64_t rs, std::int64_t kc, std::int64_t cols,
                                         int nr, std::uint32_t* dst, std::int64_t stride) {
  const std::int64_t panels = (cols + nr - 1) / nr;
  for (std::int64_t q = 0; 2 * q < kc; ++q) {
    const std::uint16_t* r0 = src + 2 * q * rs;
    const bool has1 = 2 * q + 1 < kc;
    if (2 * q + kPackRowsAhead + 1 < kc) {
      prefetch_bytes(r0 + kPackRowsAhead * rs, cols * 2);
      prefetch_bytes(r0 + (kPackRowsAhead + 1) * rs, cols * 2);
    }
    for (std::int64_t jp = 0; jp < panels; ++jp)
      for (int v = 0; v < nr / 16; ++v) {
        const std::int64_t j = jp * nr + 16 * v;
        const __mmask16 m = mask16(cols - j);
        const __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, r0 + j));
        const __m512i hi =
            has1 ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, r0 + rs + j)) : _mm512_setzero_si512();
        _mm512_store_si512(dst + jp * stride + q * nr + 16 * v, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
      }
  }
}

}  // namespace

void pack_a_avx512(const Kernel& kern, const Mat& a, std::int64_t rows, std::int64_t kc, void* dst) {
  if (a.cs != 1 || kern.mr > 16) return pack_a_generic(kern, a, rows, kc, dst);
  float* d = static_cast<float*>(dst);
  const auto stride = static_cast<std::int64_t>(a_panel_bytes(kern, kc) / 4);
  const auto* s16 = static_cast<const std::uint16_t*>(a.p);
  if (kern.panel == Panel::Bf16Pairs) {
    // Whole pairs as 32-bit words; an odd last k is paired with zero.
    const std::int64_t full = kc / 2;
    if (full > 0) transpose_panels<LoadPairs>(s16, a.rs, rows, full, kern.mr, d, stride);
    if (kc % 2)
      for (std::int64_t i = 0; i < rows; ++i) {
        auto* w = static_cast<std::uint16_t*>(dst) + ((i / kern.mr) * stride + full * kern.mr + i % kern.mr) * 2;
        w[0] = s16[i * a.rs + kc - 1];
        w[1] = 0;
      }
    return;
  }
  switch (a.dtype) {
    case DType::F32:
      return transpose_panels<LoadF32>(static_cast<const float*>(a.p), a.rs, rows, kc, kern.mr, d, stride);
    case DType::F16: return transpose_panels<LoadF16>(s16, a.rs, rows, kc, kern.mr, d, stride);
    case DType::BF16: return transpose_panels<LoadBf16>(s16, a.rs, rows, kc, kern.mr, d, stride);
    default: return pack_a_generic(kern, a, rows, kc, dst);
  }
}

void pack_b_avx512(const Kernel& kern, const Mat& b, std::int64_t kc, std::int64_t cols, void* dst) {
  if (b.rs == 1 && b.cs != 1 && kern.nr % 16 == 0 && kern.panel != Panel::Bf16Pairs) {
    const auto stride = static_cast<std::int64_t>(b_panel_bytes(kern, kc) / 4);
    const auto* w16 = static_cast<const std::uint16_t*>(b.p);
    float* d = static_cast<float*>(dst);
    switch (b.dtype) {
      case DType::F32:
        return transposed_panels<LoadF32>(static_cast<const float*>(b.p), b.cs, kc, cols, kern.nr, d, stride);
      case DType::F16: return transposed_panels<LoadF16>(w16, b.cs, kc, cols, kern.nr, d, stride);
      case DType::BF16: return transposed_panels<LoadBf16>(w16, b.cs, kc, cols, kern.nr, d, stride);
      default: break;
    }
  }
  if (b.cs != 1 || kern.nr % 16) return pack_b_generic(kern, b, kc, cols, dst);
  const auto stride = static_cast<std::int64_t>(b_panel_bytes(kern, kc) / 4);
  const auto* s16 = static_cast<const std::uint16_t*>(b.p);
  if (kern.panel == Panel::Bf16Pairs)
    return interleave_panels(s16, b.rs, kc, cols, kern.nr, static_cast<std::uint32_t*>(dst), stride);
  float* d = static_cast<float*>(dst);
  switch (b.dtype) {
    case DType::F32: return copy_panels<LoadF32>(static_cast<const float*>(b.p), b.rs, kc, cols, kern.nr, d, stride);
    case DType::F16: return copy_panels<LoadF16>(s16, b.rs, kc, cols, kern.nr, d, stride);
    case DType::BF16: return copy_panels<LoadBf16>(s16, b.rs, kc, cols, kern.nr, d, stride);
    default: return pack_b_generic(kern, b, kc, cols, dst);
  }
}

}  // namespace torsh::cpu::gemm
