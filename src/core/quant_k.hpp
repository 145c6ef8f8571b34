#pragma once
// The super-block formats (the K formats and IQ4_XS) read per 32-element
// sub-block (torsh/core/quant.hpp has the layouts), and IQ4_NL's blocks: what
// the host reference conversions and the portable and AVX2 kernels share. Every kernel scales per 32 elements, so a K
// super-block is eight sub-blocks, each with its own d_w (and m_w).
#include <cstdint>
#include <cstring>

#include "torsh/core/dtype.hpp"
#include "torsh/core/quant.hpp"

namespace torsh::kquant {

inline constexpr int kSubBlocks = 8;  // 32-element sub-blocks per super-block

inline float half_at(const unsigned char* p) {
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// Q4_K / Q5_K: the 6-bit scale and minimum of sub-block j from the 12 scale bytes.
inline void scale_min(const unsigned char* s, int j, int& sc, int& m) {
  if (j < 4) {
    sc = s[j] & 63;
    m = s[j + 4] & 63;
  } else {
    sc = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
    m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Byte offsets inside a super-block.
inline constexpr int kScalesAt = 4;    // Q4_K, Q5_K: after d and dmin
inline constexpr int kQ4Nibbles = 16;  // Q4_K
inline constexpr int kQ5High = 16;     // Q5_K: 32 bytes of 5th bits
inline constexpr int kQ5Nibbles = 48;  // Q5_K
inline constexpr int kQ6High = 128;    // Q6_K: after 128 bytes of low nibbles
inline constexpr int kQ6Scales = 192;  // Q6_K: int8 sc[16]
inline constexpr int kQ6D = 208;       // Q6_K: f16 d at the end
inline constexpr int kXsScalesH = 2;   // IQ4_XS: u16 high scale bits
inline constexpr int kXsScalesL = 4;   // IQ4_XS: 4 bytes of low scale nibbles
inline constexpr int kXsNibbles = 8;   // IQ4_XS: 16 nibble bytes per sub-block
inline constexpr int kQ2Bits = 16;     // Q2_K: 64 bytes of 2-bit levels after scales[16]
inline constexpr int kQ2D = 80;        // Q2_K: f16 d, then f16 dmin
inline constexpr int kQ3Bits = 32;     // Q3_K: 64 bytes of 2-bit levels after hmask[32]
inline constexpr int kQ3Scales = 96;   // Q3_K: 12 bytes of 6-bit scales
inline constexpr int kQ3D = 108;       // Q3_K: f16 d

// Q3_K: the 6-bit scale i (0..15) less 32 (-32..31).
inline int q3_scale(const unsigned char* sb, int i) {
  const unsigned char* s = sb + kQ3Scales;
  const int low = (s[i % 8] >> (4 * (i / 8))) & 0x0F;
  const int high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
  return (low | (high << 4)) - 32;
}

// The per-16 integer scale of elements [16 h, 16 h + 16) of sub-block j:
// Q6_K's int8, Q3_K's 6-bit less 32, Q2_K's 4-bit.
inline int scale16(QuantFormat f, const unsigned char* sb, int j, int h) {
  if (f == QuantFormat::Q3_K) return q3_scale(sb, 2 * j + h);
  if (f == QuantFormat::Q2_K) return sb[2 * j + h] & 0x0F;
  return static_cast<std::int8_t>(sb[kQ6Scales + 2 * j + h]);
}

// IQ4_XS: sub-block j's scale ls - 32 (-32..31).
inline int xs_scale(const unsigned char* sb, int j) {
  const int low = (sb[kXsScalesL + j / 2] >> (4 * (j % 2))) & 0x0F;
  const int high = ((sb[kXsScalesH] | (sb[kXsScalesH + 1] << 8)) >> (2 * j)) & 3;
  return (low | (high << 4)) - 32;
}

// Element e (0..31) of 16 nibble bytes laid out as Q4_0's: e < 16 low, else high.
inline int nibble_at(const unsigned char* qs, int e) { return (qs[e & 15] >> (e < 16 ? 0 : 4)) & 0x0F; }

// Sub-block j's scale d_w and minimum m_w (x = d_w q + m_w; Q6_K: m_w = 0
// and d_w = d, its per-16 scales being part of the level), each product in
// f32 as ggml's dequantizer rounds it.
inline void sub_scales(QuantFormat f, const unsigned char* sb, int j, float& dw, float& mw) {
  if (f == QuantFormat::Q6_K) {
    dw = half_at(sb + kQ6D);
    mw = 0.0f;
    return;
  }
  if (f == QuantFormat::IQ4_XS) {
    dw = half_at(sb) * static_cast<float>(xs_scale(sb, j));
    mw = 0.0f;
    return;
  }
  if (f == QuantFormat::Q2_K || f == QuantFormat::Q3_K) {  // per-16 scales live in the levels
    dw = half_at(sb + (f == QuantFormat::Q2_K ? kQ2D : kQ3D));
    mw = 0.0f;  // Q2_K's minima: sub_mins16
    return;
  }
  int sc, m;
  scale_min(sb + kScalesAt, j, sc, m);
  dw = half_at(sb) * static_cast<float>(sc);
  mw = -(half_at(sb + 2) * static_cast<float>(m));
}

// Level of element l (0..31) of sub-block j: Q4_K 0..15, Q5_K 0..31, Q6_K
// the signed 6-bit q - 32 (-32..31) without its scale, IQ4_XS kIq4Levels[q].
inline int sub_level(QuantFormat f, const unsigned char* sb, int j, int l) {
  if (f == QuantFormat::IQ4_XS) return kIq4Levels[nibble_at(sb + kXsNibbles + 16 * j, l)];
  if (f == QuantFormat::Q2_K || f == QuantFormat::Q3_K) {  // Q2_K 0..3, Q3_K -4..3
    const int h = j / 4, s = j % 4;
    const int q = (sb[(f == QuantFormat::Q2_K ? kQ2Bits : kQ3Bits) + 32 * h + l] >> (2 * s)) & 3;
    if (f == QuantFormat::Q2_K) return q;
    return ((sb[l] >> j) & 1) ? q : q - 4;
  }
  if (f == QuantFormat::Q6_K) {
    const int h = j / 4, s = j % 4;
    const int low = (sb[64 * h + 32 * (s % 2) + l] >> (4 * (s / 2))) & 0x0F;
    const int high = (sb[kQ6High + 32 * h + l] >> (2 * s)) & 3;
    return (low | (high << 4)) - 32;
  }
  const unsigned char* qs = sb + (f == QuantFormat::Q4_K ? kQ4Nibbles : kQ5Nibbles);
  int q = (qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 0x0F;
  if (f == QuantFormat::Q5_K) q |= ((sb[kQ5High + l] >> j) & 1) << 4;
  return q;
}

// Whether a format's per-16 scales are multiplied into the levels.
constexpr bool scales16(QuantFormat f) {
  return f == QuantFormat::Q6_K || f == QuantFormat::Q2_K || f == QuantFormat::Q3_K;
}

// The integer levels the kernels multiply, sign included: Q4_K / Q5_K the
// level, Q6_K sc[2 j + l / 16] (q - 32), which fits in int16 (|.| <= 4096),
// Q2_K and Q3_K likewise with their per-16 scales.
inline void sub_levels16(QuantFormat f, const unsigned char* sb, int j, std::int16_t (&l)[32]) {
  for (int e = 0; e < 32; ++e) {
    const int q = sub_level(f, sb, j, e);
    l[e] = static_cast<std::int16_t>(scales16(f) ? q * scale16(f, sb, j, e / 16) : q);
  }
}

// Q2_K: the minima -dmin m of elements 0-15 and 16-31 of sub-block j.
inline void sub_mins16(const unsigned char* sb, int j, float (&m)[2]) {
  const float dmin = half_at(sb + kQ2D + 2);
  for (int h = 0; h < 2; ++h) m[h] = -(dmin * static_cast<float>(sb[2 * j + h] >> 4));
}

// One super-block of 256 elements, as quantize_row / dequantize_row describe.
void quantize_block(QuantFormat f, const float* x, unsigned char* b);
void dequantize_block(QuantFormat f, const unsigned char* b, float* y);
// One IQ4_NL block of 32 elements.
void quantize_iq4_nl(const float* x, unsigned char* b);
void dequantize_iq4_nl(const unsigned char* b, float* y);

}  // namespace torsh::kquant
