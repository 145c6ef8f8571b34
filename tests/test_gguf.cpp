// The GGUF reader: files written by tests/gguf_writer.hpp read back exactly
// (v2 and v3, every metadata type, nested arrays, two alignments, several
// tensor types); hostile files are refused with an error naming the file, the
// byte and the fault; random mutations of valid files raise only torsh::Error;
// and, when it is in the model cache, the SmolLM2 file reads as the gguf
// Python package reads it.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

#include "gguf_writer.hpp"
#include "torsh/core/error.hpp"
#include "torsh/model/gguf.hpp"
#include "torsh/model/model_cache.hpp"

namespace {

using torsh::Error;
using torsh::ErrorCode;
using torsh::model::GgmlType;
using torsh::model::GgufFile;
using torsh::model::GgufType;
using torsh::model::GgufValue;
using namespace torsh::test;

constexpr std::uint32_t kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ8_0 = 8;

// Bytes per row for the types the samples use (the test's own table, not the reader's).
std::size_t row_bytes(std::uint32_t type, std::int64_t cols) {
  switch (type) {
    case kF32: return static_cast<std::size_t>(cols) * 4;
    case kF16: return static_cast<std::size_t>(cols) * 2;
    case kQ4_0: return static_cast<std::size_t>(cols) / 32 * 18;
    case kQ4_1: return static_cast<std::size_t>(cols) / 32 * 20;
    case kQ8_0: return static_cast<std::size_t>(cols) / 32 * 34;
  }
  return 0;
}

TensorSpec tensor_of(std::string name, std::vector<std::int64_t> dims, std::uint32_t type, std::uint32_t seed) {
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
GgufWriter rich_writer(std::uint32_t version, std::size_t alignment) {
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
  w.kv("t.arr_nested", gv::array(GgufType::Array, {gv::array(GgufType::I16, {gv::i16(1), gv::i16(-2)}),
                                                   gv::array(GgufType::I16, {}),
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
GgufWriter small_writer() {
  GgufWriter w;
  w.kv("general.architecture", gv::str("llama")).kv("n", gv::u32(3));
  w.tensor(tensor_of("a", {32, 2}, kQ8_0, 1)).tensor(tensor_of("b", {4}, kF32, 2));
  return w;
}

void expect_same_value(const GgufValue& got, const GgufValue& want, const std::string& where) {
  ASSERT_EQ(got.type, want.type) << where;
  switch (want.type) {
    case GgufType::U8: case GgufType::U16: case GgufType::U32: case GgufType::U64:
      EXPECT_EQ(got.u, want.u) << where; break;
    case GgufType::I8: case GgufType::I16: case GgufType::I32: case GgufType::I64: case GgufType::Bool:
      EXPECT_EQ(got.i, want.i) << where; break;
    case GgufType::F32: EXPECT_EQ(got.f, static_cast<double>(static_cast<float>(want.f))) << where; break;
    case GgufType::F64: EXPECT_EQ(got.f, want.f) << where; break;
    case GgufType::String: EXPECT_EQ(got.s, want.s) << where; break;
    case GgufType::Array:
      ASSERT_EQ(got.elem_type, want.elem_type) << where;
      ASSERT_EQ(got.array.size(), want.array.size()) << where;
      for (std::size_t k = 0; k < want.array.size(); ++k)
        expect_same_value(got.array[k], want.array[k], where + "[" + std::to_string(k) + "]");
      break;
  }
}

struct Sample {
  GgufWriter writer;
  Bytes bytes;
  GgufLayout layout;
};

Sample rich_sample(std::uint32_t version, std::size_t alignment) {
  Sample s{rich_writer(version, alignment), {}, {}};
  s.bytes = s.writer.build(&s.layout);
  return s;
}

// ---- reading back ----------------------------------------------------------

class GgufRoundTrip : public ::testing::TestWithParam<std::pair<std::uint32_t, std::size_t>> {};

TEST_P(GgufRoundTrip, EveryValueAndTensorReadsBack) {
  const auto [version, alignment] = GetParam();
  const auto sample = rich_sample(version, alignment);
  const auto f = GgufFile::parse(sample.bytes, "rich.gguf");
  EXPECT_EQ(f.path(), "rich.gguf");
  EXPECT_EQ(f.version(), version);
  EXPECT_EQ(f.alignment(), alignment);
  EXPECT_EQ(f.file_size(), sample.bytes.size());
  EXPECT_EQ(f.data_offset(), sample.layout.data_offset);
  EXPECT_EQ(f.data_offset() % alignment, 0u);

  const auto& md = f.metadata();
  ASSERT_EQ(md.size(), sample.layout.key_at.size());
  EXPECT_EQ(md[0].first, "general.architecture");
  for (const auto& [key, value] : md) {
    ASSERT_EQ(f.find(key), &value) << key;
  }
  expect_same_value(f.at("t.u8"), gv::u8(200), "t.u8");
  expect_same_value(f.at("t.i8"), gv::i8(-100), "t.i8");
  expect_same_value(f.at("t.u16"), gv::u16(60000), "t.u16");
  expect_same_value(f.at("t.i16"), gv::i16(-30000), "t.i16");
  expect_same_value(f.at("t.u32"), gv::u32(4000000000u), "t.u32");
  expect_same_value(f.at("t.i32"), gv::i32(-2000000000), "t.i32");
  expect_same_value(f.at("t.u64"), gv::u64((std::uint64_t{1} << 63) + 5), "t.u64");
  expect_same_value(f.at("t.i64"), gv::i64(-(std::int64_t{1} << 62)), "t.i64");
  expect_same_value(f.at("t.f32"), gv::f32(1.5f), "t.f32");
  expect_same_value(f.at("t.f64"), gv::f64(-2.25e300), "t.f64");
  expect_same_value(f.at("t.true"), gv::boolean(true), "t.true");
  expect_same_value(f.at("t.false"), gv::boolean(false), "t.false");
  expect_same_value(f.at("t.string"), gv::str("h\xc3\xa9llo\nworld"), "t.string");
  expect_same_value(f.at("t.empty_string"), gv::str(""), "t.empty_string");
  expect_same_value(f.at("t.arr_u8"), gv::array(GgufType::U8, {gv::u8(1), gv::u8(2), gv::u8(255)}), "t.arr_u8");
  expect_same_value(f.at("t.arr_u64"), gv::array(GgufType::U64, {gv::u64(~std::uint64_t{0})}), "t.arr_u64");
  expect_same_value(f.at("t.arr_f64"), gv::array(GgufType::F64, {gv::f64(0.1), gv::f64(1e300)}), "t.arr_f64");
  expect_same_value(f.at("t.arr_bool"), gv::array(GgufType::Bool, {gv::boolean(true), gv::boolean(false)}),
                    "t.arr_bool");
  expect_same_value(f.at("t.arr_empty"), gv::array(GgufType::U32, {}), "t.arr_empty");
  expect_same_value(f.at("t.arr_nested"),
                    gv::array(GgufType::Array, {gv::array(GgufType::I16, {gv::i16(1), gv::i16(-2)}),
                                                gv::array(GgufType::I16, {}),
                                                gv::array(GgufType::I16, {gv::i16(3)})}),
                    "t.arr_nested");
  expect_same_value(f.at("t.arr_nested3").array.at(0).array.at(0).array.at(0), gv::str("deep"), "t.arr_nested3");

  struct Want { const char* name; std::vector<std::int64_t> dims; GgmlType type; };
  const std::vector<Want> want = {
      {"w.f32", {8, 3}, GgmlType::F32},      {"w.f16", {16}, GgmlType::F16},
      {"w.q4_0", {64, 2}, GgmlType::Q4_0},   {"w.empty", {0, 4}, GgmlType::F32},
      {"w.q4_1", {32, 3}, GgmlType::Q4_1},   {"w.scalar", {}, GgmlType::F32},
      {"w.4d", {2, 3, 1, 2}, GgmlType::F32}, {"w.q8_0", {32, 1}, GgmlType::Q8_0},
  };
  ASSERT_EQ(f.tensors().size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    const auto& t = f.tensors()[k];
    const auto spec = tensor_of("", want[k].dims, static_cast<std::uint32_t>(want[k].type), static_cast<std::uint32_t>(k + 1));
    EXPECT_EQ(t.name, want[k].name);
    EXPECT_EQ(t.dims, want[k].dims) << t.name;
    EXPECT_EQ(t.type, want[k].type) << t.name;
    EXPECT_EQ(t.offset, sample.layout.tensor_offset[k]) << t.name;
    EXPECT_EQ(t.offset % alignment, 0u) << t.name;
    EXPECT_EQ(t.nbytes, spec.data.size()) << t.name;
    EXPECT_EQ(&f.tensor(t.name), &t);
    const auto data = f.tensor_data(t);
    ASSERT_EQ(data.size(), spec.data.size()) << t.name;
    EXPECT_TRUE(std::equal(data.begin(), data.end(), spec.data.begin())) << t.name;
    // The bytes are aligned in memory as in the file (the buffer starts on a page).
    if (!data.empty()) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(data.data()) % alignment, 0u) << t.name;
    }
  }
  const auto& q = f.tensor("w.q4_1");
  EXPECT_EQ(q.numel(), 96);
  EXPECT_EQ(q.rows(), 3);
  EXPECT_EQ(q.cols(), 32);
  EXPECT_EQ(f.tensor("w.scalar").numel(), 1);
  EXPECT_EQ(f.tensor("w.scalar").cols(), 1);
  EXPECT_EQ(f.tensor("w.empty").numel(), 0);
  EXPECT_EQ(f.tensor("w.4d").rows(), 6);
}

INSTANTIATE_TEST_SUITE_P(VersionsAndAlignments, GgufRoundTrip,
                         ::testing::Values(std::pair<std::uint32_t, std::size_t>{3, 32},
                                           std::pair<std::uint32_t, std::size_t>{2, 32},
                                           std::pair<std::uint32_t, std::size_t>{3, 64},
                                           std::pair<std::uint32_t, std::size_t>{2, 64}),
                         [](const auto& info) {
                           return "v" + std::to_string(info.param.first) + "_align" + std::to_string(info.param.second);
                         });

TEST(Gguf, TypedGetters) {
  const auto f = GgufFile::parse(rich_sample(3, 32).bytes, "rich.gguf");
  EXPECT_EQ(f.get_int("t.u32"), 4000000000);
  EXPECT_EQ(f.get_int("t.i8"), -100);
  EXPECT_EQ(f.get_int("t.true"), 1);
  EXPECT_EQ(f.get_int("absent", 7), 7);
  EXPECT_EQ(f.get_int("t.u16", 7), 60000);
  EXPECT_EQ(f.get_float("t.f32"), 1.5);
  EXPECT_EQ(f.get_float("t.i16"), -30000.0);
  EXPECT_EQ(f.get_float("absent", 0.5), 0.5);
  EXPECT_TRUE(f.get_bool("t.true", false));
  EXPECT_FALSE(f.get_bool("t.false", true));
  EXPECT_TRUE(f.get_bool("absent", true));
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_string("absent", "x"), "x");
  EXPECT_EQ(f.get_strings("t.arr_str"), (std::vector<std::string>{"a", "", "ccc"}));
  EXPECT_EQ(f.get_floats("t.arr_f32"), (std::vector<float>{0.25f, -3.0f, 1e-5f}));
  EXPECT_EQ(f.get_floats("t.arr_i32"), (std::vector<float>{-1.0f, 7.0f}));
  EXPECT_EQ(f.get_ints("t.arr_i32"), (std::vector<std::int64_t>{-1, 7}));
  EXPECT_EQ(f.get_ints("t.arr_u8"), (std::vector<std::int64_t>{1, 2, 255}));
  EXPECT_TRUE(f.get_ints("t.arr_empty").empty());
  EXPECT_EQ(f.find("absent"), nullptr);
  EXPECT_EQ(f.find_tensor("absent"), nullptr);

  // Each refusal names the key (or tensor) and the file.
  const auto refuses = [&](auto&& call, const std::string& needle) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one mentioning " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(e.message().find("rich.gguf"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find(needle), std::string::npos) << e.message();
    }
  };
  refuses([&] { f.at("llama.block_count"); }, "'llama.block_count' is missing");
  refuses([&] { f.get_int("absent"); }, "'absent'");
  refuses([&] { f.get_int("t.string"); }, "'t.string'");
  refuses([&] { f.get_int("t.u64"); }, "does not fit");
  refuses([&] { f.get_int("t.f32", 3); }, "not an integer");
  refuses([&] { f.get_float("t.string"); }, "not a number");
  refuses([&] { f.get_string("t.u8"); }, "not a string");
  refuses([&] { f.get_bool("t.u8", false); }, "not a boolean");
  refuses([&] { f.get_bool("t.string", false); }, "not a bool");
  refuses([&] { f.get_strings("t.string"); }, "not an array");
  refuses([&] { f.get_strings("t.arr_u8"); }, "not a string");
  refuses([&] { f.get_ints("t.arr_str"); }, "not an integer");
  refuses([&] { f.get_floats("t.arr_nested"); }, "not a number");
  refuses([&] { f.tensor("w.absent"); }, "no tensor 'w.absent'");

  torsh::model::GgufTensorInfo foreign;
  foreign.name = "foreign";
  foreign.offset = 1 << 20;
  foreign.nbytes = 4;
  refuses([&] { f.tensor_data(foreign); }, "not inside this file");
}

TEST(Gguf, ValuesPrintAndTypesAreNamed) {
  const auto f = GgufFile::parse(rich_sample(3, 32).bytes, "rich.gguf");
  EXPECT_EQ(f.at("t.u8").to_string(), "200");
  EXPECT_EQ(f.at("t.i64").to_string(), "-4611686018427387904");
  EXPECT_EQ(f.at("t.f32").to_string(), "1.5");
  EXPECT_EQ(f.at("t.true").to_string(), "true");
  EXPECT_EQ(f.at("t.string").to_string(), "\"h\xc3\xa9llo\\nworld\"");
  EXPECT_EQ(f.at("t.arr_str").to_string(), "[\"a\", \"\", \"ccc\"]");
  EXPECT_EQ(f.at("t.arr_u8").to_string(2), "[1, 2, ... (3 u8 items)]");
  EXPECT_EQ(f.at("t.arr_nested").to_string(), "[[1, -2], [], [3]]");
  EXPECT_TRUE(f.at("t.u16").is_integer());
  EXPECT_FALSE(f.at("t.true").is_integer());
  EXPECT_TRUE(f.at("t.f64").is_float());

  EXPECT_EQ(torsh::model::gguf_type_name(GgufType::Array), "array");
  EXPECT_EQ(torsh::model::ggml_type_name(GgmlType::Q4_1), "q4_1");
  EXPECT_EQ(torsh::model::ggml_type_name(GgmlType::BF16), "bf16");
  EXPECT_EQ(torsh::model::ggml_type_name(static_cast<GgmlType>(42)), "type 42");
}

// Block sizes against the gguf Python package's GGML_QUANT_SIZES (gguf 0.x,
// checked by hand), except Q8_1: ggml's block_q8_1 holds two f16 scales and
// 32 quants (36 bytes, a static_assert in ggml-common.h) where the package
// still lists 40.
TEST(Gguf, GgmlBlockSizes) {
  const std::vector<std::tuple<std::uint32_t, std::int64_t, std::size_t>> sizes = {
      {0, 1, 4},      {1, 1, 2},      {2, 32, 18},    {3, 32, 20},    {6, 32, 22},   {7, 32, 24},  {8, 32, 34},
      {9, 32, 36},    {10, 256, 84},  {11, 256, 110}, {12, 256, 144}, {13, 256, 176}, {14, 256, 210},
      {15, 256, 292}, {24, 1, 1},     {25, 1, 2},     {26, 1, 4},     {27, 1, 8},    {28, 1, 8},   {30, 1, 2},
  };
  for (const auto& [type, elems, bytes] : sizes) {
    const auto block = torsh::model::ggml_type_block(type);
    ASSERT_TRUE(block.has_value()) << type;
    EXPECT_EQ(block->first, elems) << type;
    EXPECT_EQ(block->second, bytes) << type;
  }
  for (std::uint32_t unknown : {4u, 5u, 16u, 29u, 31u, 39u, 1000u}) EXPECT_FALSE(torsh::model::ggml_type_block(unknown)) << unknown;
}

// ---- files on disk ---------------------------------------------------------

// A directory for this process's files, removed when the tests end.
std::filesystem::path scratch_dir() {
  struct Scratch {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("torsh_test_gguf_" + std::to_string(::getpid()));
    Scratch() { std::filesystem::create_directories(path); }
    ~Scratch() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Scratch scratch;
  return scratch.path;
}

std::string write_file(const std::string& name, const Bytes& bytes) {
  const auto path = (scratch_dir() / name).string();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return path;
}

TEST(Gguf, OpenMapsTheFileAndKeepaliveOutlivesIt) {
  const auto sample = rich_sample(3, 64);
  const auto path = write_file("rich.gguf", sample.bytes);
  std::shared_ptr<const void> keep;
  std::span<const std::byte> data;
  {
    const auto f = GgufFile::open(path);
    EXPECT_EQ(f.path(), path);
    EXPECT_EQ(f.metadata().size(), sample.layout.key_at.size());
    data = f.tensor_data(f.tensor("w.q8_0"));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(data.data()) % 64, 0u);
    keep = f.keepalive();
  }
  const auto spec = tensor_of("", {32, 1}, kQ8_0, 8);
  ASSERT_EQ(data.size(), spec.data.size());
  EXPECT_TRUE(std::equal(data.begin(), data.end(), spec.data.begin()));
  keep.reset();
}

TEST(Gguf, OpenRefusesWhatIsNotAReadableFile) {
  const auto refuses = [](const std::string& path, const std::string& needle) {
    try {
      GgufFile::open(path);
      ADD_FAILURE() << path << " opened";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(e.message().find(path), std::string::npos) << e.message();
      EXPECT_NE(e.message().find(needle), std::string::npos) << e.message();
      EXPECT_FALSE(e.suggestions().empty());
    }
  };
  refuses((scratch_dir() / "absent.gguf").string(), "cannot open");
  refuses(scratch_dir().string(), "not a regular file");
  refuses(write_file("empty.gguf", {}), "byte 0");
  refuses(write_file("short.gguf", {std::byte{'G'}, std::byte{'G'}}), "byte 0");
}

// ---- hostile files ---------------------------------------------------------

// Parses `bytes` expecting InvalidArgument at byte `at` whose message holds `needle`.
void expect_refused(const Bytes& bytes, std::size_t at, const std::string& needle) {
  try {
    GgufFile::parse(bytes, "hostile.gguf");
    ADD_FAILURE() << "parsed; expected an error at byte " << at << " mentioning " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    const std::string where = "GGUF hostile.gguf: byte " + std::to_string(at) + ": ";
    EXPECT_EQ(e.message().rfind(where, 0), 0u) << e.message() << "\nexpected it to start with " << where;
    EXPECT_NE(e.message().find(needle), std::string::npos) << e.message();
    EXPECT_FALSE(e.suggestions().empty());
  }
}

TEST(GgufHostile, TruncatedAtEveryByteIsRefused) {
  for (const auto& sample : {rich_sample(3, 32), rich_sample(2, 64)}) {
    for (std::size_t n = 0; n < sample.layout.data_end; ++n) {
      const Bytes cut(sample.bytes.begin(), sample.bytes.begin() + static_cast<std::ptrdiff_t>(n));
      try {
        GgufFile::parse(cut, "cut.gguf");
        ADD_FAILURE() << "a file cut to " << n << " of " << sample.bytes.size() << " bytes parsed";
      } catch (const Error& e) {
        ASSERT_EQ(e.code(), ErrorCode::InvalidArgument) << n;
        ASSERT_NE(e.message().find("cut.gguf: byte "), std::string::npos) << e.message();
      }
    }
    // Only the padding after the last tensor may go.
    for (std::size_t n = sample.layout.data_end; n <= sample.bytes.size(); ++n) {
      const Bytes cut(sample.bytes.begin(), sample.bytes.begin() + static_cast<std::ptrdiff_t>(n));
      EXPECT_NO_THROW(GgufFile::parse(cut, "cut.gguf")) << n;
    }
  }
}

TEST(GgufHostile, HeaderFaults) {
  const auto valid = small_writer().build();
  auto b = valid;
  patch<std::uint32_t>(b, 0, 0x4c4d4747);  // "GGML"
  expect_refused(b, 0, "not a GGUF file: it starts with 'GGML'");
  for (std::uint32_t v : {0u, 4u, 0x10000u}) {
    b = valid;
    patch<std::uint32_t>(b, 4, v);
    expect_refused(b, 4, "unsupported GGUF version " + std::to_string(v));
  }
  b = valid;
  patch<std::uint32_t>(b, 4, 1);
  expect_refused(b, 4, "version 1 is not supported");
  b = valid;
  patch<std::uint32_t>(b, 4, 0x03000000);
  expect_refused(b, 4, "big-endian");
  b = valid;
  patch<std::uint64_t>(b, 8, std::uint64_t{1} << 60);
  expect_refused(b, 8, "claims 1152921504606846976 tensors");
  b = valid;
  patch<std::uint64_t>(b, 16, ~std::uint64_t{0});
  expect_refused(b, 8, "metadata entries");
}

TEST(GgufHostile, MetadataFaults) {
  GgufLayout at;
  GgufWriter w;
  w.kv("k.str", gv::str("value")).kv("k.arr", gv::array(GgufType::U32, {gv::u32(1), gv::u32(2)}));
  w.kv("k.bool", gv::boolean(true)).kv("k.strs", gv::array(GgufType::String, {gv::str("x")}));
  w.tensor(tensor_of("t", {4}, kF32, 1));
  const auto valid = w.build(&at);
  ASSERT_NO_THROW(GgufFile::parse(valid, "hostile.gguf"));

  auto b = valid;
  patch<std::uint64_t>(b, at.key_at[0], std::uint64_t{1} << 62);
  expect_refused(b, at.key_at[0], "a metadata key claims 4611686018427387904 bytes");
  b = valid;
  patch<std::uint64_t>(b, at.value_at[0], 1000);
  expect_refused(b, at.value_at[0], "a string value claims 1000 bytes");
  b = valid;
  patch<std::uint32_t>(b, at.value_at[0] - 4, 13);
  expect_refused(b, at.value_at[0] - 4, "value type of key 'k.str' is 13, not a GGUF value type");
  b = valid;
  patch<std::uint64_t>(b, at.value_at[1] + 4, std::uint64_t{1} << 60);
  expect_refused(b, at.value_at[1] + 4, "an array claims 1152921504606846976 u32 values");
  b = valid;  // just too many for the bytes left: refused before anything is reserved
  patch<std::uint64_t>(b, at.value_at[1] + 4, (b.size() - at.value_at[1] - 12) / 4 + 1);
  expect_refused(b, at.value_at[1] + 4, "an array claims");
  b = valid;
  patch<std::uint32_t>(b, at.value_at[1], 99);
  expect_refused(b, at.value_at[1], "an array's element type is 99");
  b = valid;
  patch<std::uint8_t>(b, at.value_at[2], 2);
  expect_refused(b, at.value_at[2], "a bool value is 2");
  b = valid;
  patch<std::uint64_t>(b, at.value_at[3] + 12, ~std::uint64_t{0} - 3);
  expect_refused(b, at.value_at[3] + 12, "a string value claims");

  GgufLayout dup_at;
  const auto dup = GgufWriter().kv("a", gv::u8(1)).kv("b", gv::u8(2)).kv("a", gv::u8(3)).build(&dup_at);
  expect_refused(dup, dup_at.key_at[2], "metadata key 'a' appears twice");
  GgufLayout odd_at;
  const auto odd = GgufWriter().kv("x\x01y", gv::u8(1)).kv("x\x01y", gv::u8(2)).build(&odd_at);
  expect_refused(odd, odd_at.key_at[1], "metadata key 'x\\x01y' appears twice");
}

GgufValue nested(int depth) {
  GgufValue v = gv::array(GgufType::U8, {gv::u8(1)});
  for (int k = 1; k < depth; ++k) v = gv::array(GgufType::Array, {v});
  return v;
}

TEST(GgufHostile, ArraysNestAtMostEightDeep) {
  ASSERT_NO_THROW(GgufFile::parse(GgufWriter().kv("deep", nested(8)).build(), "hostile.gguf"));
  GgufLayout at;
  const auto b = GgufWriter().kv("deep", nested(9)).build(&at);
  expect_refused(b, at.value_at[0] + 8 * 12, "nested more than 8 deep");
}

TEST(GgufHostile, MetadataValueBudget) {
  // One array of 2^24 + 1 bytes: more values than the reader holds, refused
  // at the array's length before anything is reserved.
  ByteWriter w;
  for (char c : std::string_view("GGUF")) w.u8(static_cast<std::uint8_t>(c));
  w.u32(3);
  w.u64(0);
  w.u64(1);
  w.str("big");
  w.u32(static_cast<std::uint32_t>(GgufType::Array));
  w.u32(static_cast<std::uint32_t>(GgufType::U8));
  const std::size_t count_at = w.size();
  const std::uint64_t n = (std::uint64_t{1} << 24) + 1;
  w.u64(n);
  w.bytes().resize(w.size() + n);
  expect_refused(w.bytes(), count_at, "more than 16777216 values");
}

TEST(GgufHostile, AlignmentFaults) {
  const auto with_alignment = [](GgufValue a) {
    GgufLayout at;
    auto b = GgufWriter().kv("general.alignment", std::move(a)).tensor(tensor_of("t", {4}, kF32, 1)).build(&at);
    return std::pair{b, at.value_at[0]};
  };
  for (std::uint32_t bad : {0u, 3u, 48u, 0x80000001u}) {
    const auto [b, at] = with_alignment(gv::u32(bad));
    expect_refused(b, at, "general.alignment is " + std::to_string(bad) + "; it must be a power of two");
  }
  {
    const auto [b, at] = with_alignment(gv::i32(-32));
    expect_refused(b, at, "must be a power of two");
  }
  {
    const auto [b, at] = with_alignment(gv::str("32"));
    expect_refused(b, at, "general.alignment is a string, not an integer");
  }
  {
    // A valid but enormous alignment puts the data section past the end.
    const auto [b, at] = with_alignment(gv::u64(std::uint64_t{1} << 40));
    try {
      GgufFile::parse(b, "hostile.gguf");
      ADD_FAILURE() << "parsed";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find("the data section would start at byte 1099511627776"), std::string::npos)
          << e.message();
    }
  }
  // Any integer type holding a power of two is accepted.
  const auto [b, at] = with_alignment(gv::u8(16));
  EXPECT_EQ(GgufFile::parse(b, "ok.gguf").alignment(), 16u);
}

