// AVX-512 body of gelu (erf form). At 256 bits the AVX2 body evaluates about
// one element per cycle on a core, which keeps a 2-core gelu on 16M floats
// below the memory bandwidth on CPUs with two 512-bit FMA pipes; at 512 bits
// it is memory-bound again. The operations are the AVX2 body's, lane for
// lane, on the same coefficients (simd_erf.hpp), so the results are equal
// bit for bit.
#include "simd_avx512.hpp"

#include <algorithm>
#include <cstdint>

#include "simd_erf.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

// GCC 12's AVX-512 intrinsics pass an _mm512_undefined_* operand that its own
// -Wmaybe-uninitialized then reports once they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace torsh::cpu::simd {

bool avx512_usable() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool ok = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return ok;
#else
  return false;
#endif
}

#if defined(__x86_64__) && defined(__GNUC__)

// Everything below is AVX-512 code: callers check avx512_usable() first.
#pragma GCC push_options
#pragma GCC target("avx512f")
#define TORSH_AVX512_INLINE __attribute__((always_inline)) inline

namespace {

TORSH_AVX512_INLINE __m512 abs_ps(__m512 x) {
  return _mm512_castsi512_ps(_mm512_andnot_si512(_mm512_set1_epi32(INT32_MIN), _mm512_castps_si512(x)));
}

TORSH_AVX512_INLINE __m512 erf_row(int j) { return _mm512_broadcast_f32x4(_mm_load_ps(kErfPieces[j])); }

// gelu(x) = 0.5 x + 0.5 |x| erf(|x| / sqrt 2) for N vectors at once, as
// gelu_erf_n in simd_avx2.cpp (NaN and -inf give NaN).
template <int N>
TORSH_AVX512_INLINE void gelu_erf_n(const __m512 (&x)[N], __m512 (&y)[N]) {
  __m512 t[N], p[N];
  __m512i piece[N];
#pragma GCC unroll 4
  for (int i = 0; i < N; ++i) {
    const __m512 z = _mm512_min_ps(_mm512_mul_ps(abs_ps(x[i]), _mm512_set1_ps(0.70710678118654752f)),
                                   _mm512_set1_ps(3.99999976f));
    const __m512 zf = _mm512_roundscale_ps(z, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    piece[i] = _mm512_cvttps_epi32(zf);
    t[i] = _mm512_sub_ps(_mm512_sub_ps(z, zf), _mm512_set1_ps(0.5f));
    p[i] = _mm512_permutevar_ps(erf_row(8), piece[i]);
  }
#pragma GCC unroll 8
  for (int j = 7; j >= 0; --j) {
    const __m512 row = erf_row(j);
#pragma GCC unroll 4
    for (int i = 0; i < N; ++i) p[i] = _mm512_fmadd_ps(p[i], t[i], _mm512_permutevar_ps(row, piece[i]));
  }
#pragma GCC unroll 4
  for (int i = 0; i < N; ++i) {
    const __m512 h = _mm512_mul_ps(x[i], _mm512_set1_ps(0.5f));
    y[i] = _mm512_fmadd_ps(abs_ps(h), _mm512_min_ps(p[i], _mm512_set1_ps(1.0f)), h);
  }
}

// kStream: y is 64-byte aligned and written around the cache (simd.hpp).
template <bool kStream>
TORSH_AVX512_INLINE void gelu_erf_loop(const float* x, float* y, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512 v[4], r[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) v[k] = _mm512_loadu_ps(x + i + 16 * k);
    gelu_erf_n<4>(v, r);
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      if constexpr (kStream) _mm512_stream_ps(y + i + 16 * k, r[k]);
      else _mm512_storeu_ps(y + i + 16 * k, r[k]);
    }
  }
  for (; i < n; i += 16) {
    const auto m = static_cast<__mmask16>(n - i >= 16 ? 0xffff : (1u << (n - i)) - 1u);
    __m512 v[1] = {_mm512_maskz_loadu_ps(m, x + i)}, r[1];
    gelu_erf_n<1>(v, r);
    _mm512_mask_storeu_ps(y + i, m, r[0]);
  }
}

}  // namespace

bool unary_f32_avx512(rt::UnaryOp op, const float* x, float* y, std::int64_t n, bool stream) {
  if (op != rt::UnaryOp::Gelu) return false;
  if (!stream) {
    gelu_erf_loop<false>(x, y, n);
    return true;
  }
  // Plain stores up to y's first 64-byte boundary, streaming ones after it.
  const auto misaligned = static_cast<std::int64_t>((reinterpret_cast<std::uintptr_t>(y) & 63) / sizeof(float));
  const std::int64_t head = std::min(n, misaligned ? 16 - misaligned : 0);
  gelu_erf_loop<false>(x, y, head);
  gelu_erf_loop<true>(x + head, y + head, n - head);
  return true;
}

#pragma GCC pop_options

#else

bool unary_f32_avx512(rt::UnaryOp, const float*, float*, std::int64_t, bool) { return false; }

#endif

}  // namespace torsh::cpu::simd
