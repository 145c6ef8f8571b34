#pragma once
// Quantized matmul on the CPU: out [m, n] = x [m, k] @ dequantize(w [n, k])^T
// with integer dot products.
//
// Each call first quantizes the activations per 32-block, once per row, into
// scratch (activations.cpp), in one of two widths (QuantActivations):
//
// Int16 (the default): d = amax / 32767, q = round-half-even(x / d), and s =
// the block's f32 sum of x. Kernels widen the weight levels to signed int16
// l (Q4_0: nibble - 8, Q4_1: nibble, Q5_0: 5-bit level - 16, Q5_1: 5-bit
// level, Q8_0: the byte) and one block meets one
// block as a pairwise int16 dot product (vpdpwssd, vpmaddwd). The levels of
// blocks b, b + 1 (b even) lie interleaved by halves, [b 0-15, b+1 0-15,
// b 16-31, b+1 16-31] (act16_block), so two vpdpwssd leave block b's sum in
// the low eight int32 lanes and b + 1's in the high eight, scaled together;
// a row with odd nb ends in a half-empty pair of zeros.
//
//   Q4_0, Q5_0, Q8_0: sum = d_w d_a (l.q)    Q4_1, Q5_1: sum = d_w d_a (l.q) + m_w s
//
// Int8 (ggml's Q8_1): d = amax / 127, s = d * sum(q). Weight levels stay
// unsigned bytes u and meet the signed activation levels q in vpdpbusd (u8 x s8):
//
//   Q4_0: w = d_w (u - 8)        u = the nibble       sum = d_w d_a (u.q - 8 sum(q))
//   Q4_1: w = d_w u + m_w        u = the nibble       sum = d_w d_a (u.q) + m_w s_a
//   Q5_0: w = d_w (u - 16)       u = the 5-bit level  sum = d_w d_a (u.q - 16 sum(q))
//   Q5_1: w = d_w u + m_w        u = the 5-bit level  sum = d_w d_a (u.q) + m_w s_a
//   Q8_0: w = d_w (u - 128)      u = byte XOR 0x80    sum = d_w d_a (u.q - 128 sum(q))
//
// The "- offset sum(q)" term is exact integer arithmetic prepared with the
// activations: `corr` holds, for each block, eight int32 lanes -offset *
// (q[4l] + ... + q[4l + 3]), the layout of vpdpbusd's accumulator lanes, so a
// kernel starts its accumulator from them and the correction costs nothing
// per weight row. (AVX2 without VNNI has no u8 x s8 instruction that cannot
// saturate at u = 255, so its Q8_0 uses |w| and sign(q, w) instead and skips corr.)
//
// Kernels compute tiles of up to max_rows weight rows x max_cols activation
// rows (qmatmul_run.cpp cuts the work); every instruction set has one, chosen
// from cpuid once, or forced for tests and benchmarks.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "../platform/isa.hpp"
#include "torsh/backend/op_args.hpp"
#include "torsh/core/quant.hpp"

