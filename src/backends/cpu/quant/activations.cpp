// Activation rows quantized per 32-block for the integer dot products
// (qmatmul_kernels.hpp). Every instruction set's kernels read the same
// levels, so they differ only in the order they add the scaled block sums.
#include <cmath>
#include <limits>

#include "../simd/simd.hpp"
#include "qmatmul_kernels.hpp"

namespace torsh::cpu::quant {
namespace {

constexpr std::int64_t kBlock = kQuantBlock;

std::size_t align64(std::size_t b) { return (b + 63) / 64 * 64; }

// One block: levels, scale, scaled sum and the correction lanes. Compiled per
// x86 level; the arithmetic (f32 multiply, round half to even) is the same in
// each, so every clone gives the same levels.
TORSH_SIMD_CLONES
void quantize_block(const float* x, std::int8_t* q, float* d, float* s, std::int32_t* corr, int offset) {
  float amax = 0.0f;
  bool finite = true;
  for (int i = 0; i < kBlock; ++i) {
    amax = std::max(amax, std::fabs(x[i]));
    finite &= std::fabs(x[i]) <= std::numeric_limits<float>::max();
  }
  if (!finite) {
    // NaN or infinity: no scale represents the block. A NaN scale makes every
    // output of the row NaN, rather than the element silently counting as 0.
    for (int i = 0; i < kBlock; ++i) q[i] = 0;
    for (int l = 0; l < 8; ++l) corr[l] = 0;
    *d = *s = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const float scale = amax / 127.0f;
  const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
  int sum = 0;
  for (int i = 0; i < kBlock; ++i) {
    q[i] = static_cast<std::int8_t>(std::nearbyint(x[i] * inv));  // |x * inv| <= 127 (+ rounding), round half to even
    sum += q[i];
  }
  for (int l = 0; l < 8; ++l) corr[l] = -offset * (q[4 * l] + q[4 * l + 1] + q[4 * l + 2] + q[4 * l + 3]);
  *d = scale;
  *s = scale * static_cast<float>(sum);
}

}  // namespace

std::size_t act_scratch_bytes(std::int64_t m, std::int64_t k) {
  const auto mk = static_cast<std::size_t>(m * k), mb = static_cast<std::size_t>(m * (k / kBlock));
  return align64(mk) + 2 * align64(mb * sizeof(float)) + align64(mb * 8 * sizeof(std::int32_t));
}

ActRows act_layout(void* scratch, std::int64_t m, std::int64_t k) {
  const auto mk = static_cast<std::size_t>(m * k), mb = static_cast<std::size_t>(m * (k / kBlock));
  auto* p = static_cast<char*>(scratch);
  ActRows a;
  a.m = m;
  a.k = k;
  a.nb = k / kBlock;
  a.q = reinterpret_cast<std::int8_t*>(p);
  p += align64(mk);
  a.d = reinterpret_cast<float*>(p);
  p += align64(mb * sizeof(float));
  a.s = reinterpret_cast<float*>(p);
  p += align64(mb * sizeof(float));
  a.corr = reinterpret_cast<std::int32_t*>(p);
  return a;
}

void quantize_act_rows(const float* x, const ActRows& a, QuantFormat f, std::int64_t r0, std::int64_t r1) {
  const int offset = weight_offset(f);
  for (std::int64_t r = r0; r < r1; ++r)
    for (std::int64_t b = 0; b < a.nb; ++b) {
      const std::int64_t blk = r * a.nb + b;
      quantize_block(x + r * a.k + b * kBlock, a.q + blk * kBlock, a.d + blk, a.s + blk, a.corr + blk * 8, offset);
    }
}

}  // namespace torsh::cpu::quant
