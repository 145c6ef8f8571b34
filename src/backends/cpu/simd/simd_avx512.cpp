// AVX-512 body of gelu (erf form). At 256 bits a core evaluates gelu more
// slowly than two cores can stream 16M floats on CPUs with two 512-bit FMA
// pipes; at 512 bits the loop is memory-bound again. The body is the AVX2
// one's (simd_gelu.hpp) on 16 lanes, so the results are equal bit for bit.
#include "simd_avx512.hpp"
#include "../platform/cpu_info.hpp"

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace torsh::cpu::simd {

// F, BW and VL: every AVX-512 x86 core since Skylake-X has all three, and
// the GEMM's packers use BW and VL.
bool avx512_usable() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool ok = [] {
    __builtin_cpu_init();
    return isa_cap() >= IsaCap::Avx512 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl");
  }();
  return ok;
#else
  return false;
#endif
}

}  // namespace torsh::cpu::simd

#if defined(__x86_64__) && defined(__GNUC__)

// Everything below is AVX-512 code: callers check avx512_usable() first.
#pragma GCC push_options
#pragma GCC target("avx512f")
// GCC 12's AVX-512 intrinsics pass an _mm512_undefined_* operand that its own
// -Wmaybe-uninitialized then reports once they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define TORSH_AVX512_INLINE __attribute__((always_inline)) inline

#include "simd_gelu.hpp"

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
  static TORSH_AVX512_INLINE reg trunc(reg a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
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
      if constexpr (kStream) _mm512_stream_ps(y + i + 16 * k, r[k]);
      else _mm512_storeu_ps(y + i + 16 * k, r[k]);
    }
  }
  for (; i < n; i += 16) {
    const auto m = static_cast<__mmask16>(n - i >= 16 ? 0xffff : (1u << (n - i)) - 1u);
    __m512 v[1] = {_mm512_maskz_loadu_ps(m, x + i)}, r[1];
    gelu_erf_n<V512, 1>(v, r);
    _mm512_mask_storeu_ps(y + i, m, r[0]);
  }
}

// out = op(a, b) over n elements (b broadcast when bs == 0); kStream: out is
// 64-byte aligned and written around the cache. Stores go straight from the
// registers: staging a block in L1 and streaming it from there doubles the
// stores, and on Zen 4 (one 256-bit store a cycle) an add of 16M floats then
// ran at 0.7x (29 against 41 GB/s, in one process).
// b[i...] as a vector, or the scalar *b broadcast (bs == 0).
TORSH_AVX512_INLINE __m512 load_b(const float* b, std::int64_t bs, std::int64_t i) {
  return bs ? _mm512_loadu_ps(b + i) : _mm512_set1_ps(*b);
}

template <bool kStream, class F>
TORSH_AVX512_INLINE void zip_loop(const float* a, const float* b, std::int64_t bs, float* out, std::int64_t n, F f) {
  std::int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m512 r = f(_mm512_loadu_ps(a + i + 16 * k), load_b(b, bs, i + 16 * k));
      if constexpr (kStream) _mm512_stream_ps(out + i + 16 * k, r);
      else _mm512_storeu_ps(out + i + 16 * k, r);
    }
  }
  for (; i < n; i += 16) {
    const auto m = static_cast<__mmask16>(n - i >= 16 ? 0xffff : (1u << (n - i)) - 1u);
    const __m512 vb = bs ? _mm512_maskz_loadu_ps(m, b + i) : _mm512_set1_ps(*b);
    _mm512_mask_storeu_ps(out + i, m, f(_mm512_maskz_loadu_ps(m, a + i), vb));
  }
}

template <class F>
TORSH_AVX512_INLINE void zip(const float* a, const float* b, std::int64_t bs, float* out, std::int64_t n, bool stream,
                             F f) {
  if (!stream) return zip_loop<false>(a, b, bs, out, n, f);
  const auto misaligned = static_cast<std::int64_t>((reinterpret_cast<std::uintptr_t>(out) & 63) / sizeof(float));
  const std::int64_t head = std::min(n, misaligned ? 16 - misaligned : 0);
  zip_loop<false>(a, b, bs, out, head, f);
  zip_loop<true>(a + head, b + head * bs, bs, out + head, n - head, f);
}

// max/min that propagate NaN as torch.maximum does (a + b is NaN when either is).
TORSH_AVX512_INLINE __m512 nan_or(__m512 x, __m512 y, __m512 r) {
  const __mmask16 nan = _mm512_cmp_ps_mask(x, y, _CMP_UNORD_Q);
  return _mm512_mask_add_ps(r, nan, x, y);
}

// The ops as function objects: the target pragma does not reach lambdas.
struct Add { TORSH_AVX512_INLINE __m512 operator()(__m512 x, __m512 y) const { return _mm512_add_ps(x, y); } };
struct Sub { TORSH_AVX512_INLINE __m512 operator()(__m512 x, __m512 y) const { return _mm512_sub_ps(x, y); } };
struct Mul { TORSH_AVX512_INLINE __m512 operator()(__m512 x, __m512 y) const { return _mm512_mul_ps(x, y); } };
struct Div { TORSH_AVX512_INLINE __m512 operator()(__m512 x, __m512 y) const { return _mm512_div_ps(x, y); } };
struct Max { TORSH_AVX512_INLINE __m512 operator()(__m512 x, __m512 y) const { return nan_or(x, y, _mm512_max_ps(x, y)); } };
struct Min { TORSH_AVX512_INLINE __m512 operator()(__m512 x, __m512 y) const { return nan_or(x, y, _mm512_min_ps(x, y)); } };

}  // namespace

bool binary_f32_avx512(rt::BinaryOp op, const float* a, const float* b, std::int64_t bs, float* out, std::int64_t n,
                       bool stream) {
  using B = rt::BinaryOp;
  switch (op) {
    case B::Add: zip(a, b, bs, out, n, stream, Add{}); return true;
    case B::Sub: zip(a, b, bs, out, n, stream, Sub{}); return true;
    case B::Mul: zip(a, b, bs, out, n, stream, Mul{}); return true;
    case B::Div: zip(a, b, bs, out, n, stream, Div{}); return true;
    case B::Maximum: zip(a, b, bs, out, n, stream, Max{}); return true;
    case B::Minimum: zip(a, b, bs, out, n, stream, Min{}); return true;
    case B::Pow: return false;
  }
  return false;
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

#else  // no x86: avx512_usable() is false and this is never called.
namespace torsh::cpu::simd {
bool unary_f32_avx512(rt::UnaryOp, const float*, float*, std::int64_t, bool) { return false; }
bool binary_f32_avx512(rt::BinaryOp, const float*, const float*, std::int64_t, float*, std::int64_t, bool) {
  return false;
}
}  // namespace torsh::cpu::simd
#endif
