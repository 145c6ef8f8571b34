// User kernels on the OpenCL backend (PoCL's CPU device in CI): the Torsh
// dialect and OpenCL C built, loaded from their binary and launched, with
// defines and options, build errors carrying the log at the user's line, the
// bytes load_kernel refuses, geometry limits, and tensors bound at an offset.
// Every test skips, with the registry's reason, where no OpenCL device exists.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <thread>

#include "device_test_util.hpp"
#include "runtime/kernel_disk_cache.hpp"
#include "torsh/backend/backend_impl.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
using torsh::test::error_of;
using torsh::test::has;

namespace {

rt::UserKernelSpec spec_of(std::string source, std::string entry, KernelDialect dialect = KernelDialect::Torsh) {
  rt::UserKernelSpec spec;
  spec.src.source = std::move(source);
  spec.src.entry = std::move(entry);
  spec.src.dialect = dialect;
  spec.label = "kernel '" + spec.src.entry + "'";
  return spec;
}

// build_kernel's container (user_kernel_build.cpp): "TORSHCL1", kind 'B', payload size,
// FNV-1a of the payload, FNV-1a of the compiler id, payload.
std::uint64_t fnv1a(const void* data, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<const std::uint8_t*>(data)[i]) * 1099511628211ull;
  return h;
}

// Kind 'S' holds the translation unit's text, for drivers that give no binary.
std::vector<std::uint8_t> packed(const std::vector<std::uint8_t>& payload, const std::string& compiler_id,
                                 char kind = 'B') {
  std::vector<std::uint8_t> out(33 + payload.size());
  const std::uint64_t size = payload.size(), sum = fnv1a(payload.data(), payload.size()),
                      id = fnv1a(compiler_id.data(), compiler_id.size());
  std::memcpy(out.data(), "TORSHCL1", 8);
  out[8] = static_cast<std::uint8_t>(kind);
  std::memcpy(out.data() + 9, &size, 8);
  std::memcpy(out.data() + 17, &sum, 8);
  std::memcpy(out.data() + 25, &id, 8);
  if (!payload.empty()) std::memcpy(out.data() + 33, payload.data(), payload.size());
  return out;
}

rt::LaunchArg value_arg(const auto& v) { return rt::LaunchArg{nullptr, true, &v, sizeof v}; }

const char* kScale = R"(
KERNEL void scale(GLOBAL float* y, GLOBAL const float* x, float a, long n) {
  const long i = GLOBAL_ID(0);
  if (i < n) y[i] = a * x[i];
}
)";

// Each group sums its block of x into out[group] through work-group memory.
const char* kBlockSum = R"(
KERNEL void block_sum(GLOBAL float* out, GLOBAL const float* x, long n) {
  LOCAL_ARRAY(float, part, 64);
  const long i = GLOBAL_ID(0), lid = LOCAL_ID(0);
  part[lid] = i < n ? x[i] : 0.0f;
  BARRIER();
  for (long step = LOCAL_SIZE(0) / 2; step > 0; step /= 2) {
    if (lid < step) part[lid] += part[lid + step];
    BARRIER();
  }
  if (lid == 0) out[GROUP_ID(0)] = part[0];
}
)";

// A kernel cache of the tests' own, so that disk hits are this run's builds.
class CacheDir : public ::testing::Environment {
 public:
  CacheDir() {
    dir_ = std::filesystem::temp_directory_path() / ("torsh-ukcl-test-" + std::to_string(::getpid()));
    ::setenv("TORSH_KERNEL_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

 private:
  std::filesystem::path dir_;
};
::testing::Environment* const cache_dir = ::testing::AddGlobalTestEnvironment(new CacheDir);

KernelSource source(std::string text, std::string entry, KernelDialect dialect = KernelDialect::Torsh) {
  KernelSource s;
  s.source = std::move(text);
  s.entry = std::move(entry);
  s.dialect = dialect;
  return s;
}

class UserKernelOpenCl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::backend_available(BackendType::OpenCl))
      GTEST_SKIP() << "OpenCL backend unavailable: " << test::unavailable_reason(BackendType::OpenCl);
    dev = Backend::create(BackendType::OpenCl);
  }

  rt::DeviceImpl& impl() { return dev.impl(); }
  Stream stream() { return dev.default_stream(); }

  Tensor floats(const std::vector<float>& v) {
    return dev.from_host(v.data(), Shape{static_cast<std::int64_t>(v.size())}, DType::F32);
  }

  // y = a * x through `scale`, on the default stream.
  void run_scale(const Kernel& k, const Tensor& y, const Tensor& x, float a) {
    const std::int64_t n = y.numel();
    stream().launch(k, Dim3(static_cast<std::uint32_t>((n + 63) / 64)), Dim3(64), y, x, a, n);
    stream().synchronize();
  }

  Backend dev;
};

std::vector<float> iota_vec(std::size_t n, float start = 0) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

