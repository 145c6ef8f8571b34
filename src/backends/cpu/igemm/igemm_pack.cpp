// Packing for the int8 GEMM (igemm.hpp): operands normalised to a' unsigned
// and b' signed, laid out in lane format, with their row / column sums. The
// loops move whole 32-bit lane words and keep the sums in separate passes
// over the source, so the compiler vectorizes both (a byte-at-a-time
// scatter cost a fifth of a 1024^3 product), compiled per x86 level.
#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../simd/simd.hpp"
#include "igemm.hpp"

namespace torsh::cpu::igemm {

std::size_t panel_bytes(const Kernel& kn, int rows, std::int64_t k) {
  const std::int64_t kpl = k_per_lane(kn.lane);
  return static_cast<std::size_t>((k + kpl - 1) / kpl) * static_cast<std::size_t>(rows) * 4;
}

namespace {

// Sum of a row's normalised bytes: u8 a' = byte ^ flip, wrapping as the
// int32 products do (added unsigned: past k = 8.4M a signed sum would
// overflow, which C++ leaves undefined).
std::int32_t sum_unsigned(const unsigned char* p, std::int64_t k, unsigned char flip) {
  std::uint32_t s = 0;
  for (std::int64_t i = 0; i < k; ++i) s += static_cast<unsigned char>(p[i] ^ flip);
  return static_cast<std::int32_t>(s);
}

#if defined(__SSE2__)
// Rows [row, row + rows) of a panel (rows 4 or 2, all below m), the lane
// words of the groups [0, full): 4 groups of each row are loaded as one
// vector and the 4 x 4 block of words transposed, so each group's words go
// out in one store. Writing a row's words one at a time, mr words apart,
// would take a twelfth of a 1024^3 product on two threads.
__attribute__((always_inline)) inline void pack_a_words(const unsigned char* a, std::int64_t k, std::int64_t row,
                                                        int rows, std::int64_t full, std::uint32_t flip4, int mr,
                                                        std::uint32_t* d) {
  const __m128i f = _mm_set1_epi32(static_cast<int>(flip4));
  const unsigned char* s0 = a + row * k;
  const unsigned char* s1 = s0 + k;
  const unsigned char* s2 = rows == 4 ? s1 + k : s0;
  const unsigned char* s3 = rows == 4 ? s2 + k : s1;
  std::int64_t g = 0;
  for (; g + 4 <= full; g += 4) {
    const __m128i x0 = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s0 + 4 * g)), f);
    const __m128i x1 = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s1 + 4 * g)), f);
    const __m128i x2 = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s2 + 4 * g)), f);
    const __m128i x3 = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s3 + 4 * g)), f);
    const __m128i t0 = _mm_unpacklo_epi32(x0, x1), t1 = _mm_unpacklo_epi32(x2, x3);
    const __m128i t2 = _mm_unpackhi_epi32(x0, x1), t3 = _mm_unpackhi_epi32(x2, x3);
    const __m128i y[4] = {_mm_unpacklo_epi64(t0, t1), _mm_unpackhi_epi64(t0, t1), _mm_unpacklo_epi64(t2, t3),
                          _mm_unpackhi_epi64(t2, t3)};
    for (int j = 0; j < 4; ++j) {
      auto* o = reinterpret_cast<__m128i*>(d + (g + j) * mr);
      if (rows == 4)
        _mm_storeu_si128(o, y[j]);
      else
        _mm_storel_epi64(o, y[j]);
    }
  }
  for (; g < full; ++g)
    for (int r = 0; r < rows; ++r) {
      std::uint32_t w;
      std::memcpy(&w, s0 + r * k + 4 * g, 4);
      d[g * mr + r] = w ^ flip4;
    }
}

