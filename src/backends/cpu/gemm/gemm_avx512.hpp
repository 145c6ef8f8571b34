#pragma once
// Write-back shared by the AVX-512 micro-kernels (f32 and bf16 inputs both
// accumulate in f32 zmm registers): alpha/beta and the masked right edge.
#include <immintrin.h>

#include <cstdint>

#define TORSH_AVX512_INLINE __attribute__((target("avx512f"), always_inline)) inline

namespace torsh::cpu::gemm {

TORSH_AVX512_INLINE __mmask16 lanes_mask(int n) {
  return n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1u);
}

// The C tile is touched once, after the k loop: start fetching it a few dozen
// k steps before the end so the stores do not wait on memory.
template <int M, int NV>
TORSH_AVX512_INLINE void prefetch_c(const float* c, std::int64_t ldc) {
#pragma GCC unroll 16
  for (int i = 0; i < M; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    if constexpr (NV == 2) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16), _MM_HINT_T0);
  }
}

// c[i * ldc + j] = alpha * acc + beta * c for j < nr; beta == 0 never reads c.
template <int M, int NV>
TORSH_AVX512_INLINE void store_tile(const __m512 (&acc)[M][NV], float* c, std::int64_t ldc, float alpha, float beta,
                                    int nr) {
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  if (nr == 16 * NV) {
    if (beta == 0.0f) {
#pragma GCC unroll 16
      for (int i = 0; i < M; ++i)
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) _mm512_storeu_ps(c + i * ldc + 16 * v, _mm512_mul_ps(acc[i][v], va));
    } else {
#pragma GCC unroll 16
      for (int i = 0; i < M; ++i)
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) {
          float* cp = c + i * ldc + 16 * v;
          _mm512_storeu_ps(cp, _mm512_fmadd_ps(acc[i][v], va, _mm512_mul_ps(_mm512_loadu_ps(cp), vb)));
        }
    }
    return;
  }
  __mmask16 mk[NV];
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v) mk[v] = lanes_mask(nr - 16 * v);
#pragma GCC unroll 16
  for (int i = 0; i < M; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      float* cp = c + i * ldc + 16 * v;
      __m512 r = _mm512_mul_ps(acc[i][v], va);
      if (beta != 0.0f) r = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mk[v], cp), vb, r);
      _mm512_mask_storeu_ps(cp, mk[v], r);
    }
}

}  // namespace torsh::cpu::gemm
