// The user-kernel runtime without a device compiler: the entry parser, the
// disk cache's file format, hashing, and what compile_kernel refuses before
// any compiler runs.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "runtime/kernel_disk_cache.hpp"
#include "runtime/kernel_signature.hpp"
#include "runtime/sha256.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
using detail::parse_c_entry;

TEST(Sha256, KnownAnswers) {
  EXPECT_EQ(detail::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(detail::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(detail::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Fed in pieces of odd sizes, across block boundaries.
  const std::string million(1000000, 'a');
  detail::Sha256 h;
  for (std::size_t i = 0; i < million.size(); i += 997) h.update(std::string_view(million).substr(i, 997));
  EXPECT_EQ(detail::hex(h.digest()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(KernelSignature, ReadsTheEntrysParameters) {
  const char* src = R"(
    // KERNEL void scale(float* decoy) in a comment is not the entry
    DEVICE_FN float twice(float v) { return 2 * v; }
    KERNEL void scale(GLOBAL float* restrict y, GLOBAL const float* x, float a, long n,
                      unsigned int flags, unsigned long long big, GLOBAL uchar* bytes, Params p,
                      float4 v, GLOBAL void* any) {
      const long i = GLOBAL_ID(0);
      if (i < n) y[i] = a * x[i];
    })";
  auto e = parse_c_entry(src, "scale");
  ASSERT_TRUE(e.has_value());
  const auto& p = e->params;
  ASSERT_EQ(p.size(), 10u);
  EXPECT_EQ(p[0].kind, KernelParam::Kind::Buffer);
  EXPECT_TRUE(p[0].writable);
  EXPECT_EQ(p[0].type, ParamType::F32);
  EXPECT_EQ(p[0].name, "y");
  EXPECT_FALSE(p[1].writable);
  EXPECT_EQ(p[2].kind, KernelParam::Kind::Value);
  EXPECT_EQ(p[2].type, ParamType::F32);
  EXPECT_EQ(p[3].type, ParamType::I64);
  EXPECT_EQ(p[3].size, 8u);
  EXPECT_EQ(p[4].type, ParamType::U32);
  EXPECT_EQ(p[4].name, "flags");
  EXPECT_EQ(p[5].type, ParamType::U64);
  EXPECT_EQ(p[6].type, ParamType::U8);
  EXPECT_EQ(p[7].type, ParamType::Struct);
  EXPECT_EQ(p[7].size, 0u);  // unknown: any size is accepted
  EXPECT_EQ(p[8].size, 16u);
  EXPECT_EQ(p[9].type, ParamType::Unknown);
  EXPECT_TRUE(e->local_param.empty());
}

TEST(KernelSignature, DialectsAndOddForms) {
  auto cl = parse_c_entry("__kernel void f(__global int* a, const uint n) {}", "f");
  ASSERT_TRUE(cl);
  EXPECT_EQ(cl->params[0].type, ParamType::I32);
  EXPECT_EQ(cl->params[1].type, ParamType::U32);
  auto cu = parse_c_entry("extern \"C\" __global__ void g(const double* __restrict__ x, size_t n) {}", "g");
  ASSERT_TRUE(cu);
  EXPECT_EQ(cu->params[0].type, ParamType::F64);
  EXPECT_FALSE(cu->params[0].writable);
  EXPECT_EQ(cu->params[1].type, ParamType::U64);
  auto none = parse_c_entry("KERNEL void h(void) {}", "h");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->params.empty());
  auto local = parse_c_entry("__kernel void l(__local float* tmp, __global float* y) {}", "l");
  ASSERT_TRUE(local);
  EXPECT_FALSE(local->local_param.empty());
  // A helper of the same name that is not a kernel, or no definition at all.
  EXPECT_FALSE(parse_c_entry("DEVICE_FN void k(float* x) {}", "k"));
  EXPECT_FALSE(parse_c_entry("KERNEL void kk(float* x) {}", "k"));
}

namespace {
std::filesystem::path temp_dir(const char* name) {
  auto d = std::filesystem::temp_directory_path() / ("torsh_test_kc_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(d);
  return d;
}
}  // namespace

TEST(KernelDiskCache, RoundTripsAndDetectsDamage) {
  const auto dir = temp_dir("roundtrip");
  const std::string key = "torsh kernel cache 1\nentry f\n";
  const std::string path = detail::kernel_cache_file(dir.string(), key);
  detail::CachedKernel k{{1, 2, 3, 250, 0, 7}, "warning: unused"};
  std::string problem;
  ASSERT_TRUE(detail::write_cached_kernel(path, key, k, problem)) << problem;
  auto back = detail::read_cached_kernel(path, key, problem);
  ASSERT_TRUE(back) << problem;
  EXPECT_EQ(back->bytes, k.bytes);
  EXPECT_EQ(back->log, k.log);
  // Another key under the same name (a collision, or a stale file) is not used.
  EXPECT_FALSE(detail::read_cached_kernel(path, key + "x", problem));
  EXPECT_NE(problem.find("stale"), std::string::npos);
  // One flipped payload byte.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-2, std::ios::end);
    f.put('\x55');
  }
  EXPECT_FALSE(detail::read_cached_kernel(path, key, problem));
  EXPECT_NE(problem.find("checksum"), std::string::npos);
  // Truncated.
  std::filesystem::resize_file(path, 20);
  EXPECT_FALSE(detail::read_cached_kernel(path, key, problem));
  EXPECT_FALSE(problem.empty());
  // Not a cache file at all.
  std::ofstream(path, std::ios::trunc) << "garbage";
  EXPECT_FALSE(detail::read_cached_kernel(path, key, problem));
  EXPECT_NE(problem.find("header"), std::string::npos);
  // Absent: no problem, no entry.
  std::filesystem::remove(path);
  EXPECT_FALSE(detail::read_cached_kernel(path, key, problem));
  EXPECT_TRUE(problem.empty());
  // No temporary files are left behind.
  std::size_t files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 0u);
  std::filesystem::remove_all(dir);
}

TEST(CompileKernel, RefusesWhatNoCompilerCouldBuild) {
  Backend cpu = Backend::create(BackendType::Cpu);
  auto code_of = [&](const KernelSource& s) {
    try {
      cpu.compile_kernel(s);
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::Internal;
  };
  EXPECT_EQ(code_of({.source = "", .entry = "f"}), ErrorCode::InvalidArgument);
  EXPECT_EQ(code_of({.source = "KERNEL void f() {}", .entry = ""}), ErrorCode::InvalidArgument);
  EXPECT_EQ(code_of({.source = "KERNEL void f() {}", .entry = "f; rm"}), ErrorCode::InvalidArgument);
  EXPECT_EQ(code_of({.source = "KERNEL void f() {}", .entry = "f", .defines = {{"A B", "1"}}}),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(code_of({.source = "KERNEL void f() {}", .entry = "f", .defines = {{"A", "1\n#include <x>"}}}),
            ErrorCode::InvalidArgument);
  // WGSL is the WebGPU backend's alone.
  try {
    cpu.compile_kernel(
        {.source = "@compute @workgroup_size(1) fn f() {}", .entry = "f", .dialect = KernelDialect::Wgsl});
    FAIL() << "the CPU backend took a WGSL kernel";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Unsupported);
    EXPECT_NE(e.message().find("wgsl"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("cpu:0"), std::string::npos) << e.message();
  }
}

TEST(CompileKernel, DialectNames) {
  for (KernelDialect d : kAllKernelDialects) EXPECT_EQ(kernel_dialect_from_name(kernel_dialect_name(d)), d);
  EXPECT_EQ(kernel_dialect_from_name("HIP"), KernelDialect::Cuda);
  EXPECT_THROW(kernel_dialect_from_name("glsl"), Error);
}