namespace torsh::cpu::quant {

// Activation rows quantized per block; nb = k / 32 blocks per row.
struct ActRows {
  QuantActivations width = QuantActivations::Int16;
  std::int16_t* q16 = nullptr;   // Int16: [m, k]
  std::int8_t* q = nullptr;      // Int8: [m, k]
  float* d = nullptr;            // [m, nb]
  float* s = nullptr;            // [m, nb]: Int16: sum(x); Int8: d * sum(q)
  float* s16 = nullptr;          // Int16: [m, nb, 2]: sum(x) over elements 0-15 and 16-31 (Q2_K's minima)
  std::int32_t* corr = nullptr;  // Int8: [m, nb, 8]: -offset(format) * sums of 4 consecutive q
  std::int64_t m = 0, k = 0, nb = 0;
  std::int64_t row16 = 0;  // Int16: elements from one row's levels to the next: 64 per block pair
};

// Int16: block b of activation row r, elements 0-15 at [0, 16) and 16-31 at [32, 48).
inline std::int16_t* act16_block(const ActRows& a, std::int64_t r, std::int64_t b) {
  return a.q16 + r * a.row16 + (b / 2) * 64 + (b % 2) * 16;
}

// The offset subtracted from a format's unsigned weight level: Q4_0 8, Q8_0
// and IQ4_* 128 (their signed levels as bytes, bias 128), Q5_0 16, Q6_K 32;
// 0 for the formats with a minimum.
constexpr int weight_offset(QuantFormat f) {
  switch (f) {
    case QuantFormat::Q4_0: return 8;
    case QuantFormat::Q8_0:
    case QuantFormat::IQ4_NL:
    case QuantFormat::IQ4_XS: return 128;
    case QuantFormat::Q5_0: return 16;
    case QuantFormat::Q6_K: return 32;
    default: return 0;
  }
}

// Bytes of scratch that quantized activations of m rows of k need.
std::size_t act_scratch_bytes(QuantActivations width, std::int64_t m, std::int64_t k);
// Quantizes rows [r0, r1) of x (contiguous [m, k] f32) into the layout of
// `scratch` (act_scratch_bytes(width, m, k), 64-byte aligned); returns the view.
ActRows act_layout(QuantActivations width, void* scratch, std::int64_t m, std::int64_t k);
void quantize_act_rows(const float* x, const ActRows& a, QuantFormat f, std::int64_t r0, std::int64_t r1);

// out[(a0 + j) * ldo + i] = sum over k of w row i . activation row a0 + j, for
// i < rows, j < cols.
struct Tile {
  QuantFormat format;
  const unsigned char* w;  // the first weight row's blocks
  std::size_t w_stride;    // bytes from one weight row to the next
  int rows;
  const ActRows* act;
  std::int64_t a0;
  int cols;
  float* out;
  std::int64_t ldo;
};

// The levels with qmatmul kernels (platform/isa.hpp), lowest first.
inline constexpr Isa kKernelIsas[] = {Isa::Generic, Isa::Avx2, Isa::AvxVnni, Isa::Avx512Vnni};

// Optional: weight rows repacked once per chunk into the kernels' own layout
// (unpacked levels, f32 scales), for calls with many activation rows; the
// packed tile then reads Tile::w as packed rows (w_stride = row_bytes(nb)).
struct PackedKernels {
  std::size_t (*row_bytes)(QuantFormat f, std::int64_t nb) = nullptr;  // a multiple of 64
  // rows weight rows of nb blocks (w_stride bytes apart) into dst (64-byte aligned).
  void (*pack)(QuantFormat f, const unsigned char* w, std::size_t w_stride, std::int64_t rows, std::int64_t nb,
               unsigned char* dst) = nullptr;
  void (*tile)(const Tile& t) = nullptr;
};

struct Kernels {
  Isa isa;
  int max_rows, max_cols;  // largest tile
  // Weight rows per tile where the tiles read the blocks as they lie
  // (decode, small batches) for m activation rows. Several rows share each
  // activation load but make the read that many interleaved streams, which
  // the hardware prefetcher follows late: one row, one sequential stream, is
  // faster wherever the unpacking costs less than the memory (src/backends/cpu/README.md, quant).
  int (*stream_rows)(QuantFormat f, std::int64_t m);
  void (*tile)(const Tile& t);    // Int8 activations
  void (*tile16)(const Tile& t);  // Int16 activations
  PackedKernels packed = {};      // Int8 activations
  PackedKernels packed16 = {};    // Int16 activations
};
const Kernels& kernels_generic();
const Kernels& kernels_avx2();
const Kernels& kernels_avx_vnni();
const Kernels& kernels_avx512_vnni();
const Kernels& kernels_for(Isa isa);

// The instruction set qmatmul uses: the best usable one, or the one forced.
Isa active_isa();
// Forces qmatmul onto `isa` (which must be usable) until reset with nullopt.
void force_isa(std::optional<Isa> isa);

// The whole op: activations quantized, tiles spread over the thread pool.
void qmatmul(const rt::QMatmulArgs& a);

}  // namespace torsh::cpu::quant
