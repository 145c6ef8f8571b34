// AVX-512 body of gelu (erf form). At 256 bits a core evaluates gelu more
// slowly than two cores can stream 16M floats on CPUs with two 512-bit FMA
// pipes; at 512 bits the loop is memory-bound again. The body is the AVX2
// one's (simd_gelu.hpp) on 16 lanes, so the results are equal bit for bit.
#include "simd_avx512.hpp"
#include "../platform/cpu_info.hpp"
#include "../platform/isa.hpp"
#include "../types.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

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

__attribute__((target("avx512bw,avx512vl"))) void widen_f16_avx512(const std::uint16_t* x, float* y, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))));
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, tail, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(tail, x + i)));
  }
}

namespace {

// Lane j of the result is the sum of v[j]'s 16 lanes: a transposing tree of
// 15 shuffle pairs instead of 16 horizontal reductions.
TORSH_AVX512_INLINE __m512 sum_lanes_16(__m512 (&v)[16]) {
  __m512 w[8], x[4], y[2];
  for (int i = 0; i < 8; ++i)
    w[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(w[2 * i]), b = _mm512_castps_pd(w[2 * i + 1]);
    x[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)), _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
  }
  for (int i = 0; i < 2; ++i)
    y[i] = _mm512_add_ps(_mm512_shuffle_f32x4(x[2 * i], x[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(x[2 * i], x[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm512_add_ps(_mm512_shuffle_f32x4(y[0], y[1], _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_f32x4(y[0], y[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

}  // namespace

namespace {

// 16 keys' or values' elements as f32, from the dtype the cache stores.
TORSH_AVX512_INLINE __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
TORSH_AVX512_INLINE __m512 load16(const f16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
TORSH_AVX512_INLINE __m512 load16(const bf16_t* p) {
  const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

template <class T>
void scores(const float* q, std::int64_t nq, const T* k, std::int64_t nk, std::int64_t D, const std::int64_t* jmax,
            float* s) {
  const std::int64_t chunks = D / 16;
  for (std::int64_t i = 0; i < nq; ++i) {
    const std::int64_t nj = jmax[i] < nk ? jmax[i] : nk;
    const float* qi = q + i * D;
    __m512 qv[16];
    for (std::int64_t c = 0; c < chunks; ++c) qv[c] = _mm512_loadu_ps(qi + 16 * c);
    float* srow = s + i * nk;
    std::int64_t j = 0;
    for (; j + 16 <= nj; j += 16) {
      __m512 part[16];
      for (int t = 0; t < 16; ++t) {
        const T* kj = k + (j + t) * D;
        __m512 a = _mm512_mul_ps(qv[0], load16(kj));
        for (std::int64_t c = 1; c < chunks; ++c) a = _mm512_fmadd_ps(qv[c], load16(kj + 16 * c), a);
        part[t] = a;
      }
      _mm512_storeu_ps(srow + j, sum_lanes_16(part));
    }
    for (; j < nj; ++j) {
      const T* kj = k + j * D;
      __m512 a = _mm512_mul_ps(qv[0], load16(kj));
      for (std::int64_t c = 1; c < chunks; ++c) a = _mm512_fmadd_ps(qv[c], load16(kj + 16 * c), a);
      srow[j] = _mm512_reduce_add_ps(a);
    }
  }
}

// RB rows' outputs, CB 16-wide column blocks each, stay in registers while
// the keys' values stream past: each value block is loaded once for all RB
// rows, and RB * CB independent FMA chains hide the FMA latency.
template <int RB, int CB, class T>
TORSH_AVX512_INLINE void values_block(const float* s, std::int64_t nk, const T* v, std::int64_t Dv, std::int64_t c0,
                                      const std::int64_t* nj, float* acc) {
  __m512 a[RB][CB];
  std::int64_t common = nj[0];
  for (int r = 0; r < RB; ++r) {
    common = nj[r] < common ? nj[r] : common;
    for (int c = 0; c < CB; ++c) a[r][c] = _mm512_loadu_ps(acc + r * Dv + c0 + 16 * c);
  }
  for (std::int64_t j = 0; j < common; ++j) {
    __m512 vc[CB];
    for (int c = 0; c < CB; ++c) vc[c] = load16(v + j * Dv + c0 + 16 * c);
    for (int r = 0; r < RB; ++r) {
      const __m512 p = _mm512_set1_ps(s[r * nk + j]);
      for (int c = 0; c < CB; ++c) a[r][c] = _mm512_fmadd_ps(p, vc[c], a[r][c]);
    }
  }
  for (int r = 0; r < RB; ++r) {
    for (std::int64_t j = common; j < nj[r]; ++j) {
      const __m512 p = _mm512_set1_ps(s[r * nk + j]);
      for (int c = 0; c < CB; ++c) a[r][c] = _mm512_fmadd_ps(p, load16(v + j * Dv + c0 + 16 * c), a[r][c]);
    }
    for (int c = 0; c < CB; ++c) _mm512_storeu_ps(acc + r * Dv + c0 + 16 * c, a[r][c]);
  }
}

template <class T>
void values(const float* s, std::int64_t nq, std::int64_t nk, const T* v, std::int64_t Dv, const std::int64_t* jmax,
            float* acc) {
  std::int64_t nj[4];
  for (std::int64_t i0 = 0; i0 < nq; i0 += 4) {
    const std::int64_t rb = nq - i0 < 4 ? nq - i0 : 4;
    for (std::int64_t r = 0; r < rb; ++r) nj[r] = jmax[i0 + r] < nk ? (jmax[i0 + r] > 0 ? jmax[i0 + r] : 0) : nk;
    const float* sb = s + i0 * nk;
    float* ab = acc + i0 * Dv;
    std::int64_t c0 = 0;
    for (; c0 + 64 <= Dv; c0 += 64) switch (rb) {
        case 4: values_block<4, 4>(sb, nk, v, Dv, c0, nj, ab); break;
        case 3: values_block<3, 4>(sb, nk, v, Dv, c0, nj, ab); break;
        case 2: values_block<2, 4>(sb, nk, v, Dv, c0, nj, ab); break;
        default: values_block<1, 4>(sb, nk, v, Dv, c0, nj, ab); break;
      }
    for (; c0 < Dv; c0 += 16) switch (rb) {
        case 4: values_block<4, 1>(sb, nk, v, Dv, c0, nj, ab); break;
        case 3: values_block<3, 1>(sb, nk, v, Dv, c0, nj, ab); break;
        case 2: values_block<2, 1>(sb, nk, v, Dv, c0, nj, ab); break;
        default: values_block<1, 1>(sb, nk, v, Dv, c0, nj, ab); break;
      }
  }
}

// exp_f32 (simd.cpp) on 16 lanes: the same reduction and polynomial, with
// 2^n applied by vscalefps; below -87.3 it flushes to 0, NaN propagates.
TORSH_AVX512_INLINE __m512 exp16(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-87.3365447504f), hi = _mm512_set1_ps(88.72283905f);
  const __m512 xc = _mm512_min_ps(_mm512_max_ps(x, lo), hi);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), xc);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500E-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507E-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073E-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894E-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459E-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201E-1f));
  p = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r), _mm512_set1_ps(1.0f));
  __m512 y = _mm512_scalef_ps(p, n);
  y = _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ), _mm512_setzero_ps());
  return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

TORSH_AVX512_INLINE __mmask16 first_lanes(std::int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1);
}

}  // namespace

bool attention_scores_avx512(const float* q, std::int64_t nq, const void* k, DType kd, std::int64_t nk, std::int64_t D,
                             const std::int64_t* jmax, float* s) {
  if (D % 16 != 0 || D > 256) return false;
  switch (kd) {
    case DType::F32: scores(q, nq, static_cast<const float*>(k), nk, D, jmax, s); return true;
    case DType::F16: scores(q, nq, static_cast<const f16_t*>(k), nk, D, jmax, s); return true;
    case DType::BF16: scores(q, nq, static_cast<const bf16_t*>(k), nk, D, jmax, s); return true;
    default: return false;
  }
}

bool attention_softmax_avx512(std::int64_t nq, std::int64_t nk, std::int64_t Dv, const std::int64_t* jmax, float* s,
                              float* m, float* l, float* acc) {
  if (Dv % 16 != 0) return false;
  const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (std::int64_t i = 0; i < nq; ++i) {
    const std::int64_t nj = jmax[i] < nk ? jmax[i] : nk;
    if (nj <= 0) continue;
    float* srow = s + i * nk;
    __m512 mx = neg_inf;
    for (std::int64_t j = 0; j < nj; j += 16)
      mx = _mm512_max_ps(_mm512_mask_loadu_ps(neg_inf, first_lanes(nj - j), srow + j), mx);
    const float rowmax = std::max(m[i], _mm512_reduce_max_ps(mx));
    const __m512 top = _mm512_set1_ps(rowmax);
    __m512 sum = _mm512_setzero_ps();
    for (std::int64_t j = 0; j < nj; j += 16) {
      const __mmask16 k = first_lanes(nj - j);
      const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, srow + j), top));
      _mm512_mask_storeu_ps(srow + j, k, e);
      sum = _mm512_mask_add_ps(sum, k, sum, e);
    }
    const float corr = exp16(_mm512_set1_ps(m[i] - rowmax))[0];
    l[i] = l[i] * corr + _mm512_reduce_add_ps(sum);
    m[i] = rowmax;
    if (corr != 1.0f) {
      const __m512 c = _mm512_set1_ps(corr);
      for (std::int64_t d = 0; d < Dv; d += 16)
        _mm512_storeu_ps(acc + i * Dv + d, _mm512_mul_ps(c, _mm512_loadu_ps(acc + i * Dv + d)));
    }
  }
  return true;
}

