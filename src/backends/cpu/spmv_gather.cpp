// SpMV rows with x read by vector gathers (spmv_gather.hpp): one loop over a
// row's nonzeros (spmv_gather_rows.hpp, compiled in each level's region)
// over a per-level, per-type "lanes" policy.
#include "spmv_gather.hpp"
#include "platform/isa.hpp"

#include <immintrin.h>

#include "platform/cpu_info.hpp"
#include "simd/simd_avx2.hpp"
#include "simd/simd_avx512.hpp"

namespace torsh::cpu {
#define TORSH_GATHER_INLINE __attribute__((always_inline)) inline

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// Everything in these two regions runs only where spmv_gather_level() found its level.
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512bw,avx2,fma")
// GCC 12's intrinsics pass _mm512_undefined_*() as the unmasked operand, which
// -Wmaybe-uninitialized then reports once they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace {
namespace avx512 {

// The gathers are the masked forms with every lane on, from a zeroed vector:
// a gather merges into its destination, and the unmasked forms' undefined
// start would keep a dependence on that register's last value.

float sum(__m256 v) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}
float sum(__m512 v) { return _mm512_reduce_add_ps(v); }
double sum(__m512d v) { return _mm512_reduce_add_pd(v); }
// The row's last n < W nonzeros go through the same vectors under a mask
// (masked-off lanes load and gather nothing).
template <class I, class T>
struct Lanes;
template <>
struct Lanes<std::int32_t, float> {
  static constexpr int W = 16;
  using Acc = __m512;
  static TORSH_GATHER_INLINE Acc step(Acc acc, const std::int32_t* c, const float* v, const float* x) {
    const __m512 xv = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), 0xFFFF, _mm512_loadu_si512(c), x, 4);
    return _mm512_fmadd_ps(_mm512_loadu_ps(v), xv, acc);
  }
  static TORSH_GATHER_INLINE float finish(Acc acc, const std::int32_t* c, const float* v, const float* x, int n) {
    const __mmask16 m = static_cast<__mmask16>((1u << n) - 1);
    const __m512 xv = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, _mm512_maskz_loadu_epi32(m, c), x, 4);
    return sum(_mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, v), xv, acc));
  }
};
template <>
struct Lanes<std::int64_t, float> {
  static constexpr int W = 8;
  using Acc = __m256;
  static TORSH_GATHER_INLINE Acc step(Acc acc, const std::int64_t* c, const float* v, const float* x) {
    const __m256 xv = _mm512_mask_i64gather_ps(_mm256_setzero_ps(), 0xFF, _mm512_loadu_si512(c), x, 4);
    return _mm256_fmadd_ps(_mm256_loadu_ps(v), xv, acc);
  }
  static TORSH_GATHER_INLINE float finish(Acc acc, const std::int64_t* c, const float* v, const float* x, int n) {
    const __mmask8 m = static_cast<__mmask8>((1u << n) - 1);
    const __m256 xv = _mm512_mask_i64gather_ps(_mm256_setzero_ps(), m, _mm512_maskz_loadu_epi64(m, c), x, 4);
    return sum(_mm256_fmadd_ps(_mm256_maskz_loadu_ps(m, v), xv, acc));
  }
};
template <>
struct Lanes<std::int32_t, double> {
  static constexpr int W = 8;
  using Acc = __m512d;
  static TORSH_GATHER_INLINE Acc step(Acc acc, const std::int32_t* c, const double* v, const double* x) {
    const __m256i idx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c));
    return _mm512_fmadd_pd(_mm512_loadu_pd(v), _mm512_mask_i32gather_pd(_mm512_setzero_pd(), 0xFF, idx, x, 8), acc);
  }
  static TORSH_GATHER_INLINE double finish(Acc acc, const std::int32_t* c, const double* v, const double* x, int n) {
    const __mmask8 m = static_cast<__mmask8>((1u << n) - 1);
    const __m512d xv = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), m, _mm256_maskz_loadu_epi32(m, c), x, 8);
    return sum(_mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, v), xv, acc));
  }
};
template <>
struct Lanes<std::int64_t, double> {
  static constexpr int W = 8;
  using Acc = __m512d;
  static TORSH_GATHER_INLINE Acc step(Acc acc, const std::int64_t* c, const double* v, const double* x) {
    const __m512d xv = _mm512_mask_i64gather_pd(_mm512_setzero_pd(), 0xFF, _mm512_loadu_si512(c), x, 8);
    return _mm512_fmadd_pd(_mm512_loadu_pd(v), xv, acc);
  }
  static TORSH_GATHER_INLINE double finish(Acc acc, const std::int64_t* c, const double* v, const double* x, int n) {
    const __mmask8 m = static_cast<__mmask8>((1u << n) - 1);
    const __m512d xv = _mm512_mask_i64gather_pd(_mm512_setzero_pd(), m, _mm512_maskz_loadu_epi64(m, c), x, 8);
    return sum(_mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, v), xv, acc));
  }
};

