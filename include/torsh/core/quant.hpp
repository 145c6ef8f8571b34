#pragma once
// Block-quantized weight formats (ggml's layouts, so GGUF weights are used as
// they lie in the file). Every format packs 32 consecutive elements of a row
// into one block; a row of k elements (k a multiple of 32) is k / 32 blocks.
//
//   Q4_0 (18 bytes): f16 d, 16 bytes of nibbles; x = (q - 8) * d
//   Q4_1 (20 bytes): f16 d, f16 m, 16 bytes of nibbles; x = q * d + m
//   Q8_0 (34 bytes): f16 d, 32 x int8 q; x = q * d
//   Q5_0 (22 bytes): f16 d, u32 qh, 16 bytes of nibbles; x = (q - 16) * d
//   Q5_1 (24 bytes): f16 d, f16 m, u32 qh, 16 bytes of nibbles; x = q * d + m
// In the nibble bytes, byte j holds element j in its low nibble and element
// j + 16 in its high nibble; Q5's 5-bit level q adds bit j of qh (little
// endian) as 16 to element j's nibble.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace torsh {

// The values are the GPU kernels' format codes (gpu/kernels/meta.h).
enum class QuantFormat : std::uint8_t { Q4_0, Q4_1, Q8_0, Q5_0, Q5_1 };

inline constexpr QuantFormat kAllQuantFormats[] = {QuantFormat::Q4_0, QuantFormat::Q4_1, QuantFormat::Q8_0,
                                                   QuantFormat::Q5_0, QuantFormat::Q5_1};
inline constexpr std::int64_t kQuantBlock = 32;  // elements per block, every format

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
  }
  return 0;
}
// Whether blocks carry a minimum m (x = q * d + m) besides the scale d.
constexpr bool quant_has_min(QuantFormat f) { return f == QuantFormat::Q4_1 || f == QuantFormat::Q5_1; }
// Q5_0 and Q5_1: a u32 of 5th bits after the scales.
constexpr bool quant_has_high_bits(QuantFormat f) { return f == QuantFormat::Q5_0 || f == QuantFormat::Q5_1; }
// Byte offset of a 4-bit format's nibbles in its block (Q4_0 2, Q4_1 4, Q5_0 6, Q5_1 8).
constexpr int quant_nibbles_at(QuantFormat f) { return (quant_has_min(f) ? 4 : 2) + (quant_has_high_bits(f) ? 4 : 0); }
std::string_view quant_format_name(QuantFormat f);                         // "q4_0", "q4_1", "q8_0", "q5_0", "q5_1"
std::optional<QuantFormat> quant_format_from_name(std::string_view name);  // case-insensitive

// Bytes of one row of k elements; k must be a multiple of kQuantBlock.
constexpr std::size_t quant_row_bytes(QuantFormat f, std::int64_t k) {
  return static_cast<std::size_t>(k / kQuantBlock) * quant_block_bytes(f);
}

// Host reference conversions of one row (k a multiple of 32), as ggml rounds:
// the scale comes from the block's absolute maximum (Q4_0: the signed value of
// largest magnitude / -8, Q5_0 / -16; Q4_1: (max - min) / 15 with m = min,
// Q5_1 / 31; Q8_0: amax / 127),
// stored as f16, and each element rounds to the nearest level (the gguf package's
// reference quantizers, bit for bit). NaN elements are stored as the level of 0
// (Q4_1: of the block minimum); an infinite element makes the block's scale infinite.
void quantize_row(QuantFormat f, const float* x, void* blocks, std::int64_t k);
void dequantize_row(QuantFormat f, const void* blocks, float* y, std::int64_t k);

}  // namespace torsh
