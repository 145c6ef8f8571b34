// AVX2 + FMA bodies for the row loops of simd.hpp that GCC's auto-vectoriser
// handles poorly: softmax and the exp-based activations spill and do the row
// max one lane at a time, and the row reductions of the norms run short. The
// formulas and constants are those of the portable code in simd.cpp, so
// results agree to rounding, except erf (a piecewise polynomial here, both
// within 1.5e-7 of the true erf). Tails run through masked loads and stores,
// never past n.
#include "simd_avx2.hpp"
#include "../platform/cpu_info.hpp"
#include "../platform/isa.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace torsh::cpu::simd {}  // namespace torsh::cpu::simd

#if defined(__x86_64__) && defined(__GNUC__)

// Everything below, lambdas included, is AVX2 code: callers check
// isa_usable(Isa::Avx2) first.
#pragma GCC push_options
#pragma GCC target("avx2,fma")
// GCC 12 warns that lambdas taking __m256 change the ABI, although the
// pragma compiles them with AVX as well; they are all inlined here.
#pragma GCC diagnostic ignored "-Wpsabi"
#define TORSH_AVX2_INLINE __attribute__((always_inline)) inline

#include "simd_gelu.hpp"
#include "simd_zip.hpp"

namespace torsh::cpu::simd {
namespace {

TORSH_AVX2_INLINE __m256i tail_mask(std::int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// ln(FLT_MAX), and the x below which exp(x) is subnormal (flushed to 0).
constexpr float kExpHi = 88.72283905f, kExpLo = -87.3365447504f;

// exp(x) for x already clamped to [kExpLo, kExpHi]: Cody-Waite reduction and
// the Cephes polynomial (~1 ulp), as exp_f32 in simd.cpp. Near the top n
// reaches 128, whose 2^n is no float: with kBig it is applied as 2^127 * 2.
template <bool kBig>
TORSH_AVX2_INLINE __m256 exp_core(__m256 x) {
  // n = round(x log2 e): adding 1.5 * 2^23 rounds to nearest in the FMA and
  // leaves n in the low mantissa bits, where the 2^n below reads it without
  // a round or a conversion.
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  const __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), magic);
  const __m256 n = _mm256_sub_ps(t, magic);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500E-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507E-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073E-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894E-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459E-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201E-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  if constexpr (kBig) {
    const __m256 nc = _mm256_min_ps(n, _mm256_set1_ps(127.0f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(nc), _mm256_set1_epi32(127)), 23);
    const __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
    return _mm256_mul_ps(y, _mm256_add_ps(_mm256_sub_ps(n, nc), _mm256_set1_ps(1.0f)));
  } else {
    // (bits of t) + 127, shifted: the magic's own bits fall off the top.
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  }
}

// exp(x) for x <= 0 or NaN-free inputs that cannot overflow: 0 below kExpLo
// (also for -inf).
TORSH_AVX2_INLINE __m256 exp_nonpos(__m256 x) {
  const __m256 lo = _mm256_set1_ps(kExpLo);
  const __m256 y = exp_core<false>(_mm256_max_ps(x, lo));
  return _mm256_andnot_ps(_mm256_cmp_ps(x, lo, _CMP_LT_OQ), y);
}

// exp(x) over the whole range: 0 below kExpLo, inf above kExpHi, NaN kept.
TORSH_AVX2_INLINE __m256 exp_full(__m256 x) {
  const __m256 lo = _mm256_set1_ps(kExpLo), hi = _mm256_set1_ps(kExpHi);
  __m256 y = exp_core<true>(_mm256_min_ps(_mm256_max_ps(x, lo), hi));
  y = _mm256_andnot_ps(_mm256_cmp_ps(x, lo, _CMP_LT_OQ), y);
  y = _mm256_blendv_ps(y, _mm256_set1_ps(std::numeric_limits<float>::infinity()), _mm256_cmp_ps(x, hi, _CMP_GT_OQ));
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

TORSH_AVX2_INLINE __m256 abs_ps(__m256 x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
TORSH_AVX2_INLINE __m256 copysign_ps(__m256 mag, __m256 sign) {
  const __m256 s = _mm256_set1_ps(-0.0f);
  return _mm256_or_ps(_mm256_andnot_ps(s, mag), _mm256_and_ps(s, sign));
}

// The 8-lane operations of gelu_erf_n (simd_gelu.hpp).
struct V256 {
  using reg = __m256;
  using ireg = __m256i;
  static TORSH_AVX2_INLINE reg set1(float v) { return _mm256_set1_ps(v); }
  static TORSH_AVX2_INLINE reg abs(reg a) { return abs_ps(a); }
  static TORSH_AVX2_INLINE reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
  static TORSH_AVX2_INLINE reg sub(reg a, reg b) { return _mm256_sub_ps(a, b); }
  static TORSH_AVX2_INLINE reg min(reg a, reg b) { return _mm256_min_ps(a, b); }
  static TORSH_AVX2_INLINE reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static TORSH_AVX2_INLINE reg trunc(reg a) { return _mm256_round_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
  static TORSH_AVX2_INLINE ireg to_int(reg a) { return _mm256_cvttps_epi32(a); }
  static TORSH_AVX2_INLINE reg row(const float (&r)[4]) {
    return _mm256_broadcast_ps(reinterpret_cast<const __m128*>(r));
  }
  static TORSH_AVX2_INLINE reg permute(reg table, ireg idx) { return _mm256_permutevar_ps(table, idx); }
};

// kStream: y is 32-byte aligned and written around the cache (simd.hpp).
template <bool kStream>
TORSH_AVX2_INLINE void store(float* p, __m256 v) {
  if constexpr (kStream)
    _mm256_stream_ps(p, v);
  else
    _mm256_storeu_ps(p, v);
}

template <bool kStream>
TORSH_AVX2_INLINE void gelu_erf_loop(const float* x, float* y, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 v[4], r[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) v[k] = _mm256_loadu_ps(x + i + 8 * k);
    gelu_erf_n<V256, 4>(v, r);
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) store<kStream>(y + i + 8 * k, r[k]);
  }
  for (; i < n; i += 8) {
    const __m256i m = tail_mask(n - i);
    __m256 v[1] = {_mm256_maskload_ps(x + i, m)}, r[1];
    gelu_erf_n<V256, 1>(v, r);
    _mm256_maskstore_ps(y + i, m, r[0]);
  }
}

// tanh: 1 - 2 / (exp(2|x|) + 1), an odd Taylor polynomial below 0.125.
TORSH_AVX2_INLINE __m256 tanh_ps(__m256 x) {
  const __m256 ax = abs_ps(x), one = _mm256_set1_ps(1.0f);
  const __m256 e = exp_core<false>(_mm256_mul_ps(_mm256_set1_ps(2.0f), _mm256_min_ps(ax, _mm256_set1_ps(20.0f))));
  const __m256 big = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(0.021869488f);
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-0.053968254f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(0.133333333f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-0.333333333f));
  p = _mm256_fmadd_ps(p, x2, one);
  const __m256 small = _mm256_mul_ps(ax, p);
  const __m256 y = copysign_ps(_mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.125f), _CMP_LT_OQ)), x);
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

