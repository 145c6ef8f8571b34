// Write-back of f32 tiles into a C the kernels cannot store to directly
// (f16 or bf16, or a non-unit column stride), with alpha and beta; the
// conversions are inline so a row of a contiguous tile vectorises.
#include "../simd/simd.hpp"
#include "gemm.hpp"
#include "gemm_convert.hpp"

namespace torsh::cpu::gemm {
namespace {

template <class T>
[[gnu::always_inline]] inline void store(const float* acc, std::int64_t lda, T* c, std::int64_t rs, std::int64_t cs,
                                         int mr, int nr, float alpha, float beta) {
  for (int i = 0; i < mr; ++i) {
    const float* a = acc + i * lda;
    T* d = c + i * rs;
    if (cs == 1) {
      if (beta == 0.0f)
        for (int j = 0; j < nr; ++j) d[j] = from_f32<T>(alpha * a[j]);
      else
        for (int j = 0; j < nr; ++j) d[j] = from_f32<T>(alpha * a[j] + beta * to_f32(d[j]));
    } else {
      for (int j = 0; j < nr; ++j) {
        T& x = d[j * cs];
        x = from_f32<T>(beta == 0.0f ? alpha * a[j] : alpha * a[j] + beta * to_f32(x));
      }
    }
  }
}

TORSH_SIMD_CLONES void store_f32(const float* acc, std::int64_t lda, float* c, std::int64_t rs, std::int64_t cs, int mr,
                                 int nr, float alpha, float beta) {
  store(acc, lda, c, rs, cs, mr, nr, alpha, beta);
}
TORSH_SIMD_CLONES void store_f16(const float* acc, std::int64_t lda, f16_t* c, std::int64_t rs, std::int64_t cs, int mr,
                                 int nr, float alpha, float beta) {
  store(acc, lda, c, rs, cs, mr, nr, alpha, beta);
}
TORSH_SIMD_CLONES void store_bf16(const float* acc, std::int64_t lda, bf16_t* c, std::int64_t rs, std::int64_t cs,
                                  int mr, int nr, float alpha, float beta) {
  store(acc, lda, c, rs, cs, mr, nr, alpha, beta);
}

}  // namespace

void store_tile(const float* acc, std::int64_t lda, const Problem& p, std::int64_t i0, std::int64_t j0, int mr,
                int nr) {
  const std::int64_t off = i0 * p.c_rs + j0 * p.c_cs;
  switch (p.c_dtype) {
    case DType::F16:
      return store_f16(acc, lda, static_cast<f16_t*>(p.c) + off, p.c_rs, p.c_cs, mr, nr, p.alpha, p.beta);
    case DType::BF16:
      return store_bf16(acc, lda, static_cast<bf16_t*>(p.c) + off, p.c_rs, p.c_cs, mr, nr, p.alpha, p.beta);
    default: return store_f32(acc, lda, static_cast<float*>(p.c) + off, p.c_rs, p.c_cs, mr, nr, p.alpha, p.beta);
  }
}

}  // namespace torsh::cpu::gemm
