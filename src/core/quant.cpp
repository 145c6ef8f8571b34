// Host reference quantizers, rounding as ggml's reference C code (and the
// gguf Python package, which reproduces it) does: every product and sum in
// f32, no fused multiply-add, the scale's reciprocal taken before the scale is
// rounded to f16. tests/quant/make_vectors.py checks that bit for bit.
//
// Non-finite inputs have no level. Comparisons skip NaN (as ggml's loops do),
// and a NaN element is stored as the level of 0 (Q4_1: of the block minimum);
// an infinite element makes the block's scale infinite.
#include "torsh/core/quant.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <string>

#include "quant_k.hpp"
#include "torsh/core/dtype.hpp"

namespace torsh {
namespace {

constexpr int kBlock = static_cast<int>(kQuantBlock);

// A level computed in f32 as an integer in [lo, hi]; NaN takes `nan_level`.
// Truncates toward zero, as the reference's integer conversion does.
int level(float v, int lo, int hi, int nan_level) {
  if (std::isnan(v)) return nan_level;
  return static_cast<int>(std::clamp(v, static_cast<float>(lo), static_cast<float>(hi)));
}

void put_f16(unsigned char* p, float v) {
  const std::uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

float get_f16(const unsigned char* p) {
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// Two nibbles per byte: element j low, element j + 16 high.
void pack_nibbles(const int (&q)[kBlock], unsigned char* qs) {
  for (int j = 0; j < kBlock / 2; ++j) qs[j] = static_cast<unsigned char>(q[j] | (q[j + kBlock / 2] << 4));
}

// Q4_0 and Q5_0 (half = 8 or 16): d = the value of largest magnitude, with
// its sign, / -half; levels 0 .. 2 half - 1 centred on half. x * id lies in
// [-half, half]; + half + 0.5 then truncation rounds to the nearest of
// 0 .. 2 half, and 2 half clamps to 2 half - 1. Returns d.
float centred_levels(const float* x, int half, int (&q)[kBlock]) {
  float amax = 0.0f, max = 0.0f;
  for (int i = 0; i < kBlock; ++i)
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  const float d = max / -static_cast<float>(half);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int i = 0; i < kBlock; ++i) q[i] = level(x[i] * id + (static_cast<float>(half) + 0.5f), 0, 2 * half - 1, half);
  return d;
}

// Q4_1 and Q5_1 (top = 15 or 31): m = the minimum, d = (max - min) / top,
// levels 0 .. top rounded to nearest.
void min_levels(const float* x, int top, int (&q)[kBlock], float& d, float& min) {
  float max = x[0];
  min = x[0];
  for (int i = 0; i < kBlock; ++i) {
    if (x[i] < min || std::isnan(min)) min = x[i];
    if (x[i] > max || std::isnan(max)) max = x[i];
  }
  if (std::isnan(min)) min = max = 0.0f;  // every element NaN
  d = (max - min) / static_cast<float>(top);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int i = 0; i < kBlock; ++i) q[i] = level((x[i] - min) * id + 0.5f, 0, top, 0);
}

// Q5: the low nibbles as Q4 packs them, then bit 4 of each level in qh.
void pack_q5(const int (&q)[kBlock], unsigned char* qh_then_qs) {
  std::uint32_t qh = 0;
  int low[kBlock];
  for (int i = 0; i < kBlock; ++i) {
    low[i] = q[i] & 0x0F;
    qh |= static_cast<std::uint32_t>(q[i] >> 4) << i;
  }
  std::memcpy(qh_then_qs, &qh, 4);
  pack_nibbles(low, qh_then_qs + 4);
}

// Q4_0 (half 8) and Q5_0 (half 16): d, then the levels.
void quantize_centred(const float* x, unsigned char* b, int half) {
  int q[kBlock];
  put_f16(b, centred_levels(x, half, q));
  half == 8 ? pack_nibbles(q, b + 2) : pack_q5(q, b + 2);
}

// Q4_1 (top 15) and Q5_1 (top 31): d, m, then the levels.
void quantize_with_min(const float* x, unsigned char* b, int top) {
  int q[kBlock];
  float d, min;
  min_levels(x, top, q, d, min);
  put_f16(b, d);
  put_f16(b + 2, min);
  top == 15 ? pack_nibbles(q, b + 4) : pack_q5(q, b + 4);
}

void quantize_q8_0(const float* x, unsigned char* b) {
  float amax = 0.0f;
  for (int i = 0; i < kBlock; ++i) amax = std::max(amax, std::fabs(x[i]));  // std::max keeps amax on NaN
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put_f16(b, d);
  for (int i = 0; i < kBlock; ++i) {
    const float v = x[i] * id;                                          // in [-127, 127]
    const int q = std::isnan(v) ? 0 : static_cast<int>(std::round(v));  // half away from zero, as roundf
    b[2 + i] = static_cast<unsigned char>(static_cast<std::int8_t>(std::clamp(q, -127, 127)));
  }
}

void dequantize_q4_0(const unsigned char* b, float* y) {
  const float d = get_f16(b);
  for (int j = 0; j < kBlock / 2; ++j) {
    y[j] = static_cast<float>((b[2 + j] & 0x0F) - 8) * d;
    y[j + kBlock / 2] = static_cast<float>((b[2 + j] >> 4) - 8) * d;
  }
}

void dequantize_q4_1(const unsigned char* b, float* y) {
  const float d = get_f16(b), m = get_f16(b + 2);
  for (int j = 0; j < kBlock / 2; ++j) {
    y[j] = static_cast<float>(b[4 + j] & 0x0F) * d + m;
    y[j + kBlock / 2] = static_cast<float>(b[4 + j] >> 4) * d + m;
  }
}

// The 5-bit levels of a Q5 block whose qh starts at p.
void q5_levels(const unsigned char* p, int (&q)[kBlock]) {
  std::uint32_t qh;
  std::memcpy(&qh, p, 4);
  for (int j = 0; j < kBlock / 2; ++j) {
    q[j] = (p[4 + j] & 0x0F) | static_cast<int>(((qh >> j) & 1u) << 4);
    q[j + kBlock / 2] = (p[4 + j] >> 4) | static_cast<int>(((qh >> (j + kBlock / 2)) & 1u) << 4);
  }
}

void dequantize_q5_0(const unsigned char* b, float* y) {
  const float d = get_f16(b);
  int q[kBlock];
  q5_levels(b + 2, q);
  for (int i = 0; i < kBlock; ++i) y[i] = static_cast<float>(q[i] - 16) * d;
}

void dequantize_q5_1(const unsigned char* b, float* y) {
  const float d = get_f16(b), m = get_f16(b + 2);
  int q[kBlock];
  q5_levels(b + 4, q);
  for (int i = 0; i < kBlock; ++i) y[i] = static_cast<float>(q[i]) * d + m;
}

void dequantize_q8_0(const unsigned char* b, float* y) {
  const float d = get_f16(b);
  for (int i = 0; i < kBlock; ++i) y[i] = static_cast<float>(static_cast<std::int8_t>(b[2 + i])) * d;
}

}  // namespace

std::string_view quant_format_name(QuantFormat f) {
  switch (f) {
    case QuantFormat::Q4_0: return "q4_0";
    case QuantFormat::Q4_1: return "q4_1";
    case QuantFormat::Q8_0: return "q8_0";
    case QuantFormat::Q5_0: return "q5_0";
    case QuantFormat::Q5_1: return "q5_1";
    case QuantFormat::Q4_K: return "q4_k";
    case QuantFormat::Q5_K: return "q5_k";
    case QuantFormat::Q6_K: return "q6_k";
    case QuantFormat::IQ4_NL: return "iq4_nl";
    case QuantFormat::IQ4_XS: return "iq4_xs";
    case QuantFormat::Q2_K: return "q2_k";
    case QuantFormat::Q3_K: return "q3_k";
  }
  return "?";
}

std::optional<QuantFormat> quant_format_from_name(std::string_view name) {
  std::string k(name);
  std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return std::tolower(c); });
  for (QuantFormat f : kAllQuantFormats)
    if (quant_format_name(f) == k) return f;
  return std::nullopt;
}

