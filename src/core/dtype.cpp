#include "torsh/core/dtype.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "torsh/core/error.hpp"

namespace torsh {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::I8: return "i8";
    case DType::U8: return "u8";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::Bool: return "bool";
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  std::string s(name);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  for (DType t : kAllDTypes)
    if (dtype_name(t) == s) return t;
  if (s == "float32" || s == "float") return DType::F32;
  if (s == "float64" || s == "double") return DType::F64;
  if (s == "float16" || s == "half") return DType::F16;
  if (s == "bfloat16") return DType::BF16;
  if (s == "int8") return DType::I8;
  if (s == "uint8") return DType::U8;
  if (s == "int32") return DType::I32;
  if (s == "int64") return DType::I64;
  return std::nullopt;
}

bool is_floating(DType t) { return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16; }
bool is_integral(DType t) { return !is_floating(t) && t != DType::Bool; }

std::uint16_t f32_to_f16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
  if (absx >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (absx < 0x38800000u) {
    // Subnormal or zero in half: shift the full mantissa into place, rounding to nearest even.
    if (absx < 0x33000000u) return static_cast<std::uint16_t>(sign);  // < half of smallest subnormal
    const std::uint32_t exp = absx >> 23;
    const std::uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - exp;  // 14..24
    std::uint32_t h = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = ((absx - 0x38000000u) >> 13);
  const std::uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<std::uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

std::uint16_t f32_to_bf16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

float bf16_to_f32(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

double load_as_double(const void* p, DType t) {
  switch (t) {
    case DType::F32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::F64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case DType::F16: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return f16_to_f32(v);
    }
    case DType::BF16: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return bf16_to_f32(v);
    }
    case DType::I8: return *static_cast<const std::int8_t*>(p);
    case DType::U8: return *static_cast<const std::uint8_t*>(p);
    case DType::Bool: return *static_cast<const std::uint8_t*>(p) ? 1.0 : 0.0;
    case DType::I32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::I64: {
      std::int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
  }
  return 0;
}

namespace {
template <class I>
I saturate(double v) {
  if (std::isnan(v)) return 0;
  const double lo = static_cast<double>(std::numeric_limits<I>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<I>::max());
  if (v <= lo) return std::numeric_limits<I>::lowest();
  if (v >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(std::trunc(v));
}
}  // namespace

std::int64_t load_as_int64(const void* p, DType t) {
  switch (t) {
    case DType::I8: return *static_cast<const std::int8_t*>(p);
    case DType::U8: return *static_cast<const std::uint8_t*>(p);
    case DType::Bool: return *static_cast<const std::uint8_t*>(p) ? 1 : 0;
    case DType::I32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::I64: {
      std::int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    default: return saturate<std::int64_t>(load_as_double(p, t));
  }
}

void store_from_double(void* p, DType t, double v) {
  switch (t) {
    case DType::F32: {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      return;
    }
    case DType::F64: std::memcpy(p, &v, 8); return;
    case DType::F16: {
      std::uint16_t h = f32_to_f16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::BF16: {
      std::uint16_t h = f32_to_bf16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::I8: *static_cast<std::int8_t*>(p) = saturate<std::int8_t>(v); return;
    case DType::U8: *static_cast<std::uint8_t*>(p) = saturate<std::uint8_t>(v); return;
    case DType::Bool: *static_cast<std::uint8_t*>(p) = (v != 0.0) ? 1 : 0; return;
    case DType::I32: {
      auto i = saturate<std::int32_t>(v);
      std::memcpy(p, &i, 4);
      return;
    }
    case DType::I64: {
      auto i = saturate<std::int64_t>(v);
      std::memcpy(p, &i, 8);
      return;
    }
  }
}

void convert(const void* src, DType st, void* dst, DType dt, std::size_t n) {
  if (n == 0) return;
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  const std::size_t ss = dtype_size(st), ds = dtype_size(dt);
  if (st == dt) {
    std::memmove(dst, src, n * ss);
    return;
  }
  // Direct paths for the common float conversions (float -> f16/bf16 must not
  // round twice through double).
  if (st == DType::F32 && dt == DType::F16) {
    for (std::size_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, s + 4 * i, 4);
      std::uint16_t h = f32_to_f16(f);
      std::memcpy(d + 2 * i, &h, 2);
    }
    return;
  }
  if (st == DType::F32 && dt == DType::BF16) {
    for (std::size_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, s + 4 * i, 4);
      std::uint16_t h = f32_to_bf16(f);
      std::memcpy(d + 2 * i, &h, 2);
    }
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    double v = load_as_double(s + i * ss, st);
    if (dt == DType::F16 || dt == DType::BF16) {
      // Round once: via float for values that are exactly representable, else
      // this is a double rounding only for f64 sources, which PyTorch does too.
      v = static_cast<float>(v);
    }
    store_from_double(d + i * ds, dt, v);
  }
}

}  // namespace torsh