TEST(GgufHostile, TensorFaults) {
  GgufLayout at;
  const auto valid = small_writer().build(&at);
  ASSERT_NO_THROW(GgufFile::parse(valid, "hostile.gguf"));

  auto b = valid;
  patch<std::uint32_t>(b, at.tensor_type_at[1], 99);
  expect_refused(b, at.tensor_type_at[1], "tensor 'b' has ggml type 99, which this reader does not know");
  b = valid;
  patch<std::uint32_t>(b, at.tensor_type_at[1], 4);  // Q4_2, removed from ggml
  expect_refused(b, at.tensor_type_at[1], "ggml type 4");
  b = valid;
  patch<std::uint64_t>(b, at.tensor_offset_at[1], at.tensor_offset[1] + 4);
  expect_refused(b, at.tensor_offset_at[1], "data offset 100 is not a multiple of the alignment 32");
  b = valid;
  patch<std::uint64_t>(b, at.tensor_offset_at[1], 4096);
  expect_refused(b, at.tensor_offset_at[1], "ends past the end of the file");
  b = valid;
  patch<std::uint64_t>(b, at.tensor_offset_at[1], std::uint64_t{1} << 63);
  expect_refused(b, at.tensor_offset_at[1], "ends past the end of the file");
  b = valid;
  patch<std::uint64_t>(b, at.tensor_offset_at[1], 32);  // inside tensor 'a' (68 bytes at 0)
  expect_refused(b, at.tensor_offset_at[1], "tensor 'b' at data offset 32 overlaps tensor 'a'");
  b = valid;  // the Q8_0 tensor's rows become 33 elements: not whole blocks
  patch<std::uint64_t>(b, at.tensor_info_at[0] + 8 + 1 + 4, 33);
  expect_refused(b, at.tensor_info_at[0] + 8 + 1, "rows of 33 elements, not a multiple of the q8_0 block size 32");
  b = valid;
  patch<std::uint32_t>(b, at.tensor_info_at[0] + 8 + 1, 5);
  expect_refused(b, at.tensor_info_at[0] + 8 + 1, "tensor 'a' has 5 dimensions; GGUF tensors have at most 4");

  GgufLayout dup_at;
  const auto dup =
      GgufWriter().tensor(tensor_of("same", {4}, kF32, 1)).tensor(tensor_of("same", {4}, kF32, 2)).build(&dup_at);
  expect_refused(dup, dup_at.tensor_info_at[1], "tensor name 'same' appears twice");
}