TORSH_AVX2_INLINE __m256 sigmoid_ps(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp_full(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

template <bool kStream = false, class F>
TORSH_AVX2_INLINE void map(const float* x, float* y, std::int64_t n, F f) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) store<kStream>(y + i, f(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i m = tail_mask(n - i);
    _mm256_maskstore_ps(y + i, m, f(_mm256_maskload_ps(x + i, m)));
  }
}

TORSH_AVX2_INLINE float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

TORSH_AVX2_INLINE float hmax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace

namespace {

template <bool kStream>
bool unary_body(rt::UnaryOp op, const float* x, float* y, std::int64_t n) {
  using U = rt::UnaryOp;
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
  switch (op) {
    case U::Exp: map<kStream>(x, y, n, [](__m256 v) { return exp_full(v); }); return true;
    case U::Tanh: map<kStream>(x, y, n, [](__m256 v) { return tanh_ps(v); }); return true;
    case U::Sigmoid: map<kStream>(x, y, n, [](__m256 v) { return sigmoid_ps(v); }); return true;
    case U::Silu: map<kStream>(x, y, n, [](__m256 v) { return _mm256_mul_ps(v, sigmoid_ps(v)); }); return true;
    case U::Gelu: gelu_erf_loop<kStream>(x, y, n); return true;
    case U::GeluTanh:
      map<kStream>(x, y, n, [&](__m256 v) {
        const __m256 v3 = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
        const __m256 in =
            _mm256_mul_ps(_mm256_set1_ps(0.79788456080286535588f), _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), v3, v));
        return _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, tanh_ps(in)));
      });
      return true;
    default: return false;
  }
}