#include "spmv_gather_rows.hpp"

}  // namespace avx512
}  // namespace
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace {
namespace avx2 {

__m256 all_ps() { return _mm256_castsi256_ps(_mm256_set1_epi32(-1)); }  // every lane of a gather's mask on

float sum(__m128 h) {
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}
float sum(__m256 v) { return sum(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1))); }
double sum(__m256d v) {
  const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}
// No masked loads here: the row's last n < W nonzeros are added one by one.
struct ScalarTail {
  template <class Acc, class I, class T>
  static TORSH_GATHER_INLINE T finish(Acc acc, const I* c, const T* v, const T* x, int n) {
    T s = sum(acc);
    for (int i = 0; i < n; ++i) s += v[i] * x[c[i]];
    return s;
  }
};
template <class I, class T>
struct Lanes;
template <>
struct Lanes<std::int32_t, float> : ScalarTail {
  static constexpr int W = 8;
  using Acc = __m256;
  static TORSH_GATHER_INLINE Acc step(Acc acc, const std::int32_t* c, const float* v, const float* x) {
    const __m256i idx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c));
    return _mm256_fmadd_ps(_mm256_loadu_ps(v), _mm256_mask_i32gather_ps(_mm256_setzero_ps(), x, idx, all_ps(), 4), acc);
  }
};
template <>
struct Lanes<std::int64_t, float> : ScalarTail {
  static constexpr int W = 4;
  using Acc = __m128;
  static TORSH_GATHER_INLINE Acc step(Acc acc, const std::int64_t* c, const float* v, const float* x) {
    const __m256i idx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c));
    const __m128 xv = _mm256_mask_i64gather_ps(_mm_setzero_ps(), x, idx, _mm256_castps256_ps128(all_ps()), 4);
    return _mm_fmadd_ps(_mm_loadu_ps(v), xv, acc);
  }
};
template <>
struct Lanes<std::int32_t, double> : ScalarTail {
  static constexpr int W = 4;
  using Acc = __m256d;
  static TORSH_GATHER_INLINE Acc step(Acc acc, const std::int32_t* c, const double* v, const double* x) {
    const __m128i idx = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c));
    const __m256d xv = _mm256_mask_i32gather_pd(_mm256_setzero_pd(), x, idx, _mm256_castps_pd(all_ps()), 8);
    return _mm256_fmadd_pd(_mm256_loadu_pd(v), xv, acc);
  }
};
template <>
struct Lanes<std::int64_t, double> : ScalarTail {
  static constexpr int W = 4;
  using Acc = __m256d;
  static TORSH_GATHER_INLINE Acc step(Acc acc, const std::int64_t* c, const double* v, const double* x) {
    const __m256i idx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c));
    const __m256d xv = _mm256_mask_i64gather_pd(_mm256_setzero_pd(), x, idx, _mm256_castps_pd(all_ps()), 8);
    return _mm256_fmadd_pd(_mm256_loadu_pd(v), xv, acc);
  }
};

#include "spmv_gather_rows.hpp"

}  // namespace avx2
}  // namespace
#pragma GCC pop_options
#endif

namespace {
// The gathers pay off on Intel's cores only (src/backends/cpu/README.md, sparse_matmul).
Isa level() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  static const Isa l = intel_cpu() ? vector_isa() : Isa::Generic;
  return l;
#else
  return Isa::Generic;
#endif
}

template <class I, class T>
void dispatch(const I* p, const I* c, const T* v, const T* x, T* y, std::int64_t r0, std::int64_t r1,
              std::int64_t ahead) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if (level() == Isa::Avx512) return avx512::rows(p, c, v, x, y, r0, r1, ahead);
  avx2::rows(p, c, v, x, y, r0, r1, ahead);
#else
  (void)p, (void)c, (void)v, (void)x, (void)y, (void)r0, (void)r1, (void)ahead;
#endif
}
}  // namespace

const char* spmv_gather_level() {
  return level() == Isa::Avx512 ? "avx512 gather" : level() == Isa::Avx2 ? "avx2 gather" : nullptr;
}

void spmv_gather(const std::int32_t* p, const std::int32_t* c, const float* v, const float* x, float* y,
                 std::int64_t r0, std::int64_t r1, std::int64_t ahead) {
  dispatch(p, c, v, x, y, r0, r1, ahead);
}
void spmv_gather(const std::int64_t* p, const std::int64_t* c, const float* v, const float* x, float* y,
                 std::int64_t r0, std::int64_t r1, std::int64_t ahead) {
  dispatch(p, c, v, x, y, r0, r1, ahead);
}
void spmv_gather(const std::int32_t* p, const std::int32_t* c, const double* v, const double* x, double* y,
                 std::int64_t r0, std::int64_t r1, std::int64_t ahead) {
  dispatch(p, c, v, x, y, r0, r1, ahead);
}
void spmv_gather(const std::int64_t* p, const std::int64_t* c, const double* v, const double* x, double* y,
                 std::int64_t r0, std::int64_t r1, std::int64_t ahead) {
  dispatch(p, c, v, x, y, r0, r1, ahead);
}

}  // namespace torsh::cpu
