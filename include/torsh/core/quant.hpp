#pragma once
// Block-quantized weight formats (ggml's layouts, so GGUF weights are used as
// they lie in the file). The 32-formats pack 32 consecutive elements of a row
// into one block; the K formats (ggml's "k-quants") 256 into a super-block of
// eight 32-element sub-blocks. A row of k elements is k / quant_block_elems
// blocks.
//
//   Q4_0 (18 bytes): f16 d, 16 bytes of nibbles; x = (q - 8) * d
//   Q4_1 (20 bytes): f16 d, f16 m, 16 bytes of nibbles; x = q * d + m
//   Q8_0 (34 bytes): f16 d, 32 x int8 q; x = q * d
//   Q5_0 (22 bytes): f16 d, u32 qh, 16 bytes of nibbles; x = (q - 16) * d
//   Q5_1 (24 bytes): f16 d, f16 m, u32 qh, 16 bytes of nibbles; x = q * d + m
// In the nibble bytes, byte j holds element j in its low nibble and element
// j + 16 in its high nibble; Q5's 5-bit level q adds bit j of qh (little
// endian) as 16 to element j's nibble.
//
// K formats (ggml-common.h's block_q4_K, block_q5_K, block_q6_K):
//   Q4_K (144 bytes): f16 d, f16 dmin, 12 bytes of 6-bit scales sc[8] and
//     mins m[8], 128 bytes of nibbles; sub-block j: x = d sc[j] q - dmin m[j].
//     The 12 bytes: byte i < 4 holds sc[i] in bits 0-5 and bits 4-5 of sc[i+4]
//     in bits 6-7; byte 4 + i the same for m; byte 8 + i holds bits 0-3 of
//     sc[i+4] (low) and of m[i+4] (high). Nibble byte 32 g + l holds element l
//     of sub-block 2 g (low) and of 2 g + 1 (high).
//   Q5_K (176 bytes): Q4_K's d, dmin and scales, then 32 bytes qh whose byte l
//     bit j adds 16 to element l of sub-block j, then Q4_K's 128 nibble bytes.
//   Q6_K (210 bytes): 128 bytes ql, 64 bytes qh, int8 sc[16], f16 d; element
//     l of sub-block j (h = j / 4, s = j % 4) has the low four bits in nibble
//     s / 2 of ql[64 h + 32 (s % 2) + l], the high two in bits 2 s, 2 s + 1 of
//     qh[32 h + l]; x = d sc[2 j + l / 16] (q - 32).
//   Q2_K (84 bytes): scales[16] (per 16 elements: 4-bit scale low, 4-bit
//     minimum high), 64 bytes qs, f16 d, f16 dmin; element l of sub-block j
//     (h = j / 4, s = j % 4) has its 2 bits at bits 2 s of qs[32 h + l];
//     x = d sc[2 j + l / 16] q - dmin m[2 j + l / 16].
//   Q3_K (110 bytes): 32 bytes hmask, 64 bytes qs (as Q2_K's), 12 bytes of
//     6-bit scales, f16 d; scale i has bits 0-3 in nibble i / 8 of byte i % 8
//     and bits 4-5 at bits 2 (i / 4) of byte 8 + i % 4; q = the 2 bits - 4
//     unless bit j of hmask[l] is set; x = d (sc[2 j + l / 16] - 32) q.
//
// Non-linear 4-bit formats (ggml's iq4_nl levels: kIq4Levels):
//   IQ4_NL (18 bytes, 32 elements): Q4_0's layout; x = d kIq4Levels[q].
//   IQ4_XS (136 bytes, 256 elements): f16 d, u16 scales_h, 4 bytes scales_l,
//     128 bytes of nibbles. Sub-block j's 6-bit scale ls has bits 0-3 in
//     nibble j % 2 of scales_l[j / 2] and bits 4-5 in bits 2 j, 2 j + 1 of
//     scales_h; its 16 nibble bytes at 8 + 16 j are laid out as Q4_0's;
//     x = d (ls - 32) kIq4Levels[q].
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace torsh {

// The values are the GPU kernels' format codes (gpu/kernels/meta.h).
enum class QuantFormat : std::uint8_t { Q4_0, Q4_1, Q8_0, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, Q2_K, Q3_K };

inline constexpr QuantFormat kAllQuantFormats[] = {QuantFormat::Q4_0,   QuantFormat::Q4_1, QuantFormat::Q8_0,
                                                   QuantFormat::Q5_0,   QuantFormat::Q5_1, QuantFormat::Q4_K,
                                                   QuantFormat::Q5_K,   QuantFormat::Q6_K, QuantFormat::IQ4_NL,
                                                   QuantFormat::IQ4_XS, QuantFormat::Q2_K, QuantFormat::Q3_K};
// The 16 levels of IQ4_NL and IQ4_XS, indexed by the nibble.
inline constexpr std::int8_t kIq4Levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                               1,    13,   25,  38,  53,  69,  89,  113};
// Elements per block of the 32-formats, and per sub-block of the K formats:
// the unit every kernel scales by (one d_w, and one m_w, per 32 elements).
inline constexpr std::int64_t kQuantBlock = 32;
inline constexpr std::int64_t kQuantSuperBlock = 256;  // elements per K-format block

