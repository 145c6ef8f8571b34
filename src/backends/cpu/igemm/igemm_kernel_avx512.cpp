// AVX-512 VNNI tile: 14 rows x 32 columns (28 zmm accumulators), one vpdpbusd
// per row and vector for four k: u8 x s8 products summed into int32 without
// saturation.
#include <immintrin.h>

#include <cstdint>

#include "igemm.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
// Everything below is AVX-512 VNNI code: active_kernel() checks the CPU first.
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni")
// GCC 12's intrinsics pass _mm512_undefined_*() as the unmasked operand, which
// -Wmaybe-uninitialized then reports once they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define TORSH_INLINE __attribute__((always_inline)) inline

namespace torsh::cpu::igemm {
namespace {

struct V512 {
  using vec = __m512i;
  static constexpr int kLanes = 16;
  static TORSH_INLINE vec zero() { return _mm512_setzero_si512(); }
  static TORSH_INLINE vec load(const void* p) { return _mm512_loadu_si512(p); }
  static TORSH_INLINE vec bcast(const void* p) { return _mm512_set1_epi32(*static_cast<const int*>(p)); }
  static TORSH_INLINE vec dot(vec acc, vec a, vec b) { return _mm512_dpbusd_epi32(acc, a, b); }
  static TORSH_INLINE vec add(vec x, vec y) { return _mm512_add_epi32(x, y); }
  static TORSH_INLINE void store(std::int32_t* p, vec v) { _mm512_storeu_si512(p, v); }
};

#include "igemm_body.hpp"

void tile(const unsigned char* a, const unsigned char* b, std::int64_t groups, const TileOut& c) {
  tile_body<V512, 14, 2>(a, b, groups, c);
}
void tile8x48(const unsigned char* a, const unsigned char* b, std::int64_t groups, const TileOut& c) {
  tile_body<V512, 8, 3>(a, b, groups, c);
}
void tile6x64(const unsigned char* a, const unsigned char* b, std::int64_t groups, const TileOut& c) {
  tile_body<V512, 6, 4>(a, b, groups, c);
}

// 16 sums at a time under a mask: convert, scale, NaN to 0, clamp to
// +-2^22 (past that the result saturates anyway), round to nearest even
// (the default rounding mode), add z, and store the bytes saturated
// (vpmovusdb after a floor of 0 for u8, vpmovsdb for s8). Plain products
// (Kernel::requantize) skip the NaN and range guards: 5 or 6 instructions
// a vector instead of 10.
template <bool Plain, bool Unsigned>
void requantize_as(const std::int32_t* c, int ldc, int rows, int cols, const float* s, std::int32_t z,
                   unsigned char* out, std::int64_t ldo) {
  const __m512 fmin = _mm512_set1_ps(-4194304.0f), fmax = _mm512_set1_ps(4194304.0f);
  const __m512i zv = _mm512_set1_epi32(z), zero = _mm512_setzero_si512();
  for (int j = 0; j < cols; j += 16) {
    const __mmask16 m = cols - j >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (cols - j)) - 1);
    const __m512 sv = _mm512_maskz_loadu_ps(m, s + j);
    for (int r = 0; r < rows; ++r) {
      __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(m, c + r * ldc + j)), sv);
      if constexpr (!Plain) {
        x = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, x, _CMP_ORD_Q), x);
        x = _mm512_min_ps(_mm512_max_ps(x, fmin), fmax);
      }
      const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(x), zv);
      if constexpr (Unsigned)
        _mm512_mask_cvtusepi32_storeu_epi8(out + r * ldo + j, m, _mm512_max_epi32(q, zero));
      else
        _mm512_mask_cvtsepi32_storeu_epi8(out + r * ldo + j, m, q);
    }
  }
}

void requantize(const std::int32_t* c, int ldc, int rows, int cols, const float* s, std::int32_t z, bool to_u8,
                unsigned char* out, std::int64_t ldo, bool plain) {
  if (to_u8) {
    if (plain) return requantize_as<true, true>(c, ldc, rows, cols, s, z, out, ldo);
    return requantize_as<false, true>(c, ldc, rows, cols, s, z, out, ldo);
  }
  if (plain) return requantize_as<true, false>(c, ldc, rows, cols, s, z, out, ldo);
  requantize_as<false, false>(c, ldc, rows, cols, s, z, out, ldo);
}

}  // namespace

const Kernel& kernel_avx512_vnni() {
  static const Kernel k{"avx512_vnni-14x32", Lane::U8x4, 14, 32, tile, requantize};
  return k;
}
const Kernel& kernel_avx512_vnni_8x48() {
  static const Kernel k{"avx512_vnni-8x48", Lane::U8x4, 8, 48, tile8x48, requantize};
  return k;
}
const Kernel& kernel_avx512_vnni_6x64() {
  static const Kernel k{"avx512_vnni-6x64", Lane::U8x4, 6, 64, tile6x64, requantize};
  return k;
}

}  // namespace torsh::cpu::igemm

#pragma GCC pop_options
#else  // no x86: never chosen.
namespace torsh::cpu::igemm {
const Kernel& kernel_avx512_vnni() { return kernel_generic(); }
}  // namespace torsh::cpu::igemm
#endif