bool attention_values_avx512(const float* s, std::int64_t nq, std::int64_t nk, const void* v, DType vd, std::int64_t Dv,
                             const std::int64_t* jmax, float* acc) {
  if (Dv % 16 != 0) return false;
  switch (vd) {
    case DType::F32: values(s, nq, nk, static_cast<const float*>(v), Dv, jmax, acc); return true;
    case DType::F16: values(s, nq, nk, static_cast<const f16_t*>(v), Dv, jmax, acc); return true;
    case DType::BF16: values(s, nq, nk, static_cast<const bf16_t*>(v), Dv, jmax, acc); return true;
    default: return false;
  }
}

}  // namespace torsh::cpu::simd

#pragma GCC pop_options

#else  // no x86: isa_usable(Isa::Avx512) is false and this is never called.
namespace torsh::cpu::simd {
bool unary_f32_avx512(rt::UnaryOp, const float*, float*, std::int64_t, bool) { return false; }
bool binary_f32_avx512(rt::BinaryOp, const float*, const float*, std::int64_t, float*, std::int64_t, bool) {
  return false;
}
void widen_f16_avx512(const std::uint16_t*, float*, std::int64_t) {}
bool attention_scores_avx512(const float*, std::int64_t, const void*, DType, std::int64_t, std::int64_t,
                             const std::int64_t*, float*) {
  return false;
}
bool attention_values_avx512(const float*, std::int64_t, std::int64_t, const void*, DType, std::int64_t,
                             const std::int64_t*, float*) {
  return false;
}
bool attention_softmax_avx512(std::int64_t, std::int64_t, std::int64_t, const std::int64_t*, float*, float*, float*,
                              float*) {
  return false;
}
}  // namespace torsh::cpu::simd
#endif
