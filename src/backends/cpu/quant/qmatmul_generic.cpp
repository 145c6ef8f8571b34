// Portable tiles: plain integer loops over the same levels and corrections
// the vector kernels use (qmatmul_kernels.hpp), so they are also the
// reference the vector kernels are tested against.
#include <cstring>

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
  const unsigned char* qs = blk + (f == QuantFormat::Q4_1 ? 4 : 2);
  for (int e = 0; e < kBlock / 2; ++e) {
    u[e] = qs[e] & 0x0F;
    u[e + kBlock / 2] = qs[e] >> 4;
  }
}

void tile(const Tile& t) {
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
        const std::int8_t* q = a.q + ab * kBlock;
        std::int32_t dot = 0;
        for (int l = 0; l < 8; ++l) dot += a.corr[ab * 8 + l];
        for (int e = 0; e < kBlock; ++e) dot += u[e] * q[e];
        acc[j] += dw * a.d[ab] * static_cast<float>(dot);
        if (t.format == QuantFormat::Q4_1) acc[j] += f16_at(blk + 2) * a.s[ab];
      }
    }
    for (int j = 0; j < t.cols; ++j) t.out[(t.a0 + j) * t.ldo + i] = acc[j];
  }
}

// Int16 activations: signed weight levels l = u - offset (qmatmul_kernels.hpp).
void tile16(const Tile& t) {
  const ActRows& a = *t.act;
  const std::size_t bb = quant_block_bytes(t.format);
  const int offset = weight_offset(t.format);
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
        const std::int16_t* q = act16_block(a, t.a0 + j, b);
        std::int32_t dot = 0;
        for (int e = 0; e < kBlock; ++e) dot += (u[e] - offset) * q[e < 16 ? e : e + 16];
        acc[j] += dw * a.d[ab] * static_cast<float>(dot);
        if (t.format == QuantFormat::Q4_1) acc[j] += f16_at(blk + 2) * a.s[ab];
      }
    }
    for (int j = 0; j < t.cols; ++j) t.out[(t.a0 + j) * t.ldo + i] = acc[j];
  }
}

}  // namespace

const Kernels& kernels_generic() {
  static const Kernels k{Isa::Generic, kRows, kCols, tile, tile16};
  return k;
}

}  // namespace torsh::cpu::quant
