// The GGUF reader on valid files: files written by tests/gguf_writer.hpp read
// back exactly (v2 and v3, every metadata type, nested arrays, two alignments,
// several tensor types), typed getters and their refusals, mapped files and
// keepalive, a file from the gguf Python package's writer as its reader sees
// it, and, when it is in the model cache, the SmolLM2 file as that reader sees
// it. Hostile files and the mutation fuzzer are in test_gguf_hostile.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "gguf_samples.hpp"
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

// `got` holds what `want` holds, recursively (F32 values as the file rounds them).
void expect_same_value(const GgufValue& got, const GgufValue& want, const std::string& where) {
  ASSERT_EQ(got.type, want.type) << where;
  switch (want.type) {
    case GgufType::U8:
    case GgufType::U16:
    case GgufType::U32:
    case GgufType::U64: EXPECT_EQ(got.u, want.u) << where; break;
    case GgufType::I8:
    case GgufType::I16:
    case GgufType::I32:
    case GgufType::I64:
    case GgufType::Bool: EXPECT_EQ(got.i, want.i) << where; break;
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
                                                gv::array(GgufType::I16, {}), gv::array(GgufType::I16, {gv::i16(3)})}),
                    "t.arr_nested");
  expect_same_value(f.at("t.arr_nested3").array.at(0).array.at(0).array.at(0), gv::str("deep"), "t.arr_nested3");

  struct Want {
    const char* name;
    std::vector<std::int64_t> dims;
    GgmlType type;
  };
  const std::vector<Want> want = {
      {"w.f32", {8, 3}, GgmlType::F32},      {"w.f16", {16}, GgmlType::F16},      {"w.q4_0", {64, 2}, GgmlType::Q4_0},
      {"w.empty", {0, 4}, GgmlType::F32},    {"w.q4_1", {32, 3}, GgmlType::Q4_1}, {"w.scalar", {}, GgmlType::F32},
      {"w.4d", {2, 3, 1, 2}, GgmlType::F32}, {"w.q8_0", {32, 1}, GgmlType::Q8_0},
  };
  ASSERT_EQ(f.tensors().size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    const auto& t = f.tensors()[k];
    const auto spec =
        tensor_of("", want[k].dims, static_cast<std::uint32_t>(want[k].type), static_cast<std::uint32_t>(k + 1));
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
  EXPECT_EQ(torsh::model::ggml_type_name(GgmlType::IQ4_XS), "iq4_xs");
  EXPECT_EQ(torsh::model::ggml_type_name(static_cast<GgmlType>(99)), "type 99");
}

// Block sizes against the gguf Python package's GGML_QUANT_SIZES (gguf 0.x,
// checked by hand), except Q8_1: ggml's block_q8_1 holds two f16 scales and
// 32 quants (36 bytes, a static_assert in ggml-common.h) where the package
// still lists 40.
TEST(Gguf, GgmlBlockSizes) {
  const std::vector<std::tuple<std::uint32_t, std::int64_t, std::size_t>> sizes = {
      {0, 1, 4},
      {1, 1, 2},
      {2, 32, 18},
      {3, 32, 20},
      {6, 32, 22},
      {7, 32, 24},
      {8, 32, 34},
      {9, 32, 36},
      {10, 256, 84},
      {11, 256, 110},
      {12, 256, 144},
      {13, 256, 176},
      {14, 256, 210},
      {15, 256, 292},
      {24, 1, 1},
      {25, 1, 2},
      {26, 1, 4},
      {27, 1, 8},
      {28, 1, 8},
      {30, 1, 2},
      // The i-quants, ternary and fp4 types (gguf-py 0.19's GGML_QUANT_SIZES).
      {16, 256, 66},
      {17, 256, 74},
      {18, 256, 98},
      {19, 256, 50},
      {20, 32, 18},
      {21, 256, 110},
      {22, 256, 82},
      {23, 256, 136},
      {29, 256, 56},
      {34, 256, 54},
      {35, 256, 66},
      {39, 32, 17},
      {40, 64, 36},
      {41, 128, 18},
      {42, 64, 18},
  };
  for (const auto& [type, elems, bytes] : sizes) {
    const auto block = torsh::model::ggml_type_block(type);
    ASSERT_TRUE(block.has_value()) << type;
    EXPECT_EQ(block->first, elems) << type;
    EXPECT_EQ(block->second, bytes) << type;
  }
  // 4, 5, 31-33 and 36-38 were removed from the format.
  for (std::uint32_t unknown : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 43u, 1000u})
    EXPECT_FALSE(torsh::model::ggml_type_block(unknown)) << unknown;
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

// read_tensor_data gives the bytes tensor_data views, read from the file for
// an opened one and copied for a parsed one; a tensor from elsewhere is refused.
TEST(Gguf, ReadTensorDataGivesTheMappedBytes) {
  const auto sample = rich_sample(3, 64);
  const auto path = write_file("rich_read.gguf", sample.bytes);
  const auto opened = GgufFile::open(path);
  const auto parsed = GgufFile::parse(sample.bytes);
  for (const GgufFile* f : {&opened, &parsed})
    for (const auto& t : f->tensors()) {
      const auto mapped = f->tensor_data(t);
      std::vector<std::byte> read(t.nbytes + 1, std::byte{0x5a});
      f->read_tensor_data(t, read.data());
      EXPECT_TRUE(std::equal(mapped.begin(), mapped.end(), read.begin())) << t.name;
      EXPECT_EQ(read.back(), std::byte{0x5a}) << t.name << ": wrote past its bytes";
    }
  torsh::model::GgufTensorInfo outside = opened.tensors().front();
  outside.offset = opened.file_size();
  std::vector<std::byte> sink(outside.nbytes);
  EXPECT_THROW(opened.read_tensor_data(outside, sink.data()), Error);
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

// ---- a file from the gguf Python package's writer ----------------------------

// tests/golden/gguf_py.gguf, written by gguf.GGUFWriter, against
// tests/golden/gguf_py.expected: what gguf.GGUFReader saw in it (the format is
// described in scripts/golden/make-gguf-golden.py, which makes both).
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
    case GgufType::String:
      return v.s.empty() ? "-" : [&] {
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

}  // namespace