// Columns [j, j + 16) of one group's four rows of b (bytes XOR f) as their
// 16 lane words at d + j, and the words' four signed bytes summed into
// sums[0..4) (four columns each): one pass over b for both, rather than a
// pass of its own for the sums. The even bytes of a word reach int16 by a shift
// up and an arithmetic shift down, the odd ones by the latter alone;
// pmaddwd then adds each word's two pairs.
__attribute__((always_inline)) inline void pack_b_words(const unsigned char* const rows[4], int j, __m128i f,
                                                        std::uint32_t* d, __m128i* sums) {
  const auto row = [&](int t) {
    return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[t] + j)), f);
  };
  const __m128i r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3);
  const __m128i l01 = _mm_unpacklo_epi8(r0, r1), h01 = _mm_unpackhi_epi8(r0, r1);
  const __m128i l23 = _mm_unpacklo_epi8(r2, r3), h23 = _mm_unpackhi_epi8(r2, r3);
  const __m128i w[4] = {_mm_unpacklo_epi16(l01, l23), _mm_unpackhi_epi16(l01, l23), _mm_unpacklo_epi16(h01, h23),
                        _mm_unpackhi_epi16(h01, h23)};
  const __m128i ones = _mm_set1_epi16(1);
  for (int i = 0; i < 4; ++i) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + j + 4 * i), w[i]);
    const __m128i pairs = _mm_add_epi16(_mm_srai_epi16(_mm_slli_epi16(w[i], 8), 8), _mm_srai_epi16(w[i], 8));
    sums[i] = _mm_add_epi32(sums[i], _mm_madd_epi16(pairs, ones));
  }
}
#endif

}  // namespace

TORSH_SIMD_CLONES void pack_a(const Kernel& kn, const unsigned char* a, std::int64_t m, std::int64_t k, bool a_signed,
                              std::int64_t r0, unsigned char* dst, std::int32_t* sums) {
  const int kpl = k_per_lane(kn.lane), mr = kn.mr;
  const std::int64_t groups = (k + kpl - 1) / kpl, full = k / kpl;
  const unsigned char flip = a_signed ? 0x80 : 0;  // i8 + 128 == the byte XOR 0x80, as u8
  std::uint32_t* d32 = reinterpret_cast<std::uint32_t*>(dst);
  int words_done = 0;  // rows [0, words_done) have their whole words packed
#if defined(__SSE2__)
  if (kn.lane == Lane::U8x4) {
    const std::uint32_t flip4 = a_signed ? 0x80808080u : 0u;
    while (words_done < mr) {
      const int rows = mr - words_done >= 4 ? 4 : 2;
      if (mr - words_done < rows || r0 + words_done + rows > m) break;
      pack_a_words(a, k, r0 + words_done, rows, full, flip4, mr, d32 + words_done);
      words_done += rows;
    }
  }
#endif
  for (int r = 0; r < mr; ++r) {
    const std::int64_t row = r0 + r;
    std::uint32_t* d = d32 + r;
    if (row >= m) {
      for (std::int64_t g = 0; g < groups; ++g) d[g * mr] = 0;
      sums[r] = 0;
      continue;
    }
    const unsigned char* src = a + row * k;
    sums[r] = sum_unsigned(src, k, flip);
    unsigned char tail[4] = {0, 0, 0, 0};
    if (kn.lane == Lane::U8x4) {
      const std::uint32_t flip4 = a_signed ? 0x80808080u : 0u;
      if (r >= words_done)
        for (std::int64_t g = 0; g < full; ++g) {
          std::uint32_t w;
          std::memcpy(&w, src + 4 * g, 4);
          d[g * mr] = w ^ flip4;
        }
      if (full < groups) {
        for (std::int64_t kk = 4 * full; kk < k; ++kk) tail[kk - 4 * full] = static_cast<unsigned char>(src[kk] ^ flip);
        std::memcpy(&d[full * mr], tail, 4);
      }
    } else {  // two int16 per word, low half first
      for (std::int64_t g = 0; g < full; ++g)
        d[g * mr] = static_cast<std::uint32_t>(src[2 * g] ^ flip) | static_cast<std::uint32_t>(src[2 * g + 1] ^ flip)
                                                                        << 16;
      if (full < groups) d[full * mr] = static_cast<std::uint32_t>(src[2 * full] ^ flip);
    }
  }
}

