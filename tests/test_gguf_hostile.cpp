// The GGUF reader on hostile files: each structural fault is refused with an
// InvalidArgument naming the file, the byte and the fault; a valid file cut at
// any byte is refused; and random mutations of valid files (a seeded fuzzer,
// TORSH_GGUF_FUZZ_ITERS / TORSH_GGUF_FUZZ_SEED, scripts/fuzz/gguf.sh for long
// runs under the sanitizers) raise nothing but torsh::Error.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <random>

#include "gguf_samples.hpp"
#include "torsh/core/error.hpp"
#include "torsh/model/gguf.hpp"

namespace {

using torsh::Error;
using torsh::ErrorCode;
using torsh::model::GgufFile;
using torsh::model::GgufType;
using torsh::model::GgufValue;
using namespace torsh::test;

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
  static constexpr std::uint64_t kInteresting[] = {0,
                                                   1,
                                                   2,
                                                   3,
                                                   4,
                                                   31,
                                                   32,
                                                   33,
                                                   64,
                                                   0x7f,
                                                   0x80,
                                                   0xff,
                                                   0xffff,
                                                   0x7fffffff,
                                                   0x80000000,
                                                   0xffffffff,
                                                   std::uint64_t{1} << 32,
                                                   std::uint64_t{1} << 60,
                                                   std::uint64_t{1} << 63,
                                                   ~std::uint64_t{0}};
  const auto pick = [&](std::size_t n) { return n ? static_cast<std::size_t>(rng() % n) : 0; };
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = pick(b.size());
    switch (rng() % 8) {
      case 0:
        if (!b.empty()) b[at] ^= static_cast<std::byte>(1u << (rng() % 8));
        break;
      case 1:
        if (!b.empty()) b[at] = static_cast<std::byte>(rng() & 0xff);
        break;
      case 2:
      case 3: {
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

// Iterations and seed from TORSH_GGUF_FUZZ_ITERS and TORSH_GGUF_FUZZ_SEED
// (scripts/fuzz/gguf.sh runs it at length under the sanitizers).
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

// A FIFO at the model path: refused as "not a regular file" at once, instead
// of an open() that waits for a writer forever. Should the open block, the
// test opens the FIFO's other end itself so the test process still ends.
TEST(GgufHostile, AFifoIsRefusedWithoutBlocking) {
  const std::string dir = ::testing::TempDir() + "torsh_fifo_" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST, true);
  const std::string fifo = dir + "/model.gguf";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  auto opened = std::async(std::launch::async, [&] { GgufFile::open(fifo); });
  if (opened.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    const int unblock = ::open(fifo.c_str(), O_RDWR);
    ADD_FAILURE() << "opening a FIFO as a model blocked";
    opened.wait();
    ::close(unblock);
  }
  try {
    opened.get();
    ADD_FAILURE() << "a FIFO was accepted as a model file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("not a regular file"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find(fifo), std::string::npos) << e.message();
    EXPECT_EQ(std::string(e.what()).find("ops.hpp"), std::string::npos) << e.what();
  }
  ::unlink(fifo.c_str());
  ::rmdir(dir.c_str());
}