TEST_F(UserKernelOpenCl, DialectsAndCompilerId) {
  const auto dialects = impl().kernel_dialects();
  EXPECT_NE(std::find(dialects.begin(), dialects.end(), KernelDialect::Torsh), dialects.end());
  EXPECT_NE(std::find(dialects.begin(), dialects.end(), KernelDialect::OpenCL), dialects.end());
  EXPECT_TRUE(dev.capabilities().accepts(KernelDialect::OpenCL));
  const std::string id = impl().kernel_compiler_id();
  EXPECT_NE(id.find("OpenCL C"), std::string::npos) << id;
  EXPECT_NE(id.find(dev.info().name), std::string::npos) << id;
  EXPECT_NE(id.find("driver"), std::string::npos) << id;
}

TEST_F(UserKernelOpenCl, TorshElementwiseWithParamsFromTheDriver) {
  const Kernel k = dev.compile_kernel(source(kScale, "scale"));
  ASSERT_TRUE(k.params_known());
  const auto& p = k.params();
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].kind, KernelParam::Kind::Buffer);
  EXPECT_EQ(p[0].type, ParamType::F32);
  EXPECT_TRUE(p[0].writable);
  EXPECT_EQ(p[1].kind, KernelParam::Kind::Buffer);
  EXPECT_FALSE(p[1].writable);
  EXPECT_EQ(p[1].name, "x");
  EXPECT_EQ(p[2].kind, KernelParam::Kind::Value);
  EXPECT_EQ(p[2].type, ParamType::F32);
  EXPECT_EQ(p[3].type, ParamType::I64);
  EXPECT_EQ(p[3].size, 8u);

  const auto xs = iota_vec(1000);
  Tensor x = floats(xs), y = dev.zeros(Shape{1000}, DType::F32);
  run_scale(k, y, x, 2.5f);
  const auto out = y.to_host<float>();
  for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], 2.5f * xs[i]) << i;
}

TEST_F(UserKernelOpenCl, TorshBlockSumWithLocalArrayAndBarrier) {
  const Kernel k = dev.compile_kernel(source(kBlockSum, "block_sum"));
  const std::int64_t n = 1000, groups = (n + 63) / 64;
  const auto xs = iota_vec(n, 1);
  Tensor x = floats(xs), out = dev.zeros(Shape{groups}, DType::F32);
  stream().launch(k, Dim3(static_cast<std::uint32_t>(groups)), Dim3(64), out, x, n);
  const auto sums = out.to_host<float>();
  for (std::int64_t g = 0; g < groups; ++g) {
    double want = 0;
    for (std::int64_t i = g * 64; i < std::min(n, g * 64 + 64); ++i) want += xs[static_cast<std::size_t>(i)];
    EXPECT_EQ(sums[static_cast<std::size_t>(g)], static_cast<float>(want)) << "group " << g;
  }
}

TEST_F(UserKernelOpenCl, OpenClCWithVectorValueParam) {
  const Kernel k = dev.compile_kernel(source(R"(
__kernel void axpy4(__global float4* y, __global const float4* x, float4 a, int n) {
  const int i = get_global_id(0);
  if (i < n) y[i] += a * x[i];
}
)",
                                             "axpy4", KernelDialect::OpenCL));
  ASSERT_TRUE(k.params_known());
  EXPECT_EQ(k.params()[2].size, 16u);
  const int n4 = 10;
  const auto xs = iota_vec(4 * n4);
  Tensor x = floats(xs), y = floats(std::vector<float>(4 * n4, 1.0f));
  const float a[4] = {1, 2, 3, 4};
  stream().launch(k, Dim3(1), Dim3(16), y, x, KernelArg::bytes(a, sizeof a), n4);
  const auto out = y.to_host<float>();
  for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], 1.0f + a[i % 4] * xs[i]) << i;
}

TEST_F(UserKernelOpenCl, ConstantAddressSpaceIsAReadOnlyBuffer) {
  const Kernel k = dev.compile_kernel(
      source("__kernel void lookup(__global float* y, __constant float* table, __global const int* idx) {\n"
             "  const int i = get_global_id(0);\n  y[i] = table[idx[i]];\n}\n",
             "lookup", KernelDialect::OpenCL));
  ASSERT_TRUE(k.params_known());
  EXPECT_EQ(k.params()[1].kind, KernelParam::Kind::Buffer);
  EXPECT_FALSE(k.params()[1].writable);
  EXPECT_EQ(k.params()[2].type, ParamType::I32);
  Tensor table = floats({10, 20, 30, 40});
  const std::vector<std::int32_t> ids = {3, 0, 2, 1, 1, 3, 0, 2};
  Tensor idx = dev.from_host(ids.data(), Shape{8}, DType::I32), y = dev.zeros(Shape{8}, DType::F32);
  stream().launch(k, Dim3(1), Dim3(8), y, table, idx);
  const auto out = y.to_host<float>();
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(out[i], 10.0f * static_cast<float>(ids[i] + 1)) << i;
}