// A tensor info written by hand, for dimensions the writer's data could not hold.
Bytes one_tensor_file(const std::vector<std::uint64_t>& dims, std::size_t* dims_at) {
  ByteWriter w;
  for (char c : std::string_view("GGUF")) w.u8(static_cast<std::uint8_t>(c));
  w.u32(3);
  w.u64(1);
  w.u64(0);
  w.str("huge");
  w.u32(static_cast<std::uint32_t>(dims.size()));
  *dims_at = w.size();
  for (auto d : dims) w.u64(d);
  w.u32(kF32);
  w.u64(0);
  w.pad_to(32);
  w.bytes().resize(w.size() + 64);
  return std::move(w.bytes());
}

TEST(GgufHostile, DimensionFaults) {
  std::size_t at = 0;
  auto b = one_tensor_file({std::uint64_t{1} << 32, std::uint64_t{1} << 32}, &at);
  expect_refused(b, at + 8, "more than 2^63 - 1 elements (dimension 1 is 4294967296)");
  b = one_tensor_file({0, std::uint64_t{1} << 62, 4}, &at);  // a 0 does not hide the overflow
  expect_refused(b, at + 16, "more than 2^63 - 1 elements");
  b = one_tensor_file({4, ~std::uint64_t{0}}, &at);
  expect_refused(b, at + 8, "dimension 1 is negative (-1)");
  b = one_tensor_file({std::uint64_t{1} << 62}, &at);  // elements fit int64, bytes do not fit 2^64
  expect_refused(b, at - 4, "more than 2^64 bytes");
  b = one_tensor_file({std::uint64_t{1} << 40}, &at);
  expect_refused(b, at + 8 + 4, "ends past the end of the file");
  b = one_tensor_file({16}, &at);
  EXPECT_EQ(GgufFile::parse(b, "ok.gguf").tensors()[0].nbytes, 64u);
}

