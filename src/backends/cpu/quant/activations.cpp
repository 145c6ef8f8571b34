// Activation rows quantized per 32-block for the integer dot products
// (qmatmul_kernels.hpp). Every instruction set's kernels read the same
// levels, so they differ only in the order they add the scaled block sums.
#include <algorithm>
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

// The Int16 block: q = round-half-even(x / d) with d = amax / 32767, and s =
// the f32 sum of x (Q4_1's m_w term then carries no activation rounding).
// Elements 0-15 go to q[0, 16), 16-31 to q[32, 48) (act16_block).
TORSH_SIMD_CLONES
void quantize_block16(const float* x, std::int16_t* q, float* d, float* s, float* s16) {
  float amax = 0.0f, sum = 0.0f, half[2] = {0.0f, 0.0f};
  bool finite = true;
  for (int i = 0; i < kBlock; ++i) {
    amax = std::max(amax, std::fabs(x[i]));
    finite &= std::fabs(x[i]) <= std::numeric_limits<float>::max();
    sum += x[i];
    half[i / 16] += x[i];
  }
  s16[0] = half[0];
  s16[1] = half[1];
  auto at = [q](int i) -> std::int16_t& { return q[i < 16 ? i : i + 16]; };
  if (!finite) {  // as in quantize_block: the row's outputs become NaN
    for (int i = 0; i < kBlock; ++i) at(i) = 0;
    *d = *s = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const float scale = amax / 32767.0f;
  const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
  for (int i = 0; i < kBlock; ++i)  // the clamp only catches 1/scale rounding past 32767.5
    at(i) = static_cast<std::int16_t>(std::clamp(std::nearbyint(x[i] * inv), -32767.0f, 32767.0f));
  *d = scale;
  *s = sum;
}

}  // namespace

std::size_t act_scratch_bytes(QuantActivations width, std::int64_t m, std::int64_t k) {
  const auto mk = static_cast<std::size_t>(m * k), mb = static_cast<std::size_t>(m * (k / kBlock));
  if (width == QuantActivations::Int16)
    return align64(static_cast<std::size_t>(m * ((k / kBlock + 1) / 2) * 64) * 2) + 4 * align64(mb * sizeof(float));
  return align64(mk) + 2 * align64(mb * sizeof(float)) + align64(mb * 8 * sizeof(std::int32_t));
}

ActRows act_layout(QuantActivations width, void* scratch, std::int64_t m, std::int64_t k) {
  const auto mk = static_cast<std::size_t>(m * k), mb = static_cast<std::size_t>(m * (k / kBlock));
  auto* p = static_cast<char*>(scratch);
  ActRows a;
  a.width = width;
  a.m = m;
  a.k = k;
  a.nb = k / kBlock;
  if (width == QuantActivations::Int16) {
    a.q16 = reinterpret_cast<std::int16_t*>(p);
    a.row16 = (a.nb + 1) / 2 * 64;
    p += align64(static_cast<std::size_t>(m * a.row16) * 2);
  } else {
    a.q = reinterpret_cast<std::int8_t*>(p);
    p += align64(mk);
  }
  a.d = reinterpret_cast<float*>(p);
  p += align64(mb * sizeof(float));
  a.s = reinterpret_cast<float*>(p);
  p += align64(mb * sizeof(float));
  if (width == QuantActivations::Int8) a.corr = reinterpret_cast<std::int32_t*>(p);
  if (width == QuantActivations::Int16) a.s16 = reinterpret_cast<float*>(p);  // 2 mb floats
  return a;
}

void quantize_act_rows(const float* x, const ActRows& a, QuantFormat f, std::int64_t r0, std::int64_t r1) {
  const int offset = weight_offset(f);
  for (std::int64_t r = r0; r < r1; ++r)
    for (std::int64_t b = 0; b < a.nb; ++b) {
      const std::int64_t blk = r * a.nb + b;
      const float* xb = x + r * a.k + b * kBlock;
      if (a.width == QuantActivations::Int16)
        quantize_block16(xb, act16_block(a, r, b), a.d + blk, a.s + blk, a.s16 + 2 * blk);
      else
        quantize_block(xb, a.q + blk * kBlock, a.d + blk, a.s + blk, a.corr + blk * 8, offset);
    }
  if (a.width == QuantActivations::Int16 && a.nb % 2 == 1)  // the last pair's missing block: zeros
    for (std::int64_t r = r0; r < r1; ++r) {
      std::int16_t* q = act16_block(a, r, a.nb);
      std::fill(q, q + 16, std::int16_t{0});
      std::fill(q + 32, q + 48, std::int16_t{0});
    }
}

}  // namespace torsh::cpu::quant
