// f32 micro-kernel for AVX2 + FMA (x86-64-v3): a 6 x 16 tile is 12 ymm
// accumulators, two B vectors and one broadcast register, 15 of the 16.
#include <immintrin.h>

#include "gemm.hpp"
#include "gemm_tile.hpp"

namespace torsh::cpu::gemm {
namespace {

constexpr int kMR = 6, kNR = 16;
constexpr int kPrefetch = 16;  // k steps ahead along the A panel, which streams from L2

#define TORSH_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

TORSH_AVX2 __m256i lanes_mask(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

struct Avx2F32 {
  template <int M, int NV>
  __attribute__((target("avx2,fma"))) static void run(std::int64_t kc, const void* pa, const void* pb, float* c,
                                                      std::int64_t ldc, float alpha, float beta, int nr) {
    const float* a = static_cast<const float*>(pa);
    const float* b = static_cast<const float*>(pb);
    __m256 acc[M][NV];
#pragma GCC unroll 8
    for (int i = 0; i < M; ++i) {
      // C comes from L3 or memory; its first and last line are fetched while the k loop runs.
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 8 * NV - 1), _MM_HINT_T0);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_setzero_ps();
    }
    // Unrolled by 2, not more: at 4 GCC spills an accumulator of the 6 x 16
    // tile to the stack (a store and a reload every k step).
#pragma GCC unroll 2
    for (std::int64_t p = 0; p < kc; ++p) {
      _mm_prefetch(reinterpret_cast<const char*>(a + kPrefetch * kMR), _MM_HINT_T0);
      __m256 bv[NV];
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) bv[v] = _mm256_load_ps(b + 8 * v);
#pragma GCC unroll 8
      for (int i = 0; i < M; ++i) {
        const __m256 av = _mm256_broadcast_ss(a + i);
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_fmadd_ps(av, bv[v], acc[i][v]);
      }
      a += kMR;
      b += kNR;
    }
    const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    if (nr == 8 * NV) {
#pragma GCC unroll 8
      for (int i = 0; i < M; ++i)
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) {
          float* cp = c + i * ldc + 8 * v;
          __m256 r = _mm256_mul_ps(acc[i][v], va);
          if (beta != 0.0f) r = _mm256_fmadd_ps(_mm256_loadu_ps(cp), vb, r);
          _mm256_storeu_ps(cp, r);
        }
      return;
    }
    __m256i mk[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) mk[v] = lanes_mask(nr - 8 * v);
#pragma GCC unroll 8
    for (int i = 0; i < M; ++i)
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) {
        float* cp = c + i * ldc + 8 * v;
        __m256 r = _mm256_mul_ps(acc[i][v], va);
        if (beta != 0.0f) r = _mm256_fmadd_ps(_mm256_maskload_ps(cp, mk[v]), vb, r);
        _mm256_maskstore_ps(cp, mk[v], r);
      }
  }
};

void tile(int mr, int nr, std::int64_t kc, const void* a, const void* b, float* c, std::int64_t ldc, float alpha,
          float beta) {
  static constexpr TileTable<Avx2F32, kMR, 2> table;
  table.call(mr, nr, 8, kc, a, b, c, ldc, alpha, beta);
}

}  // namespace

const Kernel& kernel_avx2_f32() {
  // BLIS order: a 24 KB B panel stays in L1, the mc x kc A block in L2, the
  // kc x nc B block in L3. kc = 384 (OpenBLAS's choice for this kernel shape)
  // rather than BLIS's 256: a third fewer passes over C, which matters once
  // C outgrows the last-level cache, and fewer tile prologues and epilogues.
  static const Kernel k{"avx2-f32-6x16", Panel::F32,   Resident::BPanel, kMR, kNR, 384, 4080, 120,
                        &tile,           &pack_a_avx2, &pack_b_avx2};
  return k;
}

const Kernel& kernel_avx2_f32_deep_k() {
  // GotoBLAS order over k blocks of 1024: the 6 x kc A panel (24 KB) stays in
  // L1 and C goes to memory and back 2.7x less often, which beats the BLIS
  // blocking, so it is the built-in choice (gemm.cpp). Its B block (1.5 MB)
  // outgrows a 512 KB L2, yet k blocks of 512 or 768 with B blocks that fit
  // are slower (src/backends/cpu/README.md, gemm).
  static const Kernel k{"avx2-f32-6x16-kc1024", Panel::F32,  Resident::APanel, kMR, kNR, 1024, 384, 1008, &tile,
                        &pack_a_avx2,           &pack_b_avx2};
  return k;
}

}  // namespace torsh::cpu::gemm