TEST(GgufHostile, AFileWithoutTensorsMayEndBeforeThePadding) {
  auto b = GgufWriter().kv("only", gv::u8(1)).build();
  const std::size_t unpadded = 4 + 4 + 8 + 8 + 8 + 4 + 4 + 1;
  ASSERT_GE(b.size(), unpadded);
  b.resize(unpadded);
  const auto f = GgufFile::parse(b, "bare.gguf");
  EXPECT_EQ(f.data_offset(), unpadded);
  EXPECT_TRUE(f.tensors().empty());
}

// ---- random mutations --------------------------------------------------------

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// One to four random edits: bit flips, random or boundary values written over
// a byte or a count-sized word, inserted or deleted runs, a cut, a copied run.
void mutate(Bytes& b, std::mt19937_64& rng) {
  static constexpr std::uint64_t kInteresting[] = {0, 1, 2, 3, 4, 31, 32, 33, 64, 0x7f, 0x80, 0xff, 0xffff,
                                                   0x7fffffff, 0x80000000, 0xffffffff, std::uint64_t{1} << 32,
                                                   std::uint64_t{1} << 60, std::uint64_t{1} << 63, ~std::uint64_t{0}};
  const auto pick = [&](std::size_t n) { return n ? static_cast<std::size_t>(rng() % n) : 0; };
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = pick(b.size());
    switch (rng() % 8) {
      case 0: if (!b.empty()) b[at] ^= static_cast<std::byte>(1u << (rng() % 8)); break;
      case 1: if (!b.empty()) b[at] = static_cast<std::byte>(rng() & 0xff); break;
      case 2: case 3: {
        const std::size_t width = (rng() % 2) ? 8 : 4;
        if (b.size() >= width) {
          std::uint64_t v = kInteresting[pick(std::size(kInteresting))];
          if (rng() % 4 == 0) v = b.size() + pick(64) - 32;  // near the file size
          const std::size_t w_at = pick(b.size() - width + 1);
          for (std::size_t k = 0; k < width; ++k) b[w_at + k] = static_cast<std::byte>((v >> (8 * k)) & 0xff);
        }
        break;
      }
      case 4: {
        const std::size_t n = 1 + pick(16);
        for (std::size_t k = 0; k < n; ++k)
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::byte>(rng() & 0xff));
        break;
      }
      case 5: {
        const std::size_t n = std::min<std::size_t>(1 + pick(16), b.size() - at);
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
        break;
      }
      case 6: b.resize(at); break;
      case 7: {
        const std::size_t n = std::min<std::size_t>(1 + pick(32), b.size() - at);
        const Bytes run(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size() + 1)), run.begin(), run.end());
        break;
      }
    }
  }
}