// The formats of 256-element super-blocks (the K formats and IQ4_XS).
constexpr bool quant_super_blocks(QuantFormat f) {
  return f == QuantFormat::Q4_K || f == QuantFormat::Q5_K || f == QuantFormat::Q6_K || f == QuantFormat::IQ4_XS ||
         f == QuantFormat::Q2_K || f == QuantFormat::Q3_K;
}
// Q2_K: a minimum per 16 elements (the others' minimum, if any, is per 32).
constexpr bool quant_has_min16(QuantFormat f) { return f == QuantFormat::Q2_K; }
// The formats whose CPU kernels take Int16 activations only (an Int8 request
// gets Int16): Q3_K's and Q2_K's per-16 scales are multiplied into signed
// int16 levels, which do not fit the unsigned bytes of the Int8 kernels.
constexpr bool quant_int16_only(QuantFormat f) { return f == QuantFormat::Q2_K || f == QuantFormat::Q3_K; }
// Elements per block: 32, or 256 for the K formats.
constexpr std::int64_t quant_block_elems(QuantFormat f) {
  return quant_super_blocks(f) ? kQuantSuperBlock : kQuantBlock;
}

// How integer qmatmul kernels quantize f32 activations, per 32-block with a
// block scale: Int16 (the default) keeps about 4.5 significant digits, so a
// model's logits stay within 1e-3 relative of an f32 forward; Int8 (ggml's
// Q8 activations) halves the integer work and moves logits by a few percent.
enum class QuantActivations : std::uint8_t { Int16, Int8 };
std::string_view quant_activations_name(QuantActivations a);  // "int16", "int8"
std::optional<QuantActivations> quant_activations_from_name(std::string_view name);

constexpr std::size_t quant_block_bytes(QuantFormat f) {
  switch (f) {
    case QuantFormat::Q4_0: return 18;
    case QuantFormat::Q4_1: return 20;
    case QuantFormat::Q8_0: return 34;
    case QuantFormat::Q5_0: return 22;
    case QuantFormat::Q5_1: return 24;
    case QuantFormat::Q4_K: return 144;
    case QuantFormat::Q5_K: return 176;
    case QuantFormat::Q6_K: return 210;
    case QuantFormat::IQ4_NL: return 18;
    case QuantFormat::IQ4_XS: return 136;
    case QuantFormat::Q2_K: return 84;
    case QuantFormat::Q3_K: return 110;
  }
  return 0;
}
// Whether each 32 elements carry a minimum besides the scale (x = q d + m;
// the K formats' x = d sc q - dmin m is the same with m = -dmin m).
constexpr bool quant_has_min(QuantFormat f) {
  return f == QuantFormat::Q4_1 || f == QuantFormat::Q5_1 || f == QuantFormat::Q4_K || f == QuantFormat::Q5_K;
}
// Q5_0 and Q5_1: a u32 of 5th bits after the scales (the 32-formats only).
constexpr bool quant_has_high_bits(QuantFormat f) { return f == QuantFormat::Q5_0 || f == QuantFormat::Q5_1; }
// Byte offset of a 32-format's nibbles in its block (Q4_0 and IQ4_NL 2, Q4_1 4, Q5_0 6, Q5_1 8).
constexpr int quant_nibbles_at(QuantFormat f) {
  return (f == QuantFormat::Q4_1 || f == QuantFormat::Q5_1 ? 4 : 2) + (quant_has_high_bits(f) ? 4 : 0);
}
// "q4_0", "q4_1", "q8_0", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k", "iq4_nl", "iq4_xs", "q2_k", "q3_k"
std::string_view quant_format_name(QuantFormat f);
std::optional<QuantFormat> quant_format_from_name(std::string_view name);  // case-insensitive

// Bytes of one row of k elements; k must be a multiple of quant_block_elems(f).
constexpr std::size_t quant_row_bytes(QuantFormat f, std::int64_t k) {
  return static_cast<std::size_t>(k / quant_block_elems(f)) * quant_block_bytes(f);
}

// Host reference conversions of one row (k a multiple of the block), as ggml rounds:
// the scale comes from the block's absolute maximum (Q4_0: the signed value of
// largest magnitude / -8, Q5_0 / -16; Q4_1: (max - min) / 15 with m = min,
// Q5_1 / 31; Q8_0: amax / 127),
// stored as f16, and each element rounds to the nearest level (the gguf package's
// reference quantizers, bit for bit). NaN elements are stored as the level of 0
// (Q4_1: of the block minimum); an infinite element makes the block's scale infinite.
// The K formats are quantized in one pass (not ggml's iterative scale search,
// so a K block may differ from llama-quantize's for the same input): each
// sub-block's range (Q4_K, Q5_K: min(0, min) .. max; Q6_K: per 16 elements,
// the value of largest magnitude / -32; Q2_K as Q4_K per 16 elements, 4-bit;
// Q3_K as Q6_K per 16 elements, over -4), the 6-bit (int8) scales relative to
// the largest (rounded up, so the levels cover the range), then levels
// rounded to nearest under the stored scales.
// IQ4_NL and IQ4_XS likewise: the scale from the value of largest magnitude
// (over -127, the lowest level), each element the nearest of the 16 levels.
// Dequantization is ggml's, bit for bit.
void quantize_row(QuantFormat f, const float* x, void* blocks, std::int64_t k);
void dequantize_row(QuantFormat f, const void* blocks, float* y, std::int64_t k);

}  // namespace torsh