std::string_view quant_activations_name(QuantActivations a) { return a == QuantActivations::Int8 ? "int8" : "int16"; }

std::optional<QuantActivations> quant_activations_from_name(std::string_view name) {
  std::string k(name);
  std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return std::tolower(c); });
  for (QuantActivations a : {QuantActivations::Int16, QuantActivations::Int8})
    if (quant_activations_name(a) == k) return a;
  return std::nullopt;
}

void quantize_row(QuantFormat f, const float* x, void* blocks, std::int64_t k) {
  auto* b = static_cast<unsigned char*>(blocks);
  const std::size_t bytes = quant_block_bytes(f);
  if (quant_super_blocks(f)) {
    for (std::int64_t i = 0; i + kQuantSuperBlock <= k; i += kQuantSuperBlock, b += bytes)
      kquant::quantize_block(f, x + i, b);
    return;
  }
  for (std::int64_t i = 0; i + kBlock <= k; i += kBlock, b += bytes) {
    switch (f) {
      case QuantFormat::Q4_0: quantize_centred(x + i, b, 8); break;
      case QuantFormat::Q4_1: quantize_with_min(x + i, b, 15); break;
      case QuantFormat::Q8_0: quantize_q8_0(x + i, b); break;
      case QuantFormat::Q5_0: quantize_centred(x + i, b, 16); break;
      case QuantFormat::Q5_1: quantize_with_min(x + i, b, 31); break;
      case QuantFormat::IQ4_NL: kquant::quantize_iq4_nl(x + i, b); break;
      default: break;  // the super-block formats: above
    }
  }
}

void dequantize_row(QuantFormat f, const void* blocks, float* y, std::int64_t k) {
  const auto* b = static_cast<const unsigned char*>(blocks);
  const std::size_t bytes = quant_block_bytes(f);
  if (quant_super_blocks(f)) {
    for (std::int64_t i = 0; i + kQuantSuperBlock <= k; i += kQuantSuperBlock, b += bytes)
      kquant::dequantize_block(f, b, y + i);
    return;
  }
  for (std::int64_t i = 0; i + kBlock <= k; i += kBlock, b += bytes) {
    switch (f) {
      case QuantFormat::Q4_0: dequantize_q4_0(b, y + i); break;
      case QuantFormat::Q4_1: dequantize_q4_1(b, y + i); break;
      case QuantFormat::Q8_0: dequantize_q8_0(b, y + i); break;
      case QuantFormat::Q5_0: dequantize_q5_0(b, y + i); break;
      case QuantFormat::Q5_1: dequantize_q5_1(b, y + i); break;
      case QuantFormat::IQ4_NL: kquant::dequantize_iq4_nl(b, y + i); break;
      default: break;  // the super-block formats: above
    }
  }
}

}  // namespace torsh