// The operations of simd_zip.hpp at 8 lanes.
struct Z256 {
  using reg = __m256;
  static constexpr std::int64_t kLanes = 8;
  static TORSH_AVX2_INLINE reg loadu(const float* p) { return _mm256_loadu_ps(p); }
  static TORSH_AVX2_INLINE void storeu(float* p, reg v) { _mm256_storeu_ps(p, v); }
  static TORSH_AVX2_INLINE void stream(float* p, reg v) { _mm256_stream_ps(p, v); }
  static TORSH_AVX2_INLINE reg set1(float v) { return _mm256_set1_ps(v); }
  static TORSH_AVX2_INLINE reg add(reg x, reg y) { return _mm256_add_ps(x, y); }
  static TORSH_AVX2_INLINE reg sub(reg x, reg y) { return _mm256_sub_ps(x, y); }
  static TORSH_AVX2_INLINE reg mul(reg x, reg y) { return _mm256_mul_ps(x, y); }
  static TORSH_AVX2_INLINE reg div(reg x, reg y) { return _mm256_div_ps(x, y); }
  static TORSH_AVX2_INLINE reg max(reg x, reg y) { return _mm256_max_ps(x, y); }
  static TORSH_AVX2_INLINE reg min(reg x, reg y) { return _mm256_min_ps(x, y); }
  static TORSH_AVX2_INLINE reg nan_or(reg x, reg y, reg r) {
    return _mm256_blendv_ps(r, _mm256_add_ps(x, y), _mm256_cmp_ps(x, y, _CMP_UNORD_Q));
  }
  template <class F>
  static TORSH_AVX2_INLINE void tail(const float* a, const float* b, std::int64_t bs, float* out, std::int64_t n, F f) {
    const __m256i m = tail_mask(n);
    _mm256_maskstore_ps(out, m, f(_mm256_maskload_ps(a, m), bs ? _mm256_maskload_ps(b, m) : _mm256_set1_ps(*b)));
  }
};

}  // namespace

bool binary_f32_avx2(rt::BinaryOp op, const float* a, const float* b, std::int64_t bs, float* out, std::int64_t n,
                     bool stream) {
  return zip::binary<Z256>(op, a, b, bs, out, n, stream);
}

bool unary_f32_avx2(rt::UnaryOp op, const float* x, float* y, std::int64_t n, bool stream) {
  if (!stream) return unary_body<false>(op, x, y, n);
  // Plain stores up to y's first 32-byte boundary, streaming ones after it.
  const auto misaligned = static_cast<std::int64_t>((reinterpret_cast<std::uintptr_t>(y) & 31) / sizeof(float));
  const std::int64_t head = std::min(n, misaligned ? 8 - misaligned : 0);
  if (!unary_body<false>(op, x, y, head)) return false;
  return unary_body<true>(op, x + head, y + head, n - head);
}

void softmax_row_f32_avx2(const float* x, float* y, std::int64_t n, bool log, const float* next) {
  const float kInf = std::numeric_limits<float>::infinity();
  // Pass 1: the max, and whether any lane is NaN.
  const __m256 ninf = _mm256_set1_ps(-kInf);
  __m256 mx0 = ninf, mx1 = ninf, nan = _mm256_setzero_ps();
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    mx0 = _mm256_max_ps(mx0, a);
    mx1 = _mm256_max_ps(mx1, b);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
  }
  for (; i < n; i += 8) {
    const __m256i m = tail_mask(n - i);
    const __m256 a = _mm256_blendv_ps(ninf, _mm256_maskload_ps(x + i, m), _mm256_castsi256_ps(m));
    mx0 = _mm256_max_ps(mx0, a);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
  }
  const float mx = hmax(_mm256_max_ps(mx0, mx1));
  // A NaN or +inf anywhere, or a row of -inf (0/0), makes the whole row NaN,
  // as in PyTorch; -inf entries beside finite ones give probability 0.
  if (_mm256_movemask_ps(nan) != 0 || mx == kInf || mx == -kInf) {
    const __m256 q = _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN());
    for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, q);
    if (i < n) _mm256_maskstore_ps(y + i, tail_mask(n - i), q);
    return;
  }
  // Pass 2: exp(x - max), written (softmax) and summed.
  const __m256 vmx = _mm256_set1_ps(mx);
  // Four vectors per step: each exp is a ~15-deep dependency chain, and with
  // fewer in flight the loop waits on latency rather than on the FMA units.
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  for (i = 0; i + 32 <= n; i += 32) {
    if (next) {
      _mm_prefetch(reinterpret_cast<const char*>(next + i), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char*>(next + i + 16), _MM_HINT_T1);
    }
    __m256 e[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) e[k] = exp_nonpos(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8 * k), vmx));
    if (!log) {
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) _mm256_storeu_ps(y + i + 8 * k, e[k]);
    }
    s0 = _mm256_add_ps(s0, _mm256_add_ps(e[0], e[1]));
    s1 = _mm256_add_ps(s1, _mm256_add_ps(e[2], e[3]));
  }
  for (; i < n; i += 8) {
    const __m256i m = tail_mask(n - i);
    const __m256 a =
        _mm256_and_ps(exp_nonpos(_mm256_sub_ps(_mm256_maskload_ps(x + i, m), vmx)), _mm256_castsi256_ps(m));
    if (!log) _mm256_maskstore_ps(y + i, m, a);
    s0 = _mm256_add_ps(s0, a);
  }
  const float sum = hsum(_mm256_add_ps(s0, s1));
  // Pass 3: normalise (softmax) or subtract max + log(sum) (log_softmax).
  if (log) {
    const __m256 lse = _mm256_set1_ps(std::log(sum));
    map(x, y, n, [&](__m256 v) { return _mm256_sub_ps(_mm256_sub_ps(v, vmx), lse); });
  } else {
    const __m256 inv = _mm256_set1_ps(1.0f / sum);
    map(y, y, n, [&](__m256 v) { return _mm256_mul_ps(v, inv); });
  }
}

