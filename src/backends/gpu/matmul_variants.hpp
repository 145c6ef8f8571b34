#pragma once
// The register-blocked GEMM variants of matmul.kern.h (MM_VARIANT), for the
// C-family backends to choose from: each computes a bm x bn tile of C per
// work-group, tm x tn outputs per work-item, stepping k by bk. Same order and
// names as the kernel file; kernels are matmul_<name>_f32 and matmul_<name>_h16.
#include <array>
#include <cstdint>
#include <span>

#include "torsh/backend/backend_impl.hpp"

namespace torsh::gpu {

struct MatmulVariant {
  const char* name;  // "t64x64_r4x4"
  const char* f32;   // kernel for f32 storage
  const char* h16;   // kernel for f16 / bf16 storage
  int bm, bn, bk, tm, tn;
  int threads_x() const { return bn / tn; }
  int threads_y() const { return bm / tm; }
  int threads() const { return threads_x() * threads_y(); }
};

#define TORSH_MM_VARIANT(name, bm, bn, bk, tm, tn) \
  MatmulVariant { #name, "matmul_" #name "_f32", "matmul_" #name "_h16", bm, bn, bk, tm, tn }
inline constexpr std::array<MatmulVariant, 8> kMatmulVariants{
    TORSH_MM_VARIANT(t16x16_r1x1, 16, 16, 16, 1, 1),  TORSH_MM_VARIANT(t32x32_r4x4, 32, 32, 16, 4, 4),
    TORSH_MM_VARIANT(t64x64_r4x4, 64, 64, 16, 4, 4),  TORSH_MM_VARIANT(t64x64_r8x4, 64, 64, 16, 8, 4),
    TORSH_MM_VARIANT(t128x64_r8x4, 128, 64, 8, 8, 4), TORSH_MM_VARIANT(t128x128_r8x8, 128, 128, 8, 8, 8),
    TORSH_MM_VARIANT(t8x128_r1x8, 8, 128, 16, 1, 8),  TORSH_MM_VARIANT(t128x8_r8x1, 128, 8, 16, 8, 1),
};
#undef TORSH_MM_VARIANT

// The f64 kernel (matmul_f64_t32x32_r2x2): one variant.
inline constexpr MatmulVariant kMatmulF64{
    "t32x32_r2x2", "matmul_f64_t32x32_r2x2", "matmul_f64_t32x32_r2x2", 32, 32, 16, 2, 2};

// The variant used without measurements: small tiles while a bigger one would
// leave most of the device idle or most of its tile empty, larger ones as the
// output grows. Outputs of at most 8 rows (or columns) take the 8 x 128 (128 x
// 8) tiles, which beat t32x32_r4x4 there, which in turn beats one output per
// work-item, t16x16_r1x1 (src/backends/gpu/README.md, matmul_variants.hpp).
inline const MatmulVariant& default_matmul_variant(std::int64_t batch, std::int64_t m, std::int64_t n) {
  const std::int64_t outputs = batch * m * n;
  if (m <= 8 && n > 8) return kMatmulVariants[6];
  if (n <= 8 && m > 8) return kMatmulVariants[7];
  if (m <= 8 || outputs < 128 * 128) return kMatmulVariants[1];
  if (outputs < 512 * 512) return kMatmulVariants[2];
  return kMatmulVariants[4];
}

// Size class of a GEMM for tuning: log2 of m, n and k, each capped, so
// shapes of the same magnitude share one measurement.
inline std::array<int, 3> matmul_size_class(std::int64_t m, std::int64_t n, std::int64_t k) {
  const auto lg = [](std::int64_t v) {
    int l = 0;
    while (l < 12 && (std::int64_t{1} << (l + 1)) <= v) ++l;
    return l;
  };
  return {lg(m), lg(n), lg(k)};
}

}  // namespace torsh::gpu