// Whatever parsed is used the way a loader would use it.
void exercise(const GgufFile& f) {
  ASSERT_LE(f.data_offset(), f.file_size());
  ASSERT_EQ(f.alignment() & (f.alignment() - 1), 0u);
  for (const auto& [key, value] : f.metadata()) (void)value.to_string(4);
  std::uint8_t sum = 0;
  for (const auto& t : f.tensors()) {
    const auto data = f.tensor_data(t);
    if (!data.empty()) sum ^= std::to_integer<std::uint8_t>(data.front()) ^ std::to_integer<std::uint8_t>(data.back());
    (void)t.numel();
    (void)t.rows();
  }
  (void)sum;
}

// tests/golden/gguf_py.gguf, from the gguf Python package's writer.
Bytes golden_file() {
  std::ifstream in(std::string(TORSH_GOLDEN_DIR) + "/gguf_py.gguf", std::ios::binary);
  Bytes b;
  for (char c; in.get(c);) b.push_back(static_cast<std::byte>(c));
  EXPECT_FALSE(b.empty()) << "tests/golden/gguf_py.gguf is missing";
  return b;
}

// Iterations and seed from TORSH_GGUF_FUZZ_ITERS and TORSH_GGUF_FUZZ_SEED
// (scripts/fuzz-gguf.sh runs it at length under the sanitizers).
TEST(GgufFuzz, MutatedFilesRaiseOnlyTorshErrors) {
  const std::uint64_t iterations = env_or("TORSH_GGUF_FUZZ_ITERS", 20000);
  const std::uint64_t seed = env_or("TORSH_GGUF_FUZZ_SEED", 20240917);
  const std::vector<Bytes> seeds = {small_writer().build(), rich_sample(3, 32).bytes, rich_sample(2, 64).bytes,
                                    GgufWriter().kv("deep", nested(8)).build(), golden_file()};
  std::uint64_t parsed = 0, refused = 0;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + i);
    Bytes b = seeds[rng() % seeds.size()];
    mutate(b, rng);
    try {
      const auto f = GgufFile::parse(b, "fuzz.gguf");
      ++parsed;
      exercise(f);
    } catch (const Error& e) {
      ++refused;
      if (e.code() != ErrorCode::InvalidArgument)
        ADD_FAILURE() << "iteration " << i << " (seed " << seed << "): " << e.what();
    } catch (const std::exception& e) {
      FAIL() << "iteration " << i << " (seed " << seed << ") threw something else: " << e.what();
    }
    if (HasFatalFailure()) FAIL() << "iteration " << i << " (seed " << seed << ")";
  }
  RecordProperty("parsed", static_cast<int>(parsed));
  std::printf("[ fuzz     ] %llu mutations (seed %llu): %llu parsed, %llu refused\n",
              static_cast<unsigned long long>(iterations), static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(parsed), static_cast<unsigned long long>(refused));
}

}  // namespace

