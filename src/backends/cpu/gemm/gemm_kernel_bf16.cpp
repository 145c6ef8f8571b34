// bf16 micro-kernel for AVX512_BF16: vdpbf16ps multiplies 16 pairs of bf16 and
// adds both products to 16 f32 lanes, so one instruction does two k steps of
// a 16-column FMA. Panels hold k in pairs (gemm.hpp); the tile is 14 x 32 as
// in the f32 kernel, with a 32-bit pair of A broadcast per row.
#include <immintrin.h>

#include "gemm.hpp"
#include "gemm_avx512.hpp"
#include "gemm_tile.hpp"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512bf16")

namespace torsh::cpu::gemm {
namespace {

constexpr int kMR = 14, kNR = 32;
constexpr int kPrefetch = 12;  // pair steps ahead

// One step is a pair of k (panels hold k in pairs): vdpbf16ps adds both
// products of 16 bf16 pairs to 16 f32 lanes.
struct Bf16PairSteps {
  using elem = std::int32_t;
  static constexpr std::int64_t kTail = 16;
  static std::int64_t steps(std::int64_t kc) { return (kc + 1) / 2; }
  // acc[i][v] += a[i].lo * b[v].lo + a[i].hi * b[v].hi per lane.
  template <int M, int NV>
  __attribute__((always_inline)) static inline void step(__m512 (&acc)[M][NV], const std::int32_t* a,
                                                         const std::int32_t* b) {
    __m512bh bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bv[v] = (__m512bh)_mm512_load_si512(b + 16 * v);
#pragma GCC unroll 16
    for (int i = 0; i < M; ++i) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32(a[i]);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], av, bv[v]);
    }
  }
};

#include "gemm_avx512_body.hpp"

void tile(int mr, int nr, std::int64_t kc, const void* a, const void* b, float* c, std::int64_t ldc, float alpha,
          float beta) {
  static constexpr TileTable<Avx512Tile<Bf16PairSteps, kMR, kNR, kPrefetch>, kMR, 2> table;
  table.call(mr, nr, 16, kc, a, b, c, ldc, alpha, beta);
}

}  // namespace

// The kernels' descriptions are plain code (callers may read them on any CPU).
#pragma GCC pop_options

const Kernel& kernel_avx512_bf16() {
  // Same footprints as the f32 kernel with half the bytes per k: kc doubles.
  static const Kernel k{"avx512bf16-14x32", Panel::Bf16Pairs, Resident::APanel, kMR, kNR, 768, 512, 1008, &tile,
                        &pack_a_avx512,     &pack_b_avx512};
  return k;
}

const Kernel& kernel_avx512_bf16_deep_k() {
  // The same tile over k blocks of 2048: C goes to memory and back once per
  // 2048 k instead of per 768, and the A panel (57 KB) streams from L2. Where
  // 512-bit ops run on 256-bit units the tile holds the vdpbf16ps peak either
  // way, so the fewer trips of C win (gemm.cpp chooses; src/backends/cpu/README.md, gemm).
  static const Kernel k{"avx512bf16-14x32-kc2048",
                        Panel::Bf16Pairs,
                        Resident::APanel,
                        kMR,
                        kNR,
                        2048,
                        384,
                        1008,
                        &tile,
                        &pack_a_avx512,
                        &pack_b_avx512};
  return k;
}

}  // namespace torsh::cpu::gemm
