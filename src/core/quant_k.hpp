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
  int sc, m;
  scale_min(sb + kScalesAt, j, sc, m);
  dw = half_at(sb) * static_cast<float>(sc);
  mw = -(half_at(sb + 2) * static_cast<float>(m));
}

// Level of element l (0..31) of sub-block j: Q4_K 0..15, Q5_K 0..31, Q6_K
// the signed 6-bit q - 32 (-32..31) without its scale, IQ4_XS kIq4Levels[q].
inline int sub_level(QuantFormat f, const unsigned char* sb, int j, int l) {
  if (f == QuantFormat::IQ4_XS) return kIq4Levels[nibble_at(sb + kXsNibbles + 16 * j, l)];
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

// Q6_K's int8 scale of elements [16 h, 16 h + 16) of sub-block j (h = 0, 1).
inline int q6_scale(const unsigned char* sb, int j, int h) {
  return static_cast<std::int8_t>(sb[kQ6Scales + 2 * j + h]);
}

// The integer levels the kernels multiply, sign included: Q4_K / Q5_K the
// level, Q6_K sc[2 j + l / 16] (q - 32), which fits in int16 (|.| <= 4096).
inline void sub_levels16(QuantFormat f, const unsigned char* sb, int j, std::int16_t (&l)[32]) {
  for (int e = 0; e < 32; ++e) {
    const int q = sub_level(f, sb, j, e);
    l[e] = static_cast<std::int16_t>(f == QuantFormat::Q6_K ? q * q6_scale(sb, j, e / 16) : q);
  }
}

}  // namespace torsh::kquant

namespace torsh::kquant {

// One super-block of 256 elements, as quantize_row / dequantize_row describe.
void quantize_block(QuantFormat f, const float* x, unsigned char* b);
void dequantize_block(QuantFormat f, const unsigned char* b, float* y);
// One IQ4_NL block of 32 elements.
void quantize_iq4_nl(const float* x, unsigned char* b);
void dequantize_iq4_nl(const unsigned char* b, float* y);

}  // namespace torsh::kquant