// ---- a file from the gguf Python package's writer ----------------------------

// tests/golden/gguf_py.gguf, written by gguf.GGUFWriter, against
// tests/golden/gguf_py.expected: what gguf.GGUFReader saw in it (the format is
// described in scripts/make_gguf_golden.py, which makes both).
namespace golden {

std::uint64_t fnv1a(std::span<const std::byte> bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (auto b : bytes) h = (h ^ std::to_integer<std::uint8_t>(b)) * 0x100000001b3ULL;
  return h;
}

std::string unhex(const std::string& hex) {
  if (hex == "-") return "";
  std::string out;
  for (std::size_t k = 0; k + 1 < hex.size(); k += 2)
    out += static_cast<char>(std::stoi(hex.substr(k, 2), nullptr, 16));
  return out;
}

// A scalar as the expectations file writes it.
std::string text_of(const GgufValue& v) {
  switch (v.type) {
    case GgufType::String: return v.s.empty() ? "-" : [&] {
      std::string hex;
      constexpr char digits[] = "0123456789abcdef";
      for (unsigned char c : v.s) hex += {digits[c >> 4], digits[c & 0xf]};
      return hex;
    }();
    case GgufType::Bool: return v.i ? "1" : "0";
    default: return v.to_string();
  }
}

std::size_t leaves(const GgufValue& v) {
  if (v.type != GgufType::Array) return 1;
  std::size_t n = 0;
  for (const auto& e : v.array) n += leaves(e);
  return n;
}

}  // namespace golden

