// AVX-512 body of gelu (erf form). At 256 bits a core evaluates gelu more
// slowly than two cores can stream 16M floats on CPUs with two 512-bit FMA
// pipes; at 512 bits the loop is memory-bound again. The body is the AVX2
// one's (simd_gelu.hpp) on 16 lanes, so the results are equal bit for bit.
#include "simd_avx512.hpp"
#include "../platform/cpu_info.hpp"
#include "../platform/isa.hpp"

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace torsh::cpu::simd {

// F, BW and VL: every AVX-512 x86 core since Skylake-X has all three, and
// the GEMM's packers use BW and VL.
}  // namespace torsh::cpu::simd

#if defined(__x86_64__) && defined(__GNUC__)

// Everything below is AVX-512 code: callers check isa_usable(Isa::Avx512) first.
#pragma GCC push_options
#pragma GCC target("avx512f")
// GCC 12's AVX-512 intrinsics pass an _mm512_undefined_* operand that its own
// -Wmaybe-uninitialized then reports once they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define TORSH_AVX512_INLINE __attribute__((always_inline)) inline

#include "simd_gelu.hpp"
#include "simd_zip.hpp"

namespace torsh::cpu::simd {
namespace {

// The 16-lane operations of gelu_erf_n (simd_gelu.hpp).
struct V512 {
  using reg = __m512;
  using ireg = __m512i;
  static TORSH_AVX512_INLINE reg set1(float v) { return _mm512_set1_ps(v); }
  static TORSH_AVX512_INLINE reg abs(reg a) {
    return _mm512_castsi512_ps(_mm512_andnot_si512(_mm512_set1_epi32(INT32_MIN), _mm512_castps_si512(a)));
  }
  static TORSH_AVX512_INLINE reg mul(reg a, reg b) { return _mm512_mul_ps(a, b); }
  static TORSH_AVX512_INLINE reg sub(reg a, reg b) { return _mm512_sub_ps(a, b); }
  static TORSH_AVX512_INLINE reg min(reg a, reg b) { return _mm512_min_ps(a, b); }
  static TORSH_AVX512_INLINE reg fmadd(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static TORSH_AVX512_INLINE reg trunc(reg a) {
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  }
  static TORSH_AVX512_INLINE ireg to_int(reg a) { return _mm512_cvttps_epi32(a); }
  static TORSH_AVX512_INLINE reg row(const float (&r)[4]) { return _mm512_broadcast_f32x4(_mm_load_ps(r)); }
  static TORSH_AVX512_INLINE reg permute(reg table, ireg idx) { return _mm512_permutevar_ps(table, idx); }
};

// kStream: y is 64-byte aligned and written around the cache (simd.hpp).
template <bool kStream>
TORSH_AVX512_INLINE void gelu_erf_loop(const float* x, float* y, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512 v[4], r[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) v[k] = _mm512_loadu_ps(x + i + 16 * k);
    gelu_erf_n<V512, 4>(v, r);
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      if constexpr (kStream)
        _mm512_stream_ps(y + i + 16 * k, r[k]);
      else
        _mm512_storeu_ps(y + i + 16 * k, r[k]);
    }
  }
  for (; i < n; i += 16) {
    const auto m = static_cast<__mmask16>(n - i >= 16 ? 0xffff : (1u << (n - i)) - 1u);
    __m512 v[1] = {_mm512_maskz_loadu_ps(m, x + i)}, r[1];
    gelu_erf_n<V512, 1>(v, r);
    _mm512_mask_storeu_ps(y + i, m, r[0]);
  }
}

// The operations of simd_zip.hpp at 16 lanes.
struct Z512 {
  using reg = __m512;
  static constexpr std::int64_t kLanes = 16;
  static TORSH_AVX512_INLINE reg loadu(const float* p) { return _mm512_loadu_ps(p); }
  static TORSH_AVX512_INLINE void storeu(float* p, reg v) { _mm512_storeu_ps(p, v); }
  static TORSH_AVX512_INLINE void stream(float* p, reg v) { _mm512_stream_ps(p, v); }
  static TORSH_AVX512_INLINE reg set1(float v) { return _mm512_set1_ps(v); }
  static TORSH_AVX512_INLINE reg add(reg x, reg y) { return _mm512_add_ps(x, y); }
  static TORSH_AVX512_INLINE reg sub(reg x, reg y) { return _mm512_sub_ps(x, y); }
  static TORSH_AVX512_INLINE reg mul(reg x, reg y) { return _mm512_mul_ps(x, y); }
  static TORSH_AVX512_INLINE reg div(reg x, reg y) { return _mm512_div_ps(x, y); }
  static TORSH_AVX512_INLINE reg max(reg x, reg y) { return _mm512_max_ps(x, y); }
  static TORSH_AVX512_INLINE reg min(reg x, reg y) { return _mm512_min_ps(x, y); }
  static TORSH_AVX512_INLINE reg nan_or(reg x, reg y, reg r) {
    return _mm512_mask_add_ps(r, _mm512_cmp_ps_mask(x, y, _CMP_UNORD_Q), x, y);
  }
  template <class F>
  static TORSH_AVX512_INLINE void tail(const float* a, const float* b, std::int64_t bs, float* out, std::int64_t n,
                                       F f) {
    const auto m = static_cast<__mmask16>((1u << n) - 1u);
    _mm512_mask_storeu_ps(out, m,
                          f(_mm512_maskz_loadu_ps(m, a), bs ? _mm512_maskz_loadu_ps(m, b) : _mm512_set1_ps(*b)));
  }
};

}  // namespace

bool binary_f32_avx512(rt::BinaryOp op, const float* a, const float* b, std::int64_t bs, float* out, std::int64_t n,
                       bool stream) {
  return zip::binary<Z512>(op, a, b, bs, out, n, stream);
}

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

}  // namespace torsh::cpu::simd

#pragma GCC pop_options

#else  // no x86: isa_usable(Isa::Avx512) is false and this is never called.
namespace torsh::cpu::simd {
bool unary_f32_avx512(rt::UnaryOp, const float*, float*, std::int64_t, bool) { return false; }
bool binary_f32_avx512(rt::BinaryOp, const float*, const float*, std::int64_t, float*, std::int64_t, bool) {
  return false;
}
}  // namespace torsh::cpu::simd
#endif
