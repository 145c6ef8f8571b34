// The K formats' host conversions. Dequantization rounds as ggml's reference
// (and the gguf package) does: d * sc and dmin * m in f32, then
// (d sc) q - dmin m, no fused multiply-add. Quantization takes one pass
// (quant.hpp); the scales it picks are stored first, then every level is
// rounded under the stored (f16, 6-bit) scales, so dequantizing gives the
// nearest level of the block as stored.
#include <algorithm>
#include <cmath>

#include "quant_k.hpp"

namespace torsh::kquant {
namespace {

constexpr int kSub = 32;

void put_f16(unsigned char* p, float v) {
  const std::uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

// Nearest integer in [lo, hi]; NaN (a NaN element or 0 / 0) gives `nan_level`.
int nearest(float v, int lo, int hi, int nan_level) {
  if (std::isnan(v)) return nan_level;
  return static_cast<int>(std::nearbyint(std::clamp(v, static_cast<float>(lo), static_cast<float>(hi))));
}

// The 6-bit (8-bit) multiple of `unit` at least as large as |v| (so the levels
// cover the sub-block's range), with v's sign, within [lo, hi].
int covering(float v, float unit, int lo, int hi) {
  if (!(unit != 0.0f) || std::isnan(v / unit)) return 0;
  const float r = v / unit;
  return static_cast<int>(
      std::clamp(std::copysign(std::ceil(std::fabs(r)), r), static_cast<float>(lo), static_cast<float>(hi)));
}

// A value with NaN read as 0 (the level of 0 is what a NaN element gets).
float finite_or_zero(float v) { return std::isnan(v) ? 0.0f : v; }

// Q4_K (top 15) and Q5_K (top 31).
void quantize_with_min(const float* x, unsigned char* b, int top) {
  float scale[kSubBlocks], low[kSubBlocks];  // per sub-block: step and -min (>= 0)
  float max_scale = 0.0f, max_low = 0.0f;
  for (int j = 0; j < kSubBlocks; ++j) {
    float mn = 0.0f, mx = 0.0f;  // the range always holds 0, as ggml's
    for (int e = 0; e < kSub; ++e) {
      const float v = finite_or_zero(x[kSub * j + e]);
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
    scale[j] = (mx - mn) / static_cast<float>(top);
    low[j] = -mn;
    max_scale = std::max(max_scale, scale[j]);
    max_low = std::max(max_low, low[j]);
  }
  put_f16(b, max_scale / 63.0f);
  put_f16(b + 2, max_low / 63.0f);
  const float d = half_at(b), dmin = half_at(b + 2);
  int sc[kSubBlocks], m[kSubBlocks];
  for (int j = 0; j < kSubBlocks; ++j) {
    sc[j] = covering(scale[j], d, 0, 63);
    m[j] = dmin > 0.0f ? nearest(low[j] / dmin, 0, 63, 0) : 0;
  }
  unsigned char* s = b + kScalesAt;
  for (int i = 0; i < 4; ++i) {
    s[i] = static_cast<unsigned char>(sc[i] | ((sc[i + 4] >> 4) << 6));
    s[i + 4] = static_cast<unsigned char>(m[i] | ((m[i + 4] >> 4) << 6));
    s[i + 8] = static_cast<unsigned char>((sc[i + 4] & 0x0F) | ((m[i + 4] & 0x0F) << 4));
  }
  const bool five = top == 31;
  unsigned char* qs = b + (five ? kQ5Nibbles : kQ4Nibbles);
  unsigned char* qh = b + kQ5High;
  std::memset(qs, 0, 128);
  if (five) std::memset(qh, 0, 32);
  for (int j = 0; j < kSubBlocks; ++j) {
    float dw, mw;
    sub_scales(five ? QuantFormat::Q5_K : QuantFormat::Q4_K, b, j, dw, mw);
    const float inv = dw > 0.0f ? 1.0f / dw : 0.0f;
    for (int e = 0; e < kSub; ++e) {
      const int q = nearest((finite_or_zero(x[kSub * j + e]) - mw) * inv, 0, top, 0);
      qs[32 * (j / 2) + e] |= static_cast<unsigned char>((q & 0x0F) << (4 * (j % 2)));
      if (five) qh[e] |= static_cast<unsigned char>((q >> 4) << j);
    }
  }
}

void quantize_q6_k(const float* x, unsigned char* b) {
  float scale[16];  // per 16 elements: the value of largest magnitude / -32
  float max_scale = 0.0f;
  for (int g = 0; g < 16; ++g) {
    float amax = 0.0f, max = 0.0f;
    for (int e = 0; e < 16; ++e) {
      const float v = finite_or_zero(x[16 * g + e]);
      if (std::fabs(v) > amax) {
        amax = std::fabs(v);
        max = v;
      }
    }
    scale[g] = max / -32.0f;
    if (std::fabs(scale[g]) > std::fabs(max_scale)) max_scale = scale[g];
  }
  put_f16(b + kQ6D, max_scale / -128.0f);
  const float d = half_at(b + kQ6D);
  for (int g = 0; g < 16; ++g) {
    const int sc = covering(scale[g], d, -128, 127);
    b[kQ6Scales + g] = static_cast<unsigned char>(static_cast<std::int8_t>(sc));
  }
  std::memset(b, 0, kQ6Scales);
  for (int j = 0; j < kSubBlocks; ++j) {
    const int h = j / 4, s = j % 4;
    for (int e = 0; e < kSub; ++e) {
      const float dw = d * static_cast<float>(scale16(QuantFormat::Q6_K, b, j, e / 16));
      const float inv = dw != 0.0f ? 1.0f / dw : 0.0f;
      const int q = nearest(finite_or_zero(x[kSub * j + e]) * inv, -32, 31, 0) + 32;
      b[64 * h + 32 * (s % 2) + e] |= static_cast<unsigned char>((q & 0x0F) << (4 * (s / 2)));
      b[kQ6High + 32 * h + e] |= static_cast<unsigned char>((q >> 4) << (2 * s));
    }
  }
}

// The nibble of the level nearest v (NaN takes the level nearest 0).
int nearest_iq4(float v) {
  if (std::isnan(v)) v = 0.0f;
  int best = 0;
  for (int q = 1; q < 16; ++q)
    if (std::fabs(v - kIq4Levels[q]) < std::fabs(v - kIq4Levels[best])) best = q;
  return best;
}

// 32 elements under scale d as Q4_0-laid nibbles: element e < 16 low, else high.
void iq4_nibbles(const float* x, float d, unsigned char* qs) {
  const float inv = d != 0.0f ? 1.0f / d : 0.0f;
  for (int e = 0; e < 16; ++e)
    qs[e] = static_cast<unsigned char>(nearest_iq4(finite_or_zero(x[e]) * inv) |
                                       (nearest_iq4(finite_or_zero(x[e + 16]) * inv) << 4));
}

// The value of largest magnitude, with its sign, over n elements (NaN as 0).
float signed_max(const float* x, int n) {
  float amax = 0.0f, max = 0.0f;
  for (int e = 0; e < n; ++e) {
    const float v = finite_or_zero(x[e]);
    if (std::fabs(v) > amax) {
      amax = std::fabs(v);
      max = v;
    }
  }
  return max;
}

// IQ4_XS: per sub-block the scale that puts its value of largest magnitude on
// the level -127, as a multiple (-32..31, rounded up in magnitude) of d.
void quantize_iq4_xs(const float* x, unsigned char* b) {
  float scale[kSubBlocks], big = 0.0f;
  for (int j = 0; j < kSubBlocks; ++j) {
    scale[j] = signed_max(x + kSub * j, kSub) / -127.0f;
    if (std::fabs(scale[j]) > std::fabs(big)) big = scale[j];
  }
  put_f16(b, big / -32.0f);
  const float d = half_at(b);
  std::uint16_t high = 0;
  std::memset(b + kXsScalesL, 0, 4);
  for (int j = 0; j < kSubBlocks; ++j) {
    const int ls = covering(scale[j], d, -32, 31) + 32;
    b[kXsScalesL + j / 2] |= static_cast<unsigned char>((ls & 0x0F) << (4 * (j % 2)));
    high |= static_cast<std::uint16_t>((ls >> 4) << (2 * j));
  }
  std::memcpy(b + kXsScalesH, &high, 2);
  for (int j = 0; j < kSubBlocks; ++j) {
    float dw, mw;
    sub_scales(QuantFormat::IQ4_XS, b, j, dw, mw);
    iq4_nibbles(x + kSub * j, dw, b + kXsNibbles + 16 * j);
  }
}

// Q2_K: per 16 elements a step (max - min) / 3 and minimum (range holding 0),
// 4-bit multiples of d and dmin (the step rounded up), levels 0..3.
void quantize_q2_k(const float* x, unsigned char* b) {
  float step[16], low[16], max_step = 0.0f, max_low = 0.0f;
  for (int g = 0; g < 16; ++g) {
    float mn = 0.0f, mx = 0.0f;
    for (int e = 0; e < 16; ++e) {
      mn = std::min(mn, finite_or_zero(x[16 * g + e]));
      mx = std::max(mx, finite_or_zero(x[16 * g + e]));
    }
    step[g] = (mx - mn) / 3.0f;
    low[g] = -mn;
    max_step = std::max(max_step, step[g]);
    max_low = std::max(max_low, low[g]);
  }
  put_f16(b + kQ2D, max_step / 15.0f);
  put_f16(b + kQ2D + 2, max_low / 15.0f);
  const float d = half_at(b + kQ2D), dmin = half_at(b + kQ2D + 2);
  for (int g = 0; g < 16; ++g)
    b[g] = static_cast<unsigned char>(covering(step[g], d, 0, 15) |
                                      ((dmin > 0.0f ? nearest(low[g] / dmin, 0, 15, 0) : 0) << 4));
  std::memset(b + kQ2Bits, 0, 64);
  for (int j = 0; j < kSubBlocks; ++j) {
    float mins[2];
    sub_mins16(b, j, mins);
    for (int e = 0; e < kSub; ++e) {
      const float dl = d * static_cast<float>(scale16(QuantFormat::Q2_K, b, j, e / 16));
      const float inv = dl > 0.0f ? 1.0f / dl : 0.0f;
      const int q = nearest((finite_or_zero(x[kSub * j + e]) - mins[e / 16]) * inv, 0, 3, 0);
      b[kQ2Bits + 32 * (j / 4) + e] |= static_cast<unsigned char>(q << (2 * (j % 4)));
    }
  }
}

// Q3_K: per 16 elements the value of largest magnitude over -4 (levels -4..3),
// 6-bit multiples (-32..31) of d.
void quantize_q3_k(const float* x, unsigned char* b) {
  float scale[16], big = 0.0f;
  for (int g = 0; g < 16; ++g) {
    scale[g] = signed_max(x + 16 * g, 16) / -4.0f;
    if (std::fabs(scale[g]) > std::fabs(big)) big = scale[g];
  }
  put_f16(b + kQ3D, big / -32.0f);
  const float d = half_at(b + kQ3D);
  std::memset(b, 0, kQ3D);
  for (int i = 0; i < 16; ++i) {
    const int sc = covering(scale[i], d, -32, 31) + 32;
    b[kQ3Scales + i % 8] |= static_cast<unsigned char>((sc & 0x0F) << (4 * (i / 8)));
    b[kQ3Scales + 8 + i % 4] |= static_cast<unsigned char>((sc >> 4) << (2 * (i / 4)));
  }
  for (int j = 0; j < kSubBlocks; ++j)
    for (int e = 0; e < kSub; ++e) {
      const float dl = d * static_cast<float>(q3_scale(b, 2 * j + e / 16));
      const float inv = dl != 0.0f ? 1.0f / dl : 0.0f;
      const int q = nearest(finite_or_zero(x[kSub * j + e]) * inv, -4, 3, 0) + 4;  // 0..7
      b[kQ3Bits + 32 * (j / 4) + e] |= static_cast<unsigned char>((q & 3) << (2 * (j % 4)));
      if (q >= 4) b[e] |= static_cast<unsigned char>(1u << j);
    }
}

}  // namespace

void quantize_block(QuantFormat f, const float* x, unsigned char* b) {
  if (f == QuantFormat::Q6_K)
    quantize_q6_k(x, b);
  else if (f == QuantFormat::Q2_K)
    quantize_q2_k(x, b);
  else if (f == QuantFormat::Q3_K)
    quantize_q3_k(x, b);
  else if (f == QuantFormat::IQ4_XS)
    quantize_iq4_xs(x, b);
  else
    quantize_with_min(x, b, f == QuantFormat::Q5_K ? 31 : 15);
}

void quantize_iq4_nl(const float* x, unsigned char* b) {
  put_f16(b, signed_max(x, kSub) / -127.0f);
  iq4_nibbles(x, half_at(b), b + 2);
}

void dequantize_iq4_nl(const unsigned char* b, float* y) {
  const float d = half_at(b);
  for (int e = 0; e < kSub; ++e) y[e] = d * static_cast<float>(kIq4Levels[nibble_at(b + 2, e)]);
}

void dequantize_block(QuantFormat f, const unsigned char* b, float* y) {
  for (int j = 0; j < kSubBlocks; ++j) {
    if (f == QuantFormat::Q2_K || f == QuantFormat::Q3_K) {  // (d sc) q [- dmin m], per 16 elements
      const float d = half_at(b + (f == QuantFormat::Q2_K ? kQ2D : kQ3D));
      float mins[2] = {0.0f, 0.0f};
      if (f == QuantFormat::Q2_K) sub_mins16(b, j, mins);
      for (int e = 0; e < kSub; ++e) {
        const float dl = d * static_cast<float>(scale16(f, b, j, e / 16));
        const float v = dl * static_cast<float>(sub_level(f, b, j, e));
        y[kSub * j + e] = f == QuantFormat::Q2_K ? v + mins[e / 16] : v;  // (Q3_K's -0 stays -0)
      }
    } else if (f == QuantFormat::IQ4_XS) {
      float dw, mw;
      sub_scales(f, b, j, dw, mw);
      for (int e = 0; e < kSub; ++e) y[kSub * j + e] = dw * static_cast<float>(sub_level(f, b, j, e));
    } else if (f == QuantFormat::Q6_K) {
      const float d = half_at(b + kQ6D);
      for (int e = 0; e < kSub; ++e) {
        const float dw = d * static_cast<float>(scale16(QuantFormat::Q6_K, b, j, e / 16));
        y[kSub * j + e] = dw * static_cast<float>(sub_level(f, b, j, e));
      }
    } else {
      float dw, mw;
      sub_scales(f, b, j, dw, mw);
      for (int e = 0; e < kSub; ++e) y[kSub * j + e] = dw * static_cast<float>(sub_level(f, b, j, e)) + mw;
    }
  }
}

}  // namespace torsh::kquant
