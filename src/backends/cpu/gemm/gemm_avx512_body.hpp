// The AVX-512 tile of gemm.hpp, written once over what a k step reads.
// Included by each kernel's file inside its target pragma (no include guard:
// once per file), with S providing:
//   elem: what the packed panels hold per row and step (float; a 32-bit
//     pair of bf16);
//   steps(kc): the k steps of a kc-deep panel pair;
//   kTail: steps left after the main loop, which start fetching C;
//   step<M, NV>(acc, a, b): acc[i][v] += row i of a times vector v of b.
// M rows by NV 16-float vectors of accumulators stay in zmm registers over
// the whole k; A values are broadcast as FMA operands, so each step is M * NV
// FMAs against NV vector loads.
template <class S, int MR, int NR, int Prefetch>
struct Avx512Tile {
  template <int M, int NV>
  static void run(std::int64_t kc, const void* pa, const void* pb, float* c, std::int64_t ldc, float alpha, float beta,
                  int nr) {
    const auto* a = static_cast<const typename S::elem*>(pa);
    const auto* b = static_cast<const typename S::elem*>(pb);
    __m512 acc[M][NV];
#pragma GCC unroll 16
    for (int i = 0; i < M; ++i)
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
    const std::int64_t steps = S::steps(kc);
    const std::int64_t main_steps = steps > S::kTail ? steps - S::kTail : 0;
    std::int64_t p = 0;
#pragma GCC unroll 4
    for (; p < main_steps; ++p) {
      _mm_prefetch(reinterpret_cast<const char*>(b + Prefetch * NR), _MM_HINT_T0);
      if constexpr (NV == 2) _mm_prefetch(reinterpret_cast<const char*>(b + Prefetch * NR + 16), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(a + Prefetch * MR), _MM_HINT_T0);
      S::template step<M, NV>(acc, a, b);
      a += MR;
      b += NR;
    }
    prefetch_c<M, NV>(c, ldc);
#pragma GCC unroll 4
    for (; p < steps; ++p) {
      S::template step<M, NV>(acc, a, b);
      a += MR;
      b += NR;
    }
    store_tile<M, NV>(acc, c, ldc, alpha, beta, nr);
  }
};
