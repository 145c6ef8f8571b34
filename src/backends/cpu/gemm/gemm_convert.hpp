#pragma once
// f32 <-> f16 / bf16 for GEMM packing and write-back, in forms that vectorise
// (no calls, no branches); results equal the library's own conversions.
#include <bit>
#include <cstdint>
#include <type_traits>

#include "../types.hpp"

namespace torsh::cpu::gemm {

// Exact f16 -> f32 (subnormals, inf and NaN included): the exponent is rebased
// by one multiply and subnormals are rebuilt from a magic float (M. Maratos,
// FP16 library), so loops over it vectorise.
inline float half_to_float(std::uint16_t h) {
  const std::uint32_t w = static_cast<std::uint32_t>(h) << 16;
  const std::uint32_t sign = w & 0x80000000u;
  const std::uint32_t two_w = w + w;
  const float normal = std::bit_cast<float>((two_w >> 4) + (0xe0u << 23)) * 0x1.0p-112f;
  const float denormal = std::bit_cast<float>((two_w >> 17) | (126u << 23)) - 0.5f;
  const std::uint32_t bits =
      two_w < (1u << 27) ? std::bit_cast<std::uint32_t>(denormal) : std::bit_cast<std::uint32_t>(normal);
  return std::bit_cast<float>(sign | bits);
}

// f32 -> f16, rounding to nearest even, overflow to inf, NaN to a quiet NaN;
// the rounding is done by float adds (FP16 library), so it vectorises.
inline std::uint16_t float_to_half(float f) {
  float base = (__builtin_fabsf(f) * 0x1.0p+112f) * 0x1.0p-110f;
  const std::uint32_t w = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t shl1_w = w + w;
  const std::uint32_t sign = w & 0x80000000u;
  std::uint32_t bias = shl1_w & 0xff000000u;
  bias = bias < 0x71000000u ? 0x71000000u : bias;
  base = std::bit_cast<float>((bias >> 1) + 0x07800000u) + base;
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(base);
  const std::uint32_t nonsign = ((bits >> 13) & 0x7c00u) + (bits & 0x0fffu);
  return static_cast<std::uint16_t>((sign >> 16) | (shl1_w > 0xff000000u ? 0x7e00u : nonsign));
}

// f32 -> bf16, rounding to nearest even, NaN kept quiet (as f32_to_bf16).
inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  return static_cast<std::uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? (x >> 16) | 0x40u : rounded);
}

inline float to_f32(float v) { return v; }
inline float to_f32(f16_t v) { return half_to_float(v.bits); }
inline float to_f32(bf16_t v) { return std::bit_cast<float>(static_cast<std::uint32_t>(v.bits) << 16); }

template <class T>
inline T from_f32(float v) {
  if constexpr (std::is_same_v<T, f16_t>)
    return f16_t{float_to_half(v)};
  else if constexpr (std::is_same_v<T, bf16_t>)
    return bf16_t{float_to_bf16(v)};
  else
    return static_cast<T>(v);
}

}  // namespace torsh::cpu::gemm