TEST(GgufGolden, ReadsWhatTheReferenceWriterWroteAsTheReferenceReaderDoes) {
  const std::string dir = TORSH_GOLDEN_DIR;
  const auto f = GgufFile::open(dir + "/gguf_py.gguf");
  std::ifstream expected(dir + "/gguf_py.expected");
  ASSERT_TRUE(expected) << dir << "/gguf_py.expected";
  std::size_t kvs = 0, tensors = 0;
  for (std::string line; std::getline(expected, line);) {
    std::istringstream in(line);
    std::string what;
    in >> what;
    SCOPED_TRACE(line);
    if (what == "version") {
      std::uint32_t v;
      in >> v;
      EXPECT_EQ(f.version(), v);
    } else if (what == "alignment" || what == "data_offset" || what == "kv_count" || what == "tensor_count") {
      std::size_t n;
      in >> n;
      const std::size_t got = what == "alignment"     ? f.alignment()
                              : what == "data_offset" ? f.data_offset()
                              : what == "kv_count"    ? f.metadata().size()
                                                      : f.tensors().size();
      EXPECT_EQ(got, n);
    } else if (what == "kv") {
      ++kvs;
      std::string key;
      std::uint32_t type;
      in >> key >> type;
      const GgufValue* v = f.find(key);
      ASSERT_NE(v, nullptr);
      ASSERT_EQ(static_cast<std::uint32_t>(v->type), type);
      const auto same_scalar = [](const GgufValue& got, const std::string& want) {
        if (got.is_float()) {
          EXPECT_EQ(got.f, std::strtod(want.c_str(), nullptr));
        } else if (got.type == GgufType::String) {
          EXPECT_EQ(got.s, golden::unhex(want));
        } else {
          EXPECT_EQ(golden::text_of(got), want);
        }
      };
      if (v->type != GgufType::Array) {
        std::string want;
        in >> want;
        same_scalar(*v, want);
        continue;
      }
      std::uint32_t elem;
      std::size_t count;
      in >> elem >> count;
      ASSERT_EQ(static_cast<std::uint32_t>(v->elem_type), elem);
      if (v->elem_type == GgufType::Array) {
        EXPECT_EQ(golden::leaves(*v), count);
        continue;
      }
      ASSERT_EQ(v->array.size(), count);
      for (const auto& e : v->array) {
        std::string want;
        in >> want;
        same_scalar(e, want);
      }
    } else if (what == "tensor") {
      ++tensors;
      std::string name, dims, hash;
      std::uint32_t type;
      std::size_t offset, nbytes;
      in >> name >> type >> dims >> offset >> nbytes >> hash;
      const auto& t = f.tensor(name);
      EXPECT_EQ(static_cast<std::uint32_t>(t.type), type);
      std::string got_dims;
      for (std::size_t k = 0; k < t.dims.size(); ++k) {
        if (k) got_dims += ',';
        got_dims += std::to_string(t.dims[k]);
      }
      EXPECT_EQ(got_dims, dims);
      EXPECT_EQ(f.data_offset() + t.offset, offset);
      EXPECT_EQ(t.nbytes, nbytes);
      EXPECT_EQ(golden::fnv1a(f.tensor_data(t)), std::stoull(hash, nullptr, 16));
    } else {
      ADD_FAILURE() << "unknown line";
    }
  }
  EXPECT_EQ(kvs, f.metadata().size());
  EXPECT_EQ(tensors, f.tensors().size());
}

// ---- the SmolLM2 file, as the gguf Python package reads it -------------------

namespace smollm2 {

// FNV-1a over "name|type|dims|absolute offset|nbytes\n" for every tensor in
// file order, with the same string built from gguf.GGUFReader's tensors
// (t.name, int(t.tensor_type), t.shape, t.data_offset, t.n_bytes).
std::uint64_t tensor_table_hash(const GgufFile& f) {
  std::string s;
  for (const auto& t : f.tensors()) {
    std::ostringstream line;
    line << t.name << '|' << static_cast<std::uint32_t>(t.type) << '|';
    for (std::size_t k = 0; k < t.dims.size(); ++k) line << (k ? "," : "") << t.dims[k];
    line << '|' << f.data_offset() + t.offset << '|' << t.nbytes << '\n';
    s += line.str();
  }
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

std::vector<float> first_floats(const GgufFile& f, const char* name, std::size_t n) {
  const auto data = f.tensor_data(f.tensor(name));
  std::vector<float> out(n);
  std::memcpy(out.data(), data.data(), n * sizeof(float));
  return out;
}

}  // namespace smollm2

TEST(GgufSmolLM2, ReadsAsTheReferenceReaderDoes) {
  const auto path = torsh::model::find_model(torsh::model::kSmolLM2FileName);
  if (!path)
    GTEST_SKIP() << torsh::model::kSmolLM2FileName << " is not in " << torsh::model::model_cache_dir()
                 << "; scripts/fetch-model.sh puts it there";
  const auto f = GgufFile::open(*path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.file_size(), 98362432u);
  EXPECT_EQ(f.data_offset(), 1785664u);
  EXPECT_EQ(f.metadata().size(), 33u);
  ASSERT_EQ(f.tensors().size(), 272u);

  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_string("general.name"), "Smollm2 135M 8k Lc100K Mix1 Ep2");
  EXPECT_EQ(f.get_strings("general.languages"), std::vector<std::string>{"en"});
  EXPECT_EQ(f.get_int("llama.block_count"), 30);
  EXPECT_EQ(f.get_int("llama.context_length"), 8192);
  EXPECT_EQ(f.get_int("llama.embedding_length"), 576);
  EXPECT_EQ(f.get_int("llama.attention.head_count"), 9);
  EXPECT_EQ(f.get_int("llama.attention.head_count_kv"), 3);
  EXPECT_EQ(f.get_int("llama.rope.dimension_count"), 64);
  EXPECT_EQ(f.get_float("llama.rope.freq_base"), 100000.0);
  EXPECT_EQ(f.get_float("llama.attention.layer_norm_rms_epsilon"), static_cast<double>(1e-5f));
  EXPECT_EQ(f.get_int("general.file_type"), 3);
  EXPECT_EQ(f.get_int("general.quantization_version"), 2);
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(f.get_string("tokenizer.ggml.pre"), "smollm");
  EXPECT_FALSE(f.get_bool("tokenizer.ggml.add_bos_token", true));
  EXPECT_EQ(f.get_int("tokenizer.ggml.bos_token_id"), 1);
  EXPECT_EQ(f.get_int("tokenizer.ggml.eos_token_id"), 2);
  EXPECT_EQ(f.get_int("tokenizer.ggml.unknown_token_id"), 0);
  EXPECT_EQ(f.get_int("tokenizer.ggml.padding_token_id"), 2);
  EXPECT_EQ(f.get_string("tokenizer.chat_template").size(), 368u);

