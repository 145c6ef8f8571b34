#pragma once
// Storage types for the CPU kernels and the one dtype -> C++ type switch.
#include <cstdint>
#include <type_traits>

#include "torsh/core/dtype.hpp"
#include "torsh/core/error.hpp"

namespace torsh::cpu {

struct f16_t {
  std::uint16_t bits;
};
struct bf16_t {
  std::uint16_t bits;
};

template <class T>
inline auto to_acc(T v) {
  if constexpr (std::is_same_v<T, f16_t>)
    return f16_to_f32(v.bits);
  else if constexpr (std::is_same_v<T, bf16_t>)
    return bf16_to_f32(v.bits);
  else
    return v;
}

template <class T>
struct Acc {
  using type = T;
};
template <>
struct Acc<f16_t> {
  using type = float;
};
template <>
struct Acc<bf16_t> {
  using type = float;
};

template <class T, class A>
inline T from_acc(A v) {
  if constexpr (std::is_same_v<T, f16_t>)
    return f16_t{f32_to_f16(static_cast<float>(v))};
  else if constexpr (std::is_same_v<T, bf16_t>)
    return bf16_t{f32_to_bf16(static_cast<float>(v))};
  else
    return static_cast<T>(v);
}

template <class T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) with the storage type of `t`.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::F32: return f(Tag<float>{});
    case DType::F64: return f(Tag<double>{});
    case DType::F16: return f(Tag<f16_t>{});
    case DType::BF16: return f(Tag<bf16_t>{});
    case DType::I8: return f(Tag<std::int8_t>{});
    case DType::U8: return f(Tag<std::uint8_t>{});
    case DType::I32: return f(Tag<std::int32_t>{});
    case DType::I64: return f(Tag<std::int64_t>{});
    case DType::Bool: return f(Tag<bool>{});
  }
  throw Error(ErrorCode::Internal, "unknown dtype");
}

// Calls f(Tag<T>{}) for the floating dtypes only.
template <class F>
decltype(auto) visit_float_dtype(DType t, F&& f) {
  switch (t) {
    case DType::F32: return f(Tag<float>{});
    case DType::F64: return f(Tag<double>{});
    case DType::F16: return f(Tag<f16_t>{});
    case DType::BF16: return f(Tag<bf16_t>{});
    default: throw Error(ErrorCode::Internal, "floating dtype expected");
  }
}

}  // namespace torsh::cpu
