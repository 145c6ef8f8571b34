#pragma once
// Element types and host-side conversions between them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace torsh {

enum class DType : std::uint8_t { F32, F64, F16, BF16, I8, U8, I32, I64, Bool };

inline constexpr DType kAllDTypes[] = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,
                                       DType::U8,  DType::I32, DType::I64, DType::Bool};

// Inline: it is asked several times for every op.
constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::F64:
    case DType::I64: return 8;
    case DType::F32:
    case DType::I32: return 4;
    case DType::F16:
    case DType::BF16: return 2;
    case DType::I8:
    case DType::U8:
    case DType::Bool: return 1;
  }
  return 0;
}
std::string_view dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);
bool is_floating(DType t);
bool is_integral(DType t);

// IEEE binary16 and bfloat16 conversions; float -> half rounds to nearest even,
// NaN stays NaN (quiet), overflow goes to infinity.
std::uint16_t f32_to_f16(float f);
float f16_to_f32(std::uint16_t h);
std::uint16_t f32_to_bf16(float f);
float bf16_to_f32(std::uint16_t b);

// Converts n elements between any two dtypes on the host. Float -> integer
// truncates toward zero and saturates to the target range (NaN -> 0);
// anything -> bool is (x != 0).
void convert(const void* src, DType src_type, void* dst, DType dst_type, std::size_t n);

// Reads/writes one element as double; used by references and tests.
double load_as_double(const void* p, DType t);
void store_from_double(void* p, DType t, double v);
// Reads one element as int64: exact for the integer dtypes and bool (a double
// holds only 53 bits of i64); floats truncate toward zero and saturate, NaN -> 0.
std::int64_t load_as_int64(const void* p, DType t);

}  // namespace torsh
