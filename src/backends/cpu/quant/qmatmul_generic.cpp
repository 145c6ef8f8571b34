// Portable tiles: plain integer loops over the same levels and corrections
// the vector kernels use (qmatmul_kernels.hpp), so they are also the
// reference the vector kernels are tested against.
#include <cstring>

#include "../../../core/quant_k.hpp"
#include "qmatmul_kernels.hpp"
#include "torsh/core/dtype.hpp"

namespace torsh::cpu::quant {
namespace {

constexpr int kRows = 4, kCols = 4;
constexpr int kBlock = static_cast<int>(kQuantBlock);

float f16_at(const unsigned char* p) {
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// The unsigned levels u of one weight block (element order).
void levels(QuantFormat f, const unsigned char* blk, int (&u)[kBlock]) {
  if (f == QuantFormat::Q8_0) {
    for (int e = 0; e < kBlock; ++e) u[e] = blk[2 + e] ^ 0x80;
    return;
  }
  const unsigned char* qs = blk + quant_nibbles_at(f);
  if (f == QuantFormat::IQ4_NL) {  // the signed levels plus weight_offset
    for (int e = 0; e < kBlock; ++e) u[e] = kIq4Levels[kquant::nibble_at(qs, e)] + 128;
    return;
  }
  std::uint32_t qh = 0;  // Q5: bit e is element e's 16
  if (quant_has_high_bits(f)) std::memcpy(&qh, qs - 4, 4);
  for (int e = 0; e < kBlock / 2; ++e) {
    u[e] = (qs[e] & 0x0F) | static_cast<int>(((qh >> e) & 1u) << 4);
    u[e + kBlock / 2] = (qs[e] >> 4) | static_cast<int>(((qh >> (e + kBlock / 2)) & 1u) << 4);
  }
}

// The integer dot product of weight block b (levels u) with block b of
// activation row r: Int8 from the unsigned levels plus the correction lanes,
// Int16 from the signed levels u - offset (qmatmul_kernels.hpp).
template <bool Wide>
std::int32_t block_dot(const ActRows& a, QuantFormat f, const int (&u)[kBlock], std::int64_t r, std::int64_t b) {
  std::int32_t dot = 0;
  if constexpr (Wide) {
    const int offset = weight_offset(f);
    const std::int16_t* q = act16_block(a, r, b);
    for (int e = 0; e < kBlock; ++e) dot += (u[e] - offset) * q[e < 16 ? e : e + 16];
  } else {
    const std::int64_t ab = r * a.nb + b;
    const std::int8_t* q = a.q + ab * kBlock;
    for (int l = 0; l < 8; ++l) dot += a.corr[ab * 8 + l];
    for (int e = 0; e < kBlock; ++e) dot += u[e] * q[e];
  }
  return dot;
}

// Super-block formats: per 32-element sub-block its signed levels and f32
// d_w, m_w (core/quant_k.hpp). Int8 (all but Q2_K, Q3_K: quant_int16_only):
// the same levels against the int8 activations, s = d sum(q) as Q4_1's (the
// vector kernels' correction lanes for Q6_K's and IQ4_XS's offsets are not needed here).
template <bool Wide>
void tile_k(const Tile& t) {
  const ActRows& a = *t.act;
  const std::size_t bb = quant_block_bytes(t.format);
  for (int i = 0; i < t.rows; ++i) {
    const unsigned char* w = t.w + static_cast<std::size_t>(i) * t.w_stride;
    float acc[kCols] = {};
    for (std::int64_t b = 0; b < a.nb; ++b) {
      const unsigned char* sb = w + static_cast<std::size_t>(b / kquant::kSubBlocks) * bb;
      const int sub = static_cast<int>(b % kquant::kSubBlocks);
      std::int16_t l[kBlock];
      kquant::sub_levels16(t.format, sb, sub, l);
      float dw, mw, mins[2] = {0.0f, 0.0f};
      kquant::sub_scales(t.format, sb, sub, dw, mw);
      if (quant_has_min16(t.format)) kquant::sub_mins16(sb, sub, mins);
      for (int j = 0; j < t.cols; ++j) {
        const std::int64_t ab = (t.a0 + j) * a.nb + b;
        std::int32_t dot = 0;
        if constexpr (Wide) {
          const std::int16_t* q = act16_block(a, t.a0 + j, b);
          for (int e = 0; e < kBlock; ++e) dot += l[e] * q[e < 16 ? e : e + 16];
        } else {
          const std::int8_t* q = a.q + ab * kBlock;
          for (int e = 0; e < kBlock; ++e) dot += l[e] * q[e];
        }
        acc[j] += dw * a.d[ab] * static_cast<float>(dot) + mw * a.s[ab];
        if (quant_has_min16(t.format)) acc[j] += mins[0] * a.s16[2 * ab] + mins[1] * a.s16[2 * ab + 1];
      }
    }
    for (int j = 0; j < t.cols; ++j) t.out[(t.a0 + j) * t.ldo + i] = acc[j];
  }
}

template <bool Wide>
void tile(const Tile& t) {
  if (quant_super_blocks(t.format)) return tile_k<Wide>(t);
  const ActRows& a = *t.act;
  const std::size_t bb = quant_block_bytes(t.format);
  for (int i = 0; i < t.rows; ++i) {
    const unsigned char* w = t.w + static_cast<std::size_t>(i) * t.w_stride;
    float acc[kCols] = {};
    for (std::int64_t b = 0; b < a.nb; ++b) {
      const unsigned char* blk = w + static_cast<std::size_t>(b) * bb;
      int u[kBlock];
      levels(t.format, blk, u);
      const float dw = f16_at(blk);
      for (int j = 0; j < t.cols; ++j) {
        const std::int64_t ab = (t.a0 + j) * a.nb + b;
        acc[j] += dw * a.d[ab] * static_cast<float>(block_dot<Wide>(a, t.format, u, t.a0 + j, b));
        if (quant_has_min(t.format)) acc[j] += f16_at(blk + 2) * a.s[ab];
      }
    }
    for (int j = 0; j < t.cols; ++j) t.out[(t.a0 + j) * t.ldo + i] = acc[j];
  }
}

}  // namespace

const Kernels& kernels_generic() {
  static const Kernels k{Isa::Generic, kRows,     kCols, [](QuantFormat, std::int64_t) { return kRows; },
                         tile<false>,  tile<true>};
  return k;
}

}  // namespace torsh::cpu::quant
