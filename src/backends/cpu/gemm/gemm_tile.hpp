#pragma once
// Edge tiles without wasted work or scratch copies: every micro-kernel is a
// template over the rows it computes (M <= MR) and the vectors per row
// (NV <= NVMAX); this table holds one instantiation per (M, NV) so a tile of
// any size calls straight-line code with all accumulators in registers.
#include <cstdint>
#include <utility>

namespace torsh::cpu::gemm {

using TileImplFn = void (*)(std::int64_t kc, const void* a, const void* b, float* c, std::int64_t ldc, float alpha,
                            float beta, int nr);

template <class Impl, int MR, int NVMAX>
struct TileTable {
  TileImplFn fns[MR][NVMAX] = {};

  constexpr TileTable() { fill(std::make_integer_sequence<int, MR * NVMAX>{}); }

  template <int... I>
  constexpr void fill(std::integer_sequence<int, I...>) {
    ((fns[I / NVMAX][I % NVMAX] = &Impl::template run<I / NVMAX + 1, I % NVMAX + 1>), ...);
  }

  // nr columns take ceil(nr / lanes) vectors.
  void call(int mr, int nr, int lanes, std::int64_t kc, const void* a, const void* b, float* c, std::int64_t ldc,
            float alpha, float beta) const {
    fns[mr - 1][(nr + lanes - 1) / lanes - 1](kc, a, b, c, ldc, alpha, beta, nr);
  }
};

}  // namespace torsh::cpu::gemm