// A struct by value: the driver names its type only, the bytes' size is the caller's to get right.
TEST_F(UserKernelOpenCl, StructValueParam) {
  const Kernel k = dev.compile_kernel(source(R"(
typedef struct { float scale; int offset; } Affine;
__kernel void affine(__global float* y, Affine p) {
  const int i = get_global_id(0);
  y[i] = p.scale * (float)(i + p.offset);
}
)",
                                             "affine", KernelDialect::OpenCL));
  ASSERT_TRUE(k.params_known());
  EXPECT_EQ(k.params()[1].kind, KernelParam::Kind::Value);
  struct Affine {
    float scale;
    std::int32_t offset;
  } p{0.5f, 10};
  Tensor y = dev.zeros(Shape{32}, DType::F32);
  stream().launch(k, Dim3(1), Dim3(32), y, KernelArg::pod(p));
  const auto out = y.to_host<float>();
  for (int i = 0; i < 32; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], 0.5f * static_cast<float>(i + 10)) << i;
}

TEST_F(UserKernelOpenCl, DefinesAndOptionsReachTheCompiler) {
  KernelSource src = source(R"(
#ifndef __FAST_RELAXED_MATH__
#error "the options were not passed"
#endif
#ifndef FLAG
#error "a define without a value was not passed"
#endif
KERNEL void fill(GLOBAL float* y) { y[GLOBAL_ID(0)] = SCALE * OFFSET; }
)",
                            "fill");
  src.defines = {{"SCALE", "3.0f"}, {"OFFSET", "(1.0f + 1.0f)"}, {"FLAG", ""}};
  src.options = {"-cl-fast-relaxed-math"};
  const Kernel k = dev.compile_kernel(src);
  Tensor y = dev.zeros(Shape{8}, DType::F32);
  stream().launch(k, Dim3(1), Dim3(8), y);
  for (float v : y.to_host<float>()) EXPECT_EQ(v, 6.0f);

  src.options.clear();  // now the #error fires: the options made the difference
  const Error e = error_of([&] { dev.compile_kernel(src); });
  EXPECT_EQ(e.code(), ErrorCode::KernelCompile);
  EXPECT_NE(e.message().find("the options were not passed"), std::string::npos) << e.message();
}

TEST_F(UserKernelOpenCl, CompileErrorCarriesTheLogAtTheUsersLine) {
  for (KernelDialect d : {KernelDialect::Torsh, KernelDialect::OpenCL}) {
    KernelSource src = source(
        "KERNEL void broken(GLOBAL float* y) {\n"
        "  const long i = GLOBAL_ID(0);\n"
        "  y[i] = undeclared_thing;\n"
        "}\n",
        "broken", d);
    if (d == KernelDialect::OpenCL)
      src.source =
          "__kernel void broken(__global float* y) {\n  const long i = get_global_id(0);\n"
          "  y[i] = undeclared_thing;\n}\n";
    src.name = "my_broken_kernel";
    const Error e = error_of([&] { dev.compile_kernel(src); });
    EXPECT_EQ(e.code(), ErrorCode::KernelCompile);
    const std::string& m = e.message();
    EXPECT_NE(m.find("--- build log ---"), std::string::npos) << m;
    EXPECT_NE(m.find("undeclared_thing"), std::string::npos) << m;
    // The log names the user's own file name and line 3, not a line of the dialect header.
    EXPECT_NE(m.find("my_broken_kernel:3:"), std::string::npos) << m;
    EXPECT_NE(m.find("entry 'broken'"), std::string::npos) << m;
    EXPECT_NE(m.find(dev.info().name), std::string::npos) << m;
    EXPECT_EQ(e.context().device.rfind("opencl:", 0), 0u) << e.context().device;
  }
}

