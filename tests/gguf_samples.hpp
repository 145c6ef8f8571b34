#pragma once
// Valid GGUF files for the reader's tests, built with tests/gguf_writer.hpp:
// a rich one (every metadata type, nested arrays, several tensor types), a
// small one, deeply nested arrays, and the file from the gguf Python package.
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gguf_writer.hpp"

namespace torsh::test {

using model::GgufType;
using model::GgufValue;

inline constexpr std::uint32_t kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ8_0 = 8;

// Bytes per row for the types the samples use (the test's own table, not the reader's).
inline std::size_t row_bytes(std::uint32_t type, std::int64_t cols) {
  switch (type) {
    case kF32: return static_cast<std::size_t>(cols) * 4;
    case kF16: return static_cast<std::size_t>(cols) * 2;
    case kQ4_0: return static_cast<std::size_t>(cols) / 32 * 18;
    case kQ4_1: return static_cast<std::size_t>(cols) / 32 * 20;
    case kQ8_0: return static_cast<std::size_t>(cols) / 32 * 34;
  }
  return 0;
}

inline TensorSpec tensor_of(std::string name, std::vector<std::int64_t> dims, std::uint32_t type, std::uint32_t seed) {
  std::int64_t rows = 1;
  for (std::size_t k = 1; k < dims.size(); ++k) rows *= dims[k];
  const std::size_t n = row_bytes(type, dims.empty() ? 1 : dims[0]) * static_cast<std::size_t>(rows);
  std::mt19937 rng(seed);
  Bytes data(n);
  for (auto& b : data) b = static_cast<std::byte>(rng() & 0xff);
  return {std::move(name), std::move(dims), type, std::move(data)};
}

// Every metadata type, arrays of each kind, nested arrays, empty strings and
// arrays, and tensors of F32/F16/Q4_0/Q4_1/Q8_0 (including a scalar, a 4-d
// tensor and an empty one).
inline GgufWriter rich_writer(std::uint32_t version, std::size_t alignment) {
  GgufWriter w(version, alignment);
  w.kv("general.architecture", gv::str("llama"));
  if (alignment != 32) w.kv("general.alignment", gv::u32(static_cast<std::uint32_t>(alignment)));
  w.kv("t.u8", gv::u8(200)).kv("t.i8", gv::i8(-100)).kv("t.u16", gv::u16(60000)).kv("t.i16", gv::i16(-30000));
  w.kv("t.u32", gv::u32(4000000000u)).kv("t.i32", gv::i32(-2000000000));
  w.kv("t.u64", gv::u64((std::uint64_t{1} << 63) + 5)).kv("t.i64", gv::i64(-(std::int64_t{1} << 62)));
  w.kv("t.f32", gv::f32(1.5f)).kv("t.f64", gv::f64(-2.25e300));
  w.kv("t.true", gv::boolean(true)).kv("t.false", gv::boolean(false));
  w.kv("t.string", gv::str("h\xc3\xa9llo\nworld")).kv("t.empty_string", gv::str(""));
  w.kv("t.arr_u8", gv::array(GgufType::U8, {gv::u8(1), gv::u8(2), gv::u8(255)}));
  w.kv("t.arr_i32", gv::array(GgufType::I32, {gv::i32(-1), gv::i32(7)}));
  w.kv("t.arr_u64", gv::array(GgufType::U64, {gv::u64(~std::uint64_t{0})}));
  w.kv("t.arr_f32", gv::array(GgufType::F32, {gv::f32(0.25f), gv::f32(-3.0f), gv::f32(1e-5f)}));
  w.kv("t.arr_f64", gv::array(GgufType::F64, {gv::f64(0.1), gv::f64(1e300)}));
  w.kv("t.arr_bool", gv::array(GgufType::Bool, {gv::boolean(true), gv::boolean(false)}));
  w.kv("t.arr_str", gv::array(GgufType::String, {gv::str("a"), gv::str(""), gv::str("ccc")}));
  w.kv("t.arr_empty", gv::array(GgufType::U32, {}));
  w.kv("t.arr_nested",
       gv::array(GgufType::Array, {gv::array(GgufType::I16, {gv::i16(1), gv::i16(-2)}), gv::array(GgufType::I16, {}),
                                   gv::array(GgufType::I16, {gv::i16(3)})}));
  w.kv("t.arr_nested3",
       gv::array(GgufType::Array, {gv::array(GgufType::Array, {gv::array(GgufType::String, {gv::str("deep")})})}));
  w.tensor(tensor_of("w.f32", {8, 3}, kF32, 1));
  w.tensor(tensor_of("w.f16", {16}, kF16, 2));
  w.tensor(tensor_of("w.q4_0", {64, 2}, kQ4_0, 3));
  w.tensor(tensor_of("w.empty", {0, 4}, kF32, 4));
  w.tensor(tensor_of("w.q4_1", {32, 3}, kQ4_1, 5));
  w.tensor(tensor_of("w.scalar", {}, kF32, 6));
  w.tensor(tensor_of("w.4d", {2, 3, 1, 2}, kF32, 7));
  w.tensor(tensor_of("w.q8_0", {32, 1}, kQ8_0, 8));
  return w;
}

// A small valid file: two metadata entries, two tensors.
inline GgufWriter small_writer() {
  GgufWriter w;
  w.kv("general.architecture", gv::str("llama")).kv("n", gv::u32(3));
  w.tensor(tensor_of("a", {32, 2}, kQ8_0, 1)).tensor(tensor_of("b", {4}, kF32, 2));
  return w;
}

struct Sample {
  GgufWriter writer;
  Bytes bytes;
  GgufLayout layout;
};

inline Sample rich_sample(std::uint32_t version, std::size_t alignment) {
  Sample s{rich_writer(version, alignment), {}, {}};
  s.bytes = s.writer.build(&s.layout);
  return s;
}

inline GgufValue nested(int depth) {
  GgufValue v = gv::array(GgufType::U8, {gv::u8(1)});
  for (int k = 1; k < depth; ++k) v = gv::array(GgufType::Array, {v});
  return v;
}

// tests/golden/gguf_py.gguf, from the gguf Python package's writer.
inline Bytes golden_file() {
  std::ifstream in(std::string(TORSH_GOLDEN_DIR) + "/gguf_py.gguf", std::ios::binary);
  Bytes b;
  for (char c; in.get(c);) b.push_back(static_cast<std::byte>(c));
  EXPECT_FALSE(b.empty()) << "tests/golden/gguf_py.gguf is missing";
  return b;
}

}  // namespace torsh::test