TORSH_SIMD_CLONES void pack_b(const Kernel& kn, const unsigned char* b, std::int64_t k, std::int64_t n, bool b_unsigned,
                              std::int64_t c0, unsigned char* dst, std::int32_t* sums) {
  const int kpl = k_per_lane(kn.lane), nr = kn.nr;
  const std::int64_t groups = (k + kpl - 1) / kpl;
  const int cols = static_cast<int>(std::min<std::int64_t>(nr, n - c0));
  // b' = b - 128 for u8 (as int8: the byte XOR 0x80); i8 as it is.
  const unsigned char flip = b_unsigned ? 0x80 : 0;
  std::uint32_t* d = reinterpret_cast<std::uint32_t*>(dst);
  // Column sums of b', wrapping as in sum_unsigned.
  std::uint32_t acc[64] = {};
  // With bytes in lanes, the groups of four whole rows and the columns in
  // whole 16s are packed and summed together (pack_b_words); the rest below.
  std::int64_t vec_groups = 0;
  int vec_cols = 0;
#if defined(__SSE2__)
  if (kn.lane == Lane::U8x4 && cols >= 16) {
    vec_cols = cols / 16 * 16;
    __m128i vsums[16];
    for (auto& v : vsums) v = _mm_setzero_si128();
    const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
    vec_groups = k / 4;
    for (std::int64_t g = 0; g < vec_groups; ++g) {
      const unsigned char* const rows[4] = {b + 4 * g * n + c0, b + (4 * g + 1) * n + c0, b + (4 * g + 2) * n + c0,
                                            b + (4 * g + 3) * n + c0};
      for (int j = 0; j < vec_cols; j += 16) pack_b_words(rows, j, f, d + g * nr, vsums + j / 4);
    }
    for (int i = 0; i < vec_cols / 4; ++i) _mm_storeu_si128(reinterpret_cast<__m128i*>(acc + 4 * i), vsums[i]);
  }
#endif
  // The sums not taken above: columns [0, vec_cols) over the rows past
  // those groups, the others over every row (vectorized across the columns).
  for (std::int64_t kk = 0; kk < k; ++kk) {
    const unsigned char* row = b + kk * n + c0;
    for (int j = kk < 4 * vec_groups ? vec_cols : 0; j < cols; ++j)
      acc[j] += static_cast<std::uint32_t>(static_cast<std::int8_t>(static_cast<unsigned char>(row[j] ^ flip)));
  }
  for (int j = 0; j < nr; ++j) sums[j] = static_cast<std::int32_t>(acc[j]);
  static const unsigned char zeros[64] = {};
  for (std::int64_t g = 0; g < groups; ++g, d += nr) {
    // The group's kpl rows (past k: zeros), one lane word per column: the
    // columns past vec_cols in the groups packed above, all in the others.
    const int j0 = g < vec_groups ? vec_cols : 0;
    const unsigned char* rows[4];
    for (int t = 0; t < kpl; ++t) {
      const std::int64_t kk = g * kpl + t;
      rows[t] = kk < k ? b + kk * n + c0 : zeros;
    }
    const unsigned char f0 = g * kpl + 0 < k ? flip : 0, f1 = g * kpl + 1 < k ? flip : 0;
    if (kn.lane == Lane::U8x4) {
      const unsigned char f2 = g * kpl + 2 < k ? flip : 0, f3 = g * kpl + 3 < k ? flip : 0;
      for (int j = j0; j < cols; ++j)
        d[j] = static_cast<std::uint32_t>(rows[0][j] ^ f0) | static_cast<std::uint32_t>(rows[1][j] ^ f1) << 8 |
               static_cast<std::uint32_t>(rows[2][j] ^ f2) << 16 | static_cast<std::uint32_t>(rows[3][j] ^ f3) << 24;
    } else {  // int16 pairs, sign-extended (never packed above)
      for (int j = j0; j < cols; ++j)
        d[j] = static_cast<std::uint16_t>(static_cast<std::int16_t>(static_cast<std::int8_t>(rows[0][j] ^ f0))) |
               static_cast<std::uint32_t>(
                   static_cast<std::uint16_t>(static_cast<std::int16_t>(static_cast<std::int8_t>(rows[1][j] ^ f1))))
                   << 16;
    }
    for (int j = cols; j < nr; ++j) d[j] = 0;
  }
}

}  // namespace torsh::cpu::igemm
