// Matrix-vector products with an f16 or bf16 matrix (a linear layer's weight
// kept as stored): dot products of its rows with an f32 vector, four rows
// sharing each vector load, the rows widened in registers (vcvtph2ps for f16,
// a shift for bf16). The loop is bound by reading the matrix: half the bytes
// of an f32 one.
#include "gemv_half.hpp"

#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

// GCC 12's AVX-512 intrinsics pass an _mm256_undefined_* operand that its own
// -Wmaybe-uninitialized then reports once they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace torsh::cpu::gemm {
namespace {

#define TORSH_GEMV512 __attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline
#define TORSH_GEMV256 __attribute__((target("avx2,fma,f16c"), always_inline)) inline

template <bool kBf16>
TORSH_GEMV512 __m512 load16(const std::uint16_t* p, __mmask16 m) {
  const __m256i h = _mm256_maskz_loadu_epi16(m, p);
  if constexpr (kBf16)
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  else
    return _mm512_cvtph_ps(h);
}

template <bool kBf16>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void rows512(const std::uint16_t* a, std::int64_t rs,
                                                                  const float* x, std::int64_t k, std::int64_t rows,
                                                                  float* out) {
  const __mmask16 all = 0xffff;
  std::int64_t i = 0;
  for (; i + 4 <= rows; i += 4) {
    const std::uint16_t* r0 = a + i * rs;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    std::int64_t p = 0;
    // The next four rows (contiguous after these when rs == k), a line at a
    // time: four interleaved row streams defeat the hardware prefetcher.
    const char* next = reinterpret_cast<const char*>(r0 + 8 * rs);
    for (; p + 16 <= k; p += 16) {
      _mm_prefetch(next + 8 * p, _MM_HINT_T0);
      _mm_prefetch(next + 8 * p + 64, _MM_HINT_T0);
      const __m512 xv = _mm512_loadu_ps(x + p);
      s0 = _mm512_fmadd_ps(load16<kBf16>(r0 + p, all), xv, s0);
      s1 = _mm512_fmadd_ps(load16<kBf16>(r0 + rs + p, all), xv, s1);
      s2 = _mm512_fmadd_ps(load16<kBf16>(r0 + 2 * rs + p, all), xv, s2);
      s3 = _mm512_fmadd_ps(load16<kBf16>(r0 + 3 * rs + p, all), xv, s3);
    }
    if (p < k) {
      const __mmask16 m = static_cast<__mmask16>((1u << (k - p)) - 1);
      const __m512 xv = _mm512_maskz_loadu_ps(m, x + p);
      s0 = _mm512_fmadd_ps(load16<kBf16>(r0 + p, m), xv, s0);
      s1 = _mm512_fmadd_ps(load16<kBf16>(r0 + rs + p, m), xv, s1);
      s2 = _mm512_fmadd_ps(load16<kBf16>(r0 + 2 * rs + p, m), xv, s2);
      s3 = _mm512_fmadd_ps(load16<kBf16>(r0 + 3 * rs + p, m), xv, s3);
    }
    out[i] = _mm512_reduce_add_ps(s0);
    out[i + 1] = _mm512_reduce_add_ps(s1);
    out[i + 2] = _mm512_reduce_add_ps(s2);
    out[i + 3] = _mm512_reduce_add_ps(s3);
  }
  for (; i < rows; ++i) {
    const std::uint16_t* r = a + i * rs;
    __m512 s = _mm512_setzero_ps();
    for (std::int64_t p = 0; p < k; p += 16) {
      const __mmask16 m = k - p >= 16 ? all : static_cast<__mmask16>((1u << (k - p)) - 1);
      s = _mm512_fmadd_ps(load16<kBf16>(r + p, m), _mm512_maskz_loadu_ps(m, x + p), s);
    }
    out[i] = _mm512_reduce_add_ps(s);
  }
}

template <bool kBf16>
TORSH_GEMV256 __m256 load8(const std::uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if constexpr (kBf16)
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  else
    return _mm256_cvtph_ps(h);
}

TORSH_GEMV256 float sum8(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

TORSH_GEMV256 float widen1(std::uint16_t h, bool bf16) {
  if (bf16) {
    const std::uint32_t w = static_cast<std::uint32_t>(h) << 16;
    float f;
    __builtin_memcpy(&f, &w, 4);
    return f;
  }
  return _cvtsh_ss(h);
}

template <bool kBf16>
__attribute__((target("avx2,fma,f16c"))) void rows256(const std::uint16_t* a, std::int64_t rs, const float* x,
                                                      std::int64_t k, std::int64_t rows, float* out) {
  const std::int64_t kv = k / 8 * 8;
  std::int64_t i = 0;
  for (; i + 4 <= rows; i += 4) {
    const std::uint16_t* r0 = a + i * rs;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (std::int64_t p = 0; p < kv; p += 8) {
      const __m256 xv = _mm256_loadu_ps(x + p);
      s0 = _mm256_fmadd_ps(load8<kBf16>(r0 + p), xv, s0);
      s1 = _mm256_fmadd_ps(load8<kBf16>(r0 + rs + p), xv, s1);
      s2 = _mm256_fmadd_ps(load8<kBf16>(r0 + 2 * rs + p), xv, s2);
      s3 = _mm256_fmadd_ps(load8<kBf16>(r0 + 3 * rs + p), xv, s3);
    }
    float t[4] = {sum8(s0), sum8(s1), sum8(s2), sum8(s3)};
    for (std::int64_t p = kv; p < k; ++p)
      for (int r = 0; r < 4; ++r) t[r] += widen1(r0[r * rs + p], kBf16) * x[p];
    for (int r = 0; r < 4; ++r) out[i + r] = t[r];
  }
  for (; i < rows; ++i) {
    const std::uint16_t* r = a + i * rs;
    __m256 s = _mm256_setzero_ps();
    for (std::int64_t p = 0; p < kv; p += 8) s = _mm256_fmadd_ps(load8<kBf16>(r + p), _mm256_loadu_ps(x + p), s);
    float t = sum8(s);
    for (std::int64_t p = kv; p < k; ++p) t += widen1(r[p], kBf16) * x[p];
    out[i] = t;
  }
}

}  // namespace

bool dot_rows_half(Isa isa, const std::uint16_t* a, std::int64_t rs, bool bf16, const float* x, std::int64_t k,
                   std::int64_t rows, float* out) {
  if (isa >= Isa::Avx512) {
    bf16 ? rows512<true>(a, rs, x, k, rows, out) : rows512<false>(a, rs, x, k, rows, out);
    return true;
  }
  if (isa >= Isa::Avx2) {
    bf16 ? rows256<true>(a, rs, x, k, rows, out) : rows256<false>(a, rs, x, k, rows, out);
    return true;
  }
  return false;
}

}  // namespace torsh::cpu::gemm

#else

namespace torsh::cpu::gemm {
bool dot_rows_half(Isa, const std::uint16_t*, std::int64_t, bool, const float*, std::int64_t, std::int64_t, float*) {
  return false;
}
}  // namespace torsh::cpu::gemm

#endif