  const auto tokens = f.get_strings("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 49152u);
  EXPECT_EQ(tokens[0], "<|endoftext|>");
  EXPECT_EQ(tokens[1], "<|im_start|>");
  EXPECT_EQ(tokens[2], "<|im_end|>");
  EXPECT_EQ(tokens.back(), "ectable");
  const auto merges = f.get_strings("tokenizer.ggml.merges");
  ASSERT_EQ(merges.size(), 48900u);
  EXPECT_EQ(merges[0], "\xc4\xa0 t");
  EXPECT_EQ(merges.back(), "ect able");
  const auto types = f.get_ints("tokenizer.ggml.token_type");
  ASSERT_EQ(types.size(), 49152u);
  EXPECT_EQ(std::count(types.begin(), types.end(), 3), 17);
  EXPECT_EQ(std::count(types.begin(), types.end(), 1), 49135);

  const auto& embd = f.tensors()[0];
  EXPECT_EQ(embd.name, "token_embd.weight");
  EXPECT_EQ(embd.type, GgmlType::Q8_0);
  EXPECT_EQ(embd.dims, (std::vector<std::int64_t>{576, 49152}));
  EXPECT_EQ(f.data_offset() + embd.offset, 1785664u);
  EXPECT_EQ(embd.nbytes, 30081024u);
  const auto& down = f.tensor("blk.0.ffn_down.weight");
  EXPECT_EQ(down.type, GgmlType::Q4_1);
  EXPECT_EQ(down.dims, (std::vector<std::int64_t>{1536, 576}));
  EXPECT_EQ(f.data_offset() + down.offset, 31868992u);
  EXPECT_EQ(down.nbytes, 552960u);
  const auto& out_norm = f.tensor("output_norm.weight");
  EXPECT_EQ(f.data_offset() + out_norm.offset + out_norm.nbytes, f.file_size());
  EXPECT_EQ(smollm2::tensor_table_hash(f), 0xc005bcf9272524dcULL);

  // Tensor bytes, as numpy shows them through the reference reader.
  const auto down_bytes = f.tensor_data(down).first(16);
  const std::vector<int> down_want = {85, 48, 208, 184, 2, 7, 101, 49, 84, 98, 85, 150, 55, 37, 99, 82};
  for (std::size_t k = 0; k < 16; ++k) EXPECT_EQ(std::to_integer<int>(down_bytes[k]), down_want[k]) << k;
  const auto embd_block = f.tensor_data(embd).first(4);  // the first Q8_0 block's f16 scale and two quants
  EXPECT_EQ(std::to_integer<int>(embd_block[0]), 0x32);
  EXPECT_EQ(std::to_integer<int>(embd_block[1]), 0x19);
  EXPECT_EQ(std::to_integer<int>(embd_block[2]), 0xd6);
  EXPECT_EQ(std::to_integer<int>(embd_block[3]), 0x0d);
  EXPECT_EQ(smollm2::first_floats(f, "blk.0.attn_norm.weight", 16),
            (std::vector<float>{0.01397705078125f, 0.0238037109375f, -0.019775390625f, -0.0302734375f,
                                -0.0196533203125f, -0.03515625f, 0.0225830078125f, -0.02001953125f, -0.1630859375f,
                                0.0167236328125f, 0.00176239013671875f, -0.048095703125f, 0.0035400390625f,
                                0.091796875f, 0.052978515625f, -0.035888671875f}));
  EXPECT_EQ(smollm2::first_floats(f, "output_norm.weight", 4),
            (std::vector<float>{1.7578125f, 1.8203125f, 1.78125f, 1.6015625f}));
}

// ---- the model cache directory ---------------------------------------------

// Sets (or, for nullptr, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(ModelCache, DirectoryFollowsTheEnvironment) {
  {
    ScopedEnv dir("TORSH_MODEL_DIR", "/models/here"), xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(torsh::model::model_cache_dir(), "/models/here");
  }
  {
    ScopedEnv dir("TORSH_MODEL_DIR", ""), xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(torsh::model::model_cache_dir(), "/xdg/torsh/models");
  }
  {
    ScopedEnv dir("TORSH_MODEL_DIR", nullptr), xdg("XDG_CACHE_HOME", ""), home("HOME", "/home/someone");
    EXPECT_EQ(torsh::model::model_cache_dir(), "/home/someone/.cache/torsh/models");
  }
}

TEST(ModelCache, FindModelWantsARegularFile) {
  const auto dir = scratch_dir() / "models";
  std::filesystem::create_directories(dir / "a_directory.gguf");
  write_file("models/present.gguf", small_writer().build());
  ScopedEnv env("TORSH_MODEL_DIR", dir.c_str());
  EXPECT_EQ(torsh::model::find_model("present.gguf"), (dir / "present.gguf").string());
  EXPECT_EQ(torsh::model::find_model("absent.gguf"), std::nullopt);
  EXPECT_EQ(torsh::model::find_model("a_directory.gguf"), std::nullopt);
}
