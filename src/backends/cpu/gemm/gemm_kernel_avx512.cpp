// f32 micro-kernel for AVX-512: a 14 x 32 tile is 28 zmm accumulators; the two
// B vectors of each k step take two more and the A values are broadcast from
// memory as FMA operands ({1to16}), so the register file is full and each k
// step is 28 FMAs against 2 vector loads. 28 independent chains cover the FMA
// latency (4 cycles on Zen 4, where one 512-bit FMA issues per cycle).
#include <immintrin.h>

#include "gemm.hpp"
#include "gemm_avx512.hpp"
#include "gemm_tile.hpp"

#pragma GCC push_options
#pragma GCC target("avx512f,fma")

namespace torsh::cpu::gemm {
namespace {

constexpr int kMR = 14, kNR = 32;
constexpr int kPrefetch = 12;  // k steps ahead: about 2 KB of B panel, enough to hide an L2 hit

struct F32Steps {
  using elem = float;
  static constexpr std::int64_t kTail = 24;
  static std::int64_t steps(std::int64_t kc) { return kc; }
  // acc[i][v] += a[i] * b[16v .. 16v + 15].
  template <int M, int NV>
  __attribute__((always_inline)) static inline void step(__m512 (&acc)[M][NV], const float* a, const float* b) {
    __m512 bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_ps(b + 16 * v);
#pragma GCC unroll 16
    for (int i = 0; i < M; ++i) {
      const __m512 av = _mm512_set1_ps(a[i]);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
    }
  }
};

#include "gemm_avx512_body.hpp"

void tile(int mr, int nr, std::int64_t kc, const void* a, const void* b, float* c, std::int64_t ldc, float alpha,
          float beta) {
  static constexpr TileTable<Avx512Tile<F32Steps, kMR, kNR, kPrefetch>, kMR, 2> table;
  table.call(mr, nr, 16, kc, a, b, c, ldc, alpha, beta);
}

}  // namespace

// The kernels' descriptions are plain code (callers may read them on any CPU).
#pragma GCC pop_options

const Kernel& kernel_avx512_f32() {
  // kc: a 14 x kc A panel (21 KB) stays in L1 across a row of tiles; kc x nc of
  // B (768 KB) in the 1 MB L2; mc x kc of A (1.5 MB) in L3.
  static const Kernel k{"avx512-f32-14x32", Panel::F32,    Resident::APanel, kMR, kNR, 384, 512, 1008, &tile,
                        &pack_a_avx512,     &pack_b_avx512};
  return k;
}

const Kernel& kernel_avx512_f32_deep_k() {
  // k blocks of 1024: the A panel (57 KB) streams from L2 and C goes to
  // memory and back 2.7x less often (gemm.cpp chooses; src/backends/cpu/README.md, gemm).
  static const Kernel k{"avx512-f32-14x32-kc1024",
                        Panel::F32,
                        Resident::APanel,
                        kMR,
                        kNR,
                        1024,
                        384,
                        1008,
                        &tile,
                        &pack_a_avx512,
                        &pack_b_avx512};
  return k;
}

}  // namespace torsh::cpu::gemm
