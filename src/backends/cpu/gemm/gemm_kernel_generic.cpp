// Portable f32 micro-kernel: plain loops over a 4 x 16 tile that any compiler
// turns into baseline SIMD (SSE2 on x86-64, NEON on arm64). It keeps the
// library correct and reasonably fast where no tuned kernel applies.
#include "gemm.hpp"
#include "gemm_tile.hpp"

namespace torsh::cpu::gemm {
namespace {

constexpr int kMR = 4, kNR = 16;

struct GenericF32 {
  template <int M, int NV>
  static void run(std::int64_t kc, const void* pa, const void* pb, float* c, std::int64_t ldc, float alpha, float beta,
                  int nr) {
    const float* a = static_cast<const float*>(pa);
    const float* b = static_cast<const float*>(pb);
    float acc[M][kNR] = {};
    for (std::int64_t p = 0; p < kc; ++p) {
      for (int i = 0; i < M; ++i) {
        const float av = a[i];
        for (int j = 0; j < kNR; ++j) acc[i][j] += av * b[j];
      }
      a += kMR;
      b += kNR;
    }
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < nr; ++j) {
        float& dst = c[i * ldc + j];
        dst = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * dst;
      }
  }
};

void tile(int mr, int nr, std::int64_t kc, const void* a, const void* b, float* c, std::int64_t ldc, float alpha,
          float beta) {
  static constexpr TileTable<GenericF32, kMR, 1> table;
  table.call(mr, nr, kNR, kc, a, b, c, ldc, alpha, beta);
}

}  // namespace

const Kernel& kernel_generic_f32() {
  static const Kernel k{"generic-f32-4x16", Panel::F32,     Resident::APanel, kMR, kNR, 256, 256, 256, &tile,
                        &pack_a_generic,    &pack_b_generic};
  return k;
}

}  // namespace torsh::cpu::gemm