TEST_F(UserKernelOpenCl, WrongEntryListsTheProgramsKernels) {
  const KernelSource src =
      source(std::string(kScale) + "KERNEL void other(GLOBAL float* y) { y[0] = 1.0f; }\n", "scael");
  const Error e = error_of([&] { dev.compile_kernel(src); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(e.message().find("'scael'"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("scale"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("other"), std::string::npos) << e.message();
}

TEST_F(UserKernelOpenCl, LocalMemoryParametersAreRefused) {
  // Spelled through a macro, so that only the driver's argument information shows it.
  const KernelSource src =
      source("#define SCRATCH __local float*\n__kernel void f(__global float* y, SCRATCH tmp) { y[0] = tmp[0]; }\n",
             "f", KernelDialect::OpenCL);
  const Error e = error_of([&] { dev.compile_kernel(src); });
  EXPECT_EQ(e.code(), ErrorCode::Unsupported);
  EXPECT_NE(e.message().find("'tmp'"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("local-memory parameters are not supported"), std::string::npos) << e.message();
  ASSERT_FALSE(e.suggestions().empty());
  EXPECT_NE(e.suggestions().front().find("LOCAL_ARRAY"), std::string::npos);
  // load_kernel refuses it as well (bytes built elsewhere).
  rt::UserKernelSpec spec;
  spec.src = src;
  EXPECT_EQ(error_of([&] { impl().build_kernel(spec); }).code(), ErrorCode::Unsupported);
}

TEST_F(UserKernelOpenCl, OtherDialectsAreRefused) {
  rt::UserKernelSpec spec;
  spec.src = source("@compute @workgroup_size(1) fn main() {}", "main", KernelDialect::Wgsl);
  EXPECT_EQ(error_of([&] { impl().build_kernel(spec); }).code(), ErrorCode::Unsupported);
  EXPECT_EQ(error_of([&] { dev.compile_kernel(spec.src); }).code(), ErrorCode::Unsupported);
}

// Build, then load from the bytes: through the backend interface (a copy of
// the bytes, loaded twice) and through the runtime's disk cache.
TEST_F(UserKernelOpenCl, BinaryRoundTrip) {
  const auto spec = spec_of(kScale, "scale");
  const rt::KernelBinary bin = impl().build_kernel(spec);
  ASSERT_TRUE(bin.cacheable) << "PoCL gives program binaries";
  ASSERT_GT(bin.bytes.size(), 64u);
  const std::vector<std::uint8_t> stored(bin.bytes.begin(), bin.bytes.end());
  auto k1 = impl().load_kernel(spec, stored);
  auto k2 = impl().load_kernel(spec, stored);
  EXPECT_TRUE(k1->params_known());
  EXPECT_EQ(k1->params().size(), 4u);
  const auto xs = iota_vec(300);
  Tensor x = floats(xs), y1 = dev.zeros(Shape{300}, DType::F32), y2 = dev.zeros(Shape{300}, DType::F32);
  const rt::TensorArg y1a = y1.arg(), y2a = y2.arg(), xa = x.arg();
  const float a1 = 3.0f, a2 = -1.0f;
  const std::int64_t n = 300;
  const rt::LaunchArg args1[] = {{&y1a, true}, {&xa, false}, value_arg(a1), value_arg(n)};
  const rt::LaunchArg args2[] = {{&y2a, true}, {&xa, false}, value_arg(a2), value_arg(n)};
  k1->launch(stream().impl(), Dim3(5), Dim3(64), args1);
  stream().synchronize();
  k1.reset();
  k2->launch(stream().impl(), Dim3(5), Dim3(64), args2);
  const auto o1 = y1.to_host<float>(), o2 = y2.to_host<float>();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ(o1[i], 3.0f * xs[i]);
    ASSERT_EQ(o2[i], -xs[i]);
  }

  // The form build_kernel gives where a driver has no binary: the source, built again by load_kernel.
  const std::string tu = rt::kernel_translation_unit(spec);
  auto from_source = impl().load_kernel(spec, packed({tu.begin(), tu.end()}, impl().kernel_compiler_id(), 'S'));
  EXPECT_TRUE(from_source->params_known());
  Tensor y0 = dev.zeros(Shape{300}, DType::F32);
  const rt::TensorArg y0a = y0.arg();
  const rt::LaunchArg args0[] = {{&y0a, true}, {&xa, false}, value_arg(a1), value_arg(n)};
  from_source->launch(stream().impl(), Dim3(5), Dim3(64), args0);
  EXPECT_EQ(y0.to_host<float>()[299], 3.0f * 299);

  KernelSource src = source(kScale, "scale");
  src.name = "scale_round_trip";
  const Kernel built = dev.compile_kernel(src);
  ASSERT_FALSE(built.cache_path().empty()) << "the test's kernel cache is on";
  clear_kernel_memory_cache();
  const Kernel loaded = dev.compile_kernel(src);
  EXPECT_EQ(loaded.origin(), KernelOrigin::DiskCache);
  EXPECT_TRUE(loaded.params_known());
  Tensor y3 = dev.zeros(Shape{300}, DType::F32);
  run_scale(loaded, y3, x, 0.5f);
  const auto o3 = y3.to_host<float>();
  for (std::size_t i = 0; i < xs.size(); ++i) ASSERT_EQ(o3[i], 0.5f * xs[i]);
}

TEST_F(UserKernelOpenCl, GarbageBytesThrowInsteadOfCrashing) {
  const auto spec = spec_of(kScale, "scale");
  const rt::KernelBinary bin = impl().build_kernel(spec);
  std::mt19937 rng(7);
  std::vector<std::vector<std::uint8_t>> bad;
  bad.emplace_back();                            // empty
  for (std::size_t n : {1u, 16u, 33u, 4096u}) {  // random
    std::vector<std::uint8_t> v(n);
    for (auto& b : v) b = static_cast<std::uint8_t>(rng());
    bad.push_back(v);
  }
  for (std::size_t keep : {bin.bytes.size() / 2, bin.bytes.size() - 1, std::size_t{30}})  // truncated
    bad.emplace_back(bin.bytes.begin(), bin.bytes.begin() + static_cast<std::ptrdiff_t>(keep));
  auto flipped = bin.bytes;  // one payload byte corrupted
  flipped[flipped.size() / 2] ^= 0x5a;
  bad.push_back(flipped);
  auto padded = bin.bytes;
  padded.push_back(0);
  bad.push_back(padded);
  for (std::size_t i = 0; i < bad.size(); ++i) {
    const Error e = error_of([&] { impl().load_kernel(spec, bad[i]); });
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << "case " << i << ": " << e.what();
  }
  // The real binary, whole, but labelled as another compiler's (a cache shared between machines).
  const std::vector<std::uint8_t> real(bin.bytes.begin() + 33, bin.bytes.end());
  EXPECT_NO_THROW(impl().load_kernel(spec, packed(real, impl().kernel_compiler_id())));
  Error e = error_of([&] { impl().load_kernel(spec, packed(real, "PoCL 0.1 / some other device")); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(e.message().find("another OpenCL compiler"), std::string::npos) << e.message();
  // A well-formed container around random bytes: the driver itself refuses them.
  std::vector<std::uint8_t> payload(2048);
  for (auto& b : payload) b = static_cast<std::uint8_t>(rng());
  e = error_of([&] { impl().load_kernel(spec, packed(payload, impl().kernel_compiler_id())); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
  // The real bytes still load after all that.
  EXPECT_NO_THROW(impl().load_kernel(spec, bin.bytes));
}

// The runtime's path for an unusable disk entry: load_kernel throws, the
// runtime warns and builds again.
TEST_F(UserKernelOpenCl, UnusableDiskEntryIsRebuilt) {
  KernelSource src = source(kScale, "scale");
  src.name = "scale_disk_garbage";
  const Kernel first = dev.compile_kernel(src);
  ASSERT_FALSE(first.cache_path().empty());
  // Keep the runtime's own file format and key, with bytes load_kernel must refuse inside.
  const std::string path = first.cache_path();
  std::ifstream in(path, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t key_end = file.find("source ");
  ASSERT_NE(key_end, std::string::npos);
  const std::string key =
      file.substr(file.find("torsh kernel cache"), file.find('\n', key_end) + 1 - file.find("torsh kernel cache"));
  std::string problem;
  ASSERT_TRUE(detail::write_cached_kernel(path, key, {std::vector<std::uint8_t>(500, 0xab), ""}, problem)) << problem;
  ASSERT_TRUE(detail::read_cached_kernel(path, key, problem).has_value()) << "the key was not recovered: " << problem;
  clear_kernel_memory_cache();
  const auto before = dev.kernel_stats().disk_rebuilds;
  const Kernel again = dev.compile_kernel(src);
  EXPECT_EQ(again.origin(), KernelOrigin::Compiled);
  EXPECT_EQ(dev.kernel_stats().disk_rebuilds, before + 1);
  Tensor x = floats(iota_vec(64)), y = dev.zeros(Shape{64}, DType::F32);
  run_scale(again, y, x, 2.0f);
  EXPECT_EQ(y.to_host<float>()[10], 20.0f);
}

// A local array larger than the device's local memory is refused when the
// kernel is made, naming both sizes (PoCL aborted the process when such a
// group started).
TEST_F(UserKernelOpenCl, LocalMemoryBeyondTheDeviceIsRefusedWithTheLimit) {
  const char* big = R"(
KERNEL void big(GLOBAL float* y) {
  LOCAL_ARRAY(float, buf, 1048576);
  long i = LOCAL_ID(0);
  buf[i] = 1;
  BARRIER();
  y[i] = buf[i];
})";
  const Error e = error_of([&] { dev.compile_kernel(source(big, "big")); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(e.message().find("CL_DEVICE_LOCAL_MEM_SIZE"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("4194304"), std::string::npos) << e.message();
  EXPECT_EQ(e.context().op, "big");
  ASSERT_FALSE(e.suggestions().empty());
}

TEST_F(UserKernelOpenCl, GeometryBeyondTheDeviceIsRefusedWithTheLimit) {
  const Kernel k = dev.compile_kernel(source(kScale, "scale"));
  Tensor x = floats(iota_vec(64)), y = dev.zeros(Shape{64}, DType::F32);
  const std::int64_t n = 64;
  const std::uint64_t max_group = dev.capabilities().max_work_group;
  Stream s = stream();

  Error e = error_of([&] { s.launch(k, Dim3(1), Dim3(static_cast<std::uint32_t>(max_group + 1)), y, x, 1.0f, n); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(e.message().find(std::to_string(max_group)), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("CL_DEVICE_MAX_WORK_GROUP_SIZE"), std::string::npos) << e.message();
  EXPECT_EQ(e.context().op, "scale");
  ASSERT_FALSE(e.suggestions().empty());

  e = error_of([&] { s.launch(k, Dim3(1), Dim3(1, 1, 1u << 20), y, x, 1.0f, n); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(e.message().find("work-group"), std::string::npos) << e.message();

  e = error_of([&] { s.launch(k, Dim3(0xffffffffu, 0xffffffffu, 0xffffffffu), Dim3(1), y, x, 1.0f, n); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(e.message().find("overflows"), std::string::npos) << e.message();

  // Below the runtime's checks: the backend counts the arguments itself.
  const rt::TensorArg ya = y.arg(), xa = x.arg();
  const rt::LaunchArg too_few[] = {{&ya, true}, {&xa, false}};
  auto impl_k = impl().load_kernel(spec_of(kScale, "scale"), impl().build_kernel(spec_of(kScale, "scale")).bytes);
  e = error_of([&] { impl_k->launch(s.impl(), Dim3(1), Dim3(64), too_few); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(e.message().find("takes 4"), std::string::npos) << e.message();

  // After the refusals the kernel still runs.
  s.launch(k, Dim3(1), Dim3(64), y, x, 1.0f, n);
  EXPECT_EQ(y.to_host<float>()[63], 63.0f);

  // A kernel that fixes its work-group size takes exactly that block.
  const Kernel fixed = dev.compile_kernel(
      source("__kernel __attribute__((reqd_work_group_size(32, 1, 1))) void fixed(__global float* y) {\n"
             "  y[get_global_id(0)] = 7.0f;\n}\n",
             "fixed", KernelDialect::OpenCL));
  e = error_of([&] { s.launch(fixed, Dim3(1), Dim3(64), y); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(e.message().find("reqd_work_group_size(32, 1, 1)"), std::string::npos) << e.message();
  s.launch(fixed, Dim3(2), Dim3(32), y);
  EXPECT_EQ(y.to_host<float>()[63], 7.0f);
}

const char* kAddOne = R"(
KERNEL void add_one(GLOBAL float* y, GLOBAL const float* x, long n) {
  const long i = GLOBAL_ID(0);
  if (i < n) y[i] = y[i] + x[i] + 1.0f;
}
)";

// A slice starts at an element offset: unaligned ones go through a staged
// copy, aligned ones through a sub-buffer. Both must read and write exactly
// the slice.
TEST_F(UserKernelOpenCl, SlicesAreBoundAtTheirFirstElement) {
  const Kernel k = dev.compile_kernel(source(kAddOne, "add_one"));
  for (std::int64_t start : {1, 3, 32, 64}) {  // 4 and 12 bytes: staged; 128 and 256 bytes: sub-buffers
    const std::int64_t total = 512, len = 200;
    const auto ys = iota_vec(total), xs = iota_vec(total, 1000);
    Tensor ybase = floats(ys), xbase = floats(xs);
    Tensor y = ybase.slice(0, start, start + len), x = xbase.slice(0, start + 5, start + 5 + len);
    ASSERT_EQ(y.offset(), start);
    stream().launch(k, Dim3(4), Dim3(64), y, x, len);
    const auto out = ybase.to_host<float>();
    for (std::int64_t i = 0; i < total; ++i) {
      const auto u = static_cast<std::size_t>(i);
      const float want = i >= start && i < start + len ? ys[u] + xs[u + 5] + 1.0f : ys[u];
      ASSERT_EQ(out[u], want) << "start " << start << ", element " << i;
    }
    EXPECT_EQ(xbase.to_host<float>(), xs) << "the read-only input was written";
  }
}

// Views of one storage: the same range twice shares one binding; written
// ranges that interleave are bound as they are where they start aligned, and
// refused where one would need a staged copy (its copy back would undo the
// other's writes).
TEST_F(UserKernelOpenCl, OverlappingTensorArguments) {
  const Kernel pair = dev.compile_kernel(source(R"(
KERNEL void pair(GLOBAL float* a, GLOBAL float* b, long n, long stride) {
  const long i = GLOBAL_ID(0);
  if (i < n) {
    if (i % 2 == 0) a[i * stride] = 1.0f;
    else b[i * stride] = 2.0f;
  }
}
)",
                                                "pair"));
  const std::int64_t n = 100;
  {  // one unaligned range passed twice: both arguments' writes land
    Tensor t = dev.zeros(Shape{n + 1}, DType::F32);
    Tensor v = t.slice(0, 1, n + 1);
    stream().launch(pair, Dim3(2), Dim3(64), v, v, n, std::int64_t{1});
    const auto out = t.to_host<float>();
    EXPECT_EQ(out[0], 0.0f);
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i + 1)], i % 2 ? 2.0f : 1.0f) << i;
  }
  const Kernel halves = dev.compile_kernel(source(R"(
KERNEL void halves(GLOBAL float* a, GLOBAL float* b, long n, long stride) {
  const long i = GLOBAL_ID(0);
  if (i < n) {
    a[i * stride] = 1.0f;
    b[i * stride] = 2.0f;
  }
}
)",
                                                  "halves"));
  {  // interleaved strided views starting at aligned offsets: bound in place
    const std::int64_t stride = 64;
    Tensor t = dev.zeros(Shape{n * stride}, DType::F32);
    Tensor a = t.slice(0, 0, n * stride, stride), b = t.slice(0, 32, n * stride, stride);
    stream().launch(halves, Dim3(2), Dim3(64), a, b, n, stride);
    const auto out = t.to_host<float>();
    for (std::int64_t i = 0; i < n * stride; ++i)
      ASSERT_EQ(out[static_cast<std::size_t>(i)], i % stride == 0 ? 1.0f : i % stride == 32 ? 2.0f : 0.0f) << i;
  }
  {  // the same with one view at an odd element: refused, and nothing written
    Tensor t = dev.zeros(Shape{2 * n}, DType::F32);
    Tensor even = t.slice(0, 0, 2 * n, 2), odd = t.slice(0, 1, 2 * n, 2);
    const Error e = error_of([&] { stream().launch(halves, Dim3(2), Dim3(64), even, odd, n, std::int64_t{2}); });
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("overlap"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("CL_DEVICE_MEM_BASE_ADDR_ALIGN"), std::string::npos) << e.message();
    for (float v : t.to_host<float>()) ASSERT_EQ(v, 0.0f);
  }
}

// A captured launch replays, in the native command buffer and as a kernel
// list, with the staged copies of an unaligned slice recorded around it.
TEST_F(UserKernelOpenCl, GraphCaptureReplaysTheLaunch) {
  const Kernel k = dev.compile_kernel(source(kAddOne, "add_one"));
  for (auto mode : {GraphCapture::Replay::Native, GraphCapture::Replay::KernelList}) {
    for (std::int64_t start : {0, 1}) {
      const std::int64_t len = 100;
      const auto xs = iota_vec(len + 1, 1);
      Tensor ybase = dev.zeros(Shape{len + 1}, DType::F32), x = floats(xs);
      Tensor y = ybase.slice(0, start, start + len), xv = x.slice(0, 0, len);
      GraphCapture cap(dev, mode);
      stream().launch(k, Dim3(2), Dim3(64), y, xv, len);
      Graph g = cap.end();
      EXPECT_EQ(g.op_names(), std::vector<std::string>{"add_one"});
      if (mode == GraphCapture::Replay::Native) {
        EXPECT_EQ(g.replay_mode(), "cl_khr_command_buffer") << g.native_unavailable_reason();
      }
      g.replay();
      g.replay();
      const auto out = ybase.to_host<float>();
      for (std::int64_t i = 0; i < len; ++i)  // the capture ran once, the replays twice more
        ASSERT_EQ(out[static_cast<std::size_t>(start + i)], 3 * (xs[static_cast<std::size_t>(i)] + 1.0f))
            << g.replay_mode() << " start " << start << " element " << i;
      EXPECT_EQ(out[static_cast<std::size_t>(start == 0 ? len : 0)], 0.0f) << "written outside the slice";
    }
  }
}

TEST_F(UserKernelOpenCl, ProfilerSeesTheLaunch) {
  const Kernel k = dev.compile_kernel(source(kScale, "scale"));
  Tensor x = floats(iota_vec(64)), y = dev.zeros(Shape{64}, DType::F32);
  profiler::start();
  stream().launch(k, Dim3(1), Dim3(64), y, x, 1.0f, std::int64_t{64});
  stream().synchronize();
  profiler::stop();
  const auto records = profiler::records();
  const auto it = std::find_if(records.begin(), records.end(), [](const auto& r) { return r.name == "scale"; });
  ASSERT_NE(it, records.end());
  EXPECT_GE(it->device_dur_us, 0) << "timed by the device's events";
}

TEST_F(UserKernelOpenCl, ConcurrentLaunchesOfOneKernel) {
  const Kernel k = dev.compile_kernel(source(kScale, "scale"));
  const auto xs = iota_vec(4096);
  Tensor x = floats(xs);
  std::vector<Tensor> ys;
  for (int t = 0; t < 4; ++t) ys.push_back(dev.zeros(Shape{4096}, DType::F32));
  // zeros() fills on the default stream; side streams are not ordered after it
  // unless they wait for it (without this the fill can land after a launch).
  Event filled = dev.create_event();
  stream().record(filled);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Stream s = dev.create_stream();
      s.wait(filled);
      for (int r = 0; r < 50; ++r)
        s.launch(k, Dim3(64), Dim3(64), ys[static_cast<std::size_t>(t)], x, float(t + 1), std::int64_t{4096});
      s.synchronize();
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    const auto out = ys[static_cast<std::size_t>(t)].to_host<float>();
    for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], float(t + 1) * xs[i]) << t << " " << i;
  }
}

// Figures for the report, not a check: run with --gtest_also_run_disabled_tests.
TEST_F(UserKernelOpenCl, DISABLED_Timings) {
  using clock = std::chrono::steady_clock;
  const auto ms = [](clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::vector<double> build, load;
  for (int r = 0; r < 7; ++r) {
    // A source no one built before, so PoCL's own kernel cache cannot answer.
    auto spec = spec_of(std::string(kScale) + "// round " + std::to_string(r) + " " +
                            std::to_string(clock::now().time_since_epoch().count()) + "\n",
                        "scale");
    auto t0 = clock::now();
    const rt::KernelBinary bin = impl().build_kernel(spec);
    auto t1 = clock::now();
    auto k = impl().load_kernel(spec, bin.bytes);
    auto t2 = clock::now();
    build.push_back(ms(t1 - t0));
    load.push_back(ms(t2 - t1));
  }
  std::printf("first build (build_kernel) median %.2f ms; load from binary (load_kernel) median %.2f ms (7 kernels)\n",
              median(build), median(load));

  // The same through Backend::compile_kernel: compiled, then from the disk cache, then from memory.
  std::vector<double> cold, disk, memory;
  for (int r = 0; r < 7; ++r) {
    KernelSource src = source(std::string(kScale) + "// public round " + std::to_string(r) + " " +
                                  std::to_string(clock::now().time_since_epoch().count()) + "\n",
                              "scale");
    cold.push_back(dev.compile_kernel(src).build_ms());
    clear_kernel_memory_cache();
    const Kernel from_disk = dev.compile_kernel(src);
    EXPECT_EQ(from_disk.origin(), KernelOrigin::DiskCache);
    disk.push_back(from_disk.build_ms());
    memory.push_back(dev.compile_kernel(src).build_ms());
  }
  std::printf("compile_kernel: compiled median %.2f ms, disk cache median %.2f ms, memory cache median %.3f ms\n",
              median(cold), median(disk), median(memory));

  const Kernel k = dev.compile_kernel(source(R"(
KERNEL void user_add(GLOBAL float* y, GLOBAL const float* a, GLOBAL const float* b, long n) {
  const long i = GLOBAL_ID(0);
  if (i < n) y[i] = a[i] + b[i];
}
)",
                                             "user_add"));
  Stream s = dev.default_stream();
  // Per launch: host time to enqueue (the calls returning) and end to end (after synchronize).
  const auto measure = [&](const Tensor& a, const Tensor& b, const char* what) {
    const std::int64_t n = a.numel();
    Tensor y = dev.zeros(Shape{n}, DType::F32);
    const auto groups = static_cast<std::uint32_t>((n + 255) / 256);
    const auto block = static_cast<std::uint32_t>(std::min<std::int64_t>(n, 256));
    std::vector<double> user_enq, user_all, add_enq, add_all;
    const int reps = 20;
    for (int round = 0; round < 15; ++round) {
      auto t0 = clock::now();
      for (int i = 0; i < reps; ++i) s.launch(k, Dim3(groups), Dim3(block), y, a, b, n);
      auto t1 = clock::now();
      s.synchronize();
      auto t2 = clock::now();
      for (int i = 0; i < reps; ++i) (void)ops::add(a, b);
      auto t3 = clock::now();
      s.synchronize();
      auto t4 = clock::now();
      user_enq.push_back(ms(t1 - t0) / reps);
      user_all.push_back(ms(t2 - t0) / reps);
      add_enq.push_back(ms(t3 - t2) / reps);
      add_all.push_back(ms(t4 - t2) / reps);
    }
    std::printf(
        "%s: user kernel %.3f ms enqueue, %.3f ms end to end; ops::add %.3f ms enqueue, %.3f ms end to end "
        "(medians per launch, %d launches a round, 15 interleaved rounds)\n",
        what, median(user_enq), median(user_all), median(add_enq), median(add_all), reps);
  };
  const std::int64_t n = 1 << 20;
  Tensor a = floats(iota_vec(n)), b = floats(iota_vec(n, 1));
  std::printf("element offsets in their pool segments: a %lld, b %lld\n", static_cast<long long>(a.arg().offset),
              static_cast<long long>(b.arg().offset));
  measure(a, b, "1M f32 a + b");
  // Device time of one of each, from the profiler's events.
  Tensor y = dev.zeros(Shape{n}, DType::F32);
  profiler::start();
  for (int i = 0; i < 5; ++i) {
    s.launch(k, Dim3(static_cast<std::uint32_t>(n / 256)), Dim3(256), y, a, b, n);
    (void)ops::add(a, b);
  }
  s.synchronize();
  profiler::stop();
  for (const auto& r : profiler::summary())
    std::printf("profiler: %s on %s: %llu calls, mean %.3f ms (device timed: %d)\n", r.name.c_str(), r.device.c_str(),
                static_cast<unsigned long long>(r.calls), r.mean_ms, int(r.device_timed));
}

}  // namespace