void norm_row_f32_avx2(const float* x, float* y, const float* w, const float* b, std::int64_t n, float eps, bool rms,
                       const float* next) {
  // Two reductions over the row (mean, then squared deviations: no
  // cancellation for rows far from zero) and one output pass; the row stays in
  // L1 between them.
  auto reduce = [&](auto term, const float* pf) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    std::int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
      if (pf) {
        _mm_prefetch(reinterpret_cast<const char*>(pf + i), _MM_HINT_T1);
        _mm_prefetch(reinterpret_cast<const char*>(pf + i + 16), _MM_HINT_T1);
      }
      s0 = _mm256_add_ps(s0, term(_mm256_loadu_ps(x + i)));
      s1 = _mm256_add_ps(s1, term(_mm256_loadu_ps(x + i + 8)));
      s2 = _mm256_add_ps(s2, term(_mm256_loadu_ps(x + i + 16)));
      s3 = _mm256_add_ps(s3, term(_mm256_loadu_ps(x + i + 24)));
    }
    for (; i < n; i += 8) {
      const __m256i m = tail_mask(n - i);
      s0 = _mm256_add_ps(s0, _mm256_and_ps(term(_mm256_maskload_ps(x + i, m)), _mm256_castsi256_ps(m)));
    }
    return hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  };
  // The first pass reads x from memory; the second, from L1, prefetches next.
  const float mean = rms ? 0.0f : reduce([](__m256 v) { return v; }, nullptr) / static_cast<float>(n);
  const __m256 vm = _mm256_set1_ps(mean);
  const float ss = reduce(
      [&](__m256 v) {
        const __m256 d = _mm256_sub_ps(v, vm);
        return _mm256_mul_ps(d, d);
      },
      rms ? nullptr : next);
  const __m256 inv = _mm256_set1_ps(1.0f / std::sqrt(ss / static_cast<float>(n) + eps));
  std::int64_t i = 0;
  auto out = [&](__m256 v, __m256 wv, __m256 bv) {
    return _mm256_fmadd_ps(_mm256_mul_ps(_mm256_sub_ps(v, vm), inv), wv, bv);
  };
  const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  // rms_norm has no second pass from L1: its output pass prefetches instead.
  const float* pf = rms ? next : nullptr;
  for (; i + 8 <= n; i += 8) {
    if (pf && (i & 15) == 0) _mm_prefetch(reinterpret_cast<const char*>(pf + i), _MM_HINT_T1);
    _mm256_storeu_ps(y + i,
                     out(_mm256_loadu_ps(x + i), w ? _mm256_loadu_ps(w + i) : one, b ? _mm256_loadu_ps(b + i) : zero));
  }
  if (i < n) {
    const __m256i m = tail_mask(n - i);
    _mm256_maskstore_ps(y + i, m,
                        out(_mm256_maskload_ps(x + i, m), w ? _mm256_maskload_ps(w + i, m) : one,
                            b ? _mm256_maskload_ps(b + i, m) : zero));
  }
}

// F16C's vcvtph2ps: the exact conversion in one instruction per 8 values.
__attribute__((target("f16c"))) void widen_f16_avx2(const std::uint16_t* x, float* y, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  for (; i < n; ++i) y[i] = _cvtsh_ss(x[i]);
}

}  // namespace torsh::cpu::simd

#pragma GCC pop_options

#else  // no x86: isa_usable(Isa::Avx2) is false and these are never called.
namespace torsh::cpu::simd {
bool unary_f32_avx2(rt::UnaryOp, const float*, float*, std::int64_t, bool) { return false; }
bool binary_f32_avx2(rt::BinaryOp, const float*, const float*, std::int64_t, float*, std::int64_t, bool) {
  return false;
}
void softmax_row_f32_avx2(const float*, float*, std::int64_t, bool, const float*) {}
void norm_row_f32_avx2(const float*, float*, const float*, const float*, std::int64_t, float, bool, const float*) {}
void widen_f16_avx2(const std::uint16_t*, float*, std::int64_t) {}
}  // namespace torsh::cpu::simd
#endif
