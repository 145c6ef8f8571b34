// User kernels through the public API (Backend::compile_kernel, Stream::launch)
// on the backends that build the Torsh dialect: one source giving identical
// results on the CPU and OpenCL, the checks every launch passes, conversions,
// the profiler, graph capture, statistics, and the disk cache across processes.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "device_test_util.hpp"
#include "subprocess.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
using torsh::test::backend_available;
using torsh::test::error_code_of;
using torsh::test::rand_vec;
using torsh::test::unavailable_reason;

namespace {

// Exact integer and unfused float arithmetic, a 2-D grid and a work-group
// reduction through LOCAL_ARRAY and BARRIER: results every target must give bit for bit.
const char* kPortable = R"(
DEVICE_FN uint mix(uint h) {
  h ^= h >> 16; h *= 0x7feb352du; h ^= h >> 15; h *= 0x846ca68bu; h ^= h >> 16;
  return h;
}

KERNEL void hash_fma(GLOBAL uint* h, GLOBAL float* f, GLOBAL const float* x, float a, long cols, long rows) {
  const long c = GLOBAL_ID(0), r = GLOBAL_ID(1);
  if (c >= cols || r >= rows) return;
  const long i = r * cols + c;
  h[i] = mix((uint)i ^ (uint)(r << 20));
  f[i] = mul_add_unfused(a, x[i], (float)c);
}

KERNEL void block_sum(GLOBAL long* out, GLOBAL const int* x, long n) {
  LOCAL_ARRAY(long, part, 128);
  const long lid = LOCAL_ID(0);
  long s = 0;
  for (long i = GROUP_ID(0) * 128 + lid; i < n; i += NUM_GROUPS(0) * 128) s += x[i];
  part[lid] = s;
  BARRIER();
  for (long w = 64; w > 0; w /= 2) {
    if (lid < w) part[lid] += part[lid + w];
    BARRIER();
  }
  if (lid == 0) out[GROUP_ID(0)] = part[0];
}
)";

std::vector<Backend> torsh_dialect_backends() {
  std::vector<Backend> out;
  for (BackendType t : Backend::available()) {
    Backend b = Backend::create(t);
    if (b.capabilities().accepts(KernelDialect::Torsh)) out.push_back(b);
  }
  return out;
}

std::optional<Backend> cpu_with_kernels() {
  Backend cpu = Backend::create(BackendType::Cpu);
  if (!cpu.capabilities().accepts(KernelDialect::Torsh)) return std::nullopt;
  return cpu;
}

}  // namespace

#define REQUIRE_CPU_KERNELS()                                                                          \
  auto cpu_opt = cpu_with_kernels();                                                                   \
  if (!cpu_opt) GTEST_SKIP() << "the CPU backend builds no user kernels here (no C++ compiler found)"; \
  Backend& cpu = *cpu_opt

TEST(UserKernel, OneSourceGivesIdenticalResultsOnEveryBackend) {
  auto backends = torsh_dialect_backends();
  if (backends.size() < 2) GTEST_SKIP() << "fewer than two backends build the Torsh dialect here";
  const std::int64_t rows = 37, cols = 1001, n = 100003;
  std::vector<float> xs(rows * cols);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = std::ldexp(float(int(i % 2001) - 1000), -7);
  std::vector<std::int32_t> ints(n);
  for (std::int64_t i = 0; i < n; ++i) ints[i] = std::int32_t((i * 2654435761u) % 2000001) - 1000000;
  std::vector<std::vector<std::uint8_t>> results;
  for (Backend& b : backends) {
    SCOPED_TRACE(b.device().to_string());
    Kernel hf = b.compile_kernel({.source = kPortable, .entry = "hash_fma"});
    Kernel bs = b.compile_kernel({.source = kPortable, .entry = "block_sum"});
    ASSERT_TRUE(hf.params_known());
    ASSERT_EQ(hf.params().size(), 6u);
    Tensor x = b.from_host(xs.data(), Shape{rows, cols}, DType::F32);
    Tensor h = b.empty(Shape{rows, cols}, DType::I32), f = b.empty(Shape{rows, cols}, DType::F32);
    Stream s = b.default_stream();
    // 16 x 4 blocks over a grid that overhangs both edges.
    s.launch(hf, Dim3{(cols + 15) / 16, (rows + 3) / 4}, Dim3{16, 4}, h, f, x, 1.37f, cols, rows);
    Tensor in = b.from_host(ints.data(), Shape{n}, DType::I32), part = b.empty(Shape{7}, DType::I64);
    s.launch(bs, Dim3{7}, Dim3{128}, part, in, n);
    std::vector<std::uint8_t> all;
    for (const Tensor& t : {h, f, part}) {
      const auto bytes = t.to_host_bytes();
      all.insert(all.end(), bytes.begin(), bytes.end());
    }
    // The reduction is exact: check it against the host as well.
    std::int64_t want = 0, got = 0;
    for (auto v : ints) want += v;
    for (auto v : part.to_host<std::int64_t>()) got += v;
    EXPECT_EQ(got, want);
    const auto fv = f.to_vector();
    EXPECT_EQ(fv[5 * cols + 7], 1.37f * xs[5 * cols + 7] + 7.0f);
    results.push_back(std::move(all));
  }
  for (std::size_t i = 1; i < results.size(); ++i)
    EXPECT_TRUE(results[i] == results[0])
        << backends[i].device().to_string() << " differs from " << backends[0].device().to_string();
}

TEST(UserKernel, LaunchesAreCheckedBeforeTheDriver) {
  REQUIRE_CPU_KERNELS();
  Kernel k = cpu.compile_kernel({.source = R"(
    KERNEL void axpy(GLOBAL float* y, GLOBAL const float* x, float a, int n) {
      const long i = GLOBAL_ID(0);
      if (i < n) y[i] += a * x[i];
    })",
                                 .entry = "axpy"});
  Stream s = cpu.default_stream();
  Tensor y = cpu.zeros(Shape{8}, DType::F32), x = cpu.zeros(Shape{8}, DType::F32);
  Tensor d64 = cpu.zeros(Shape{8}, DType::F64);
  std::string msg;
  EXPECT_EQ(error_code_of([&] { s.launch(k, 1, 8, y, x, 2.0f); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("takes 4 arguments"), std::string::npos) << msg;
  EXPECT_NE(msg.find("axpy"), std::string::npos) << msg;
  EXPECT_EQ(error_code_of([&] { s.launch(k, 1, 8, y, x, x, 8); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("takes a value"), std::string::npos) << msg;
  EXPECT_EQ(error_code_of([&] { s.launch(k, 1, 8, 1.0f, x, 2.0f, 8); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("takes a tensor"), std::string::npos) << msg;
  EXPECT_EQ(error_code_of([&] { s.launch(k, 1, 8, d64, x, 2.0f, 8); }, &msg), ErrorCode::DTypeMismatch);
  EXPECT_EQ(error_code_of([&] { s.launch(k, 1, 8, y, x, 2.0f, std::int64_t(1) << 40); }, &msg),
            ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("does not fit i32"), std::string::npos) << msg;
  EXPECT_EQ(error_code_of([&] { s.launch(k, 1, 8, y, x, 2.0f, 2.5); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_code_of([&] { s.launch(k, Dim3{0}, 8, y, x, 2.0f, 8); }, &msg), ErrorCode::InvalidArgument);
  Tensor bc = cpu.zeros(Shape{1}, DType::F32).broadcast_to(Shape{8});
  EXPECT_EQ(error_code_of([&] { s.launch(k, 1, 8, bc, x, 2.0f, 8); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("broadcast"), std::string::npos) << msg;
  Tensor freed = cpu.zeros(Shape{8}, DType::F32);
  const_cast<Buffer&>(freed.buffer()).free();
  EXPECT_EQ(error_code_of([&] { s.launch(k, 1, 8, freed, x, 2.0f, 8); }), ErrorCode::InvalidState);
  EXPECT_EQ(error_code_of([&] { s.launch(Kernel{}, 1, 8, y, x, 2.0f, 8); }), ErrorCode::InvalidArgument);
  // Nothing was written by any refused launch.
  for (float v : y.to_vector()) EXPECT_EQ(v, 0.0f);
  // Numbers convert where no value changes: 2 (an int) to float, a double to float, an i64 that fits to int.
  Tensor ones = cpu.from_host(std::vector<float>(8, 1.0f).data(), Shape{8}, DType::F32);
  s.launch(k, 1, 8, y, ones, 2, std::int64_t(8));
  s.launch(k, 1, 8, y, ones, 0.5, 8u);
  for (float v : y.to_vector()) EXPECT_EQ(v, 2.5f);
  // A tensor of another device.
  for (BackendType t : Backend::available()) {
    if (t == BackendType::Cpu) continue;
    Backend other = Backend::create(t);
    Tensor o = other.zeros(Shape{8}, DType::F32);
    EXPECT_EQ(error_code_of([&] { s.launch(k, 1, 8, o, x, 2.0f, 8); }), ErrorCode::DeviceMismatch)
        << other.device().to_string();
    break;
  }
}

TEST(UserKernel, StructsPassByValue) {
  REQUIRE_CPU_KERNELS();
  struct Affine {
    float scale, shift;
    long n;
  };
  Kernel k = cpu.compile_kernel({.source = R"(
    typedef struct { float scale, shift; long n; } Affine;
    KERNEL void affine(GLOBAL float* y, Affine p) {
      const long i = GLOBAL_ID(0);
      if (i < p.n) y[i] = p.scale * (float)i + p.shift;
    })",
                                 .entry = "affine"});
  Tensor y = cpu.zeros(Shape{5}, DType::F32);
  cpu.default_stream().launch(k, 1, 8, y, KernelArg::pod(Affine{2.0f, 1.0f, 5}));
  EXPECT_EQ(y.to_vector(), (std::vector<float>{1, 3, 5, 7, 9}));
}

TEST(UserKernel, CompileErrorsCarryTheLogAtTheUsersLine) {
  if (torsh_dialect_backends().empty()) GTEST_SKIP() << "no backend builds the Torsh dialect here";
  for (Backend b : torsh_dialect_backends()) {
    SCOPED_TRACE(b.device().to_string());
    std::string msg;
    EXPECT_EQ(error_code_of(
                  [&] {
                    b.compile_kernel(
                        {.source = "KERNEL void bad(GLOBAL float* y) {\n  y[0] = 1.0f;\n  y[1] = undefined_name;\n}\n",
                         .entry = "bad"});
                  },
                  &msg),
              ErrorCode::KernelCompile);
    EXPECT_NE(msg.find("undefined_name"), std::string::npos) << msg;
    EXPECT_NE(msg.find(":3:"), std::string::npos) << "the log should name line 3 of the user's source:\n" << msg;
  }
}

TEST(UserKernel, ProfilerAndGraphCaptureSeeUserKernels) {
  if (torsh_dialect_backends().empty()) GTEST_SKIP() << "no backend builds the Torsh dialect here";
  for (Backend b : torsh_dialect_backends()) {
    SCOPED_TRACE(b.device().to_string());
    Kernel k = b.compile_kernel({.source = R"(
      KERNEL void twice(GLOBAL float* y, GLOBAL const float* x, long n) {
        const long i = GLOBAL_ID(0);
        if (i < n) y[i] = 2.0f * x[i];
      })",
                                 .entry = "twice",
                                 .name = "twice_kernel"});
    Tensor x = b.from_host(std::vector<float>{1, 2, 3}.data(), Shape{3}, DType::F32);
    Tensor y = b.zeros(Shape{3}, DType::F32);
    Stream s = b.default_stream();
    profiler::start();
    s.launch(k, 1, 64, y, x, 3L);
    profiler::stop();
    bool seen = false;
    for (const auto& r : profiler::records())
      seen = seen || (r.name == "twice_kernel" && r.device == b.device().to_string());
    EXPECT_TRUE(seen) << profiler::table();
    // Captured with a built-in op after it; replayed on new input data.
    Graph g;
    Tensor z;
    {
      GraphCapture cap(b);
      s.launch(k, 1, 64, y, x, 3L);
      z = ops::add(y, x);
      g = cap.end();
    }
    EXPECT_EQ(g.op_names(), (std::vector<std::string>{"twice_kernel", "add"}));
    x.copy_from_host(std::vector<float>{10, 20, 30}.data(), 12);
    g.replay();
    EXPECT_EQ(y.to_vector(), (std::vector<float>{20, 40, 60}));
    EXPECT_EQ(z.to_vector(), (std::vector<float>{30, 60, 90}));
    // A capture records the default stream; a side stream is refused during it.
    Stream side = b.create_stream();
    {
      GraphCapture cap(b);
      EXPECT_EQ(error_code_of([&] { side.launch(k, 1, 64, y, x, 3L); }), ErrorCode::InvalidState);
    }
    // Launches on a side stream outside a capture run in that stream's order.
    side.launch(k, 1, 64, y, x, 3L);
    side.synchronize();
    EXPECT_EQ(y.to_vector(), (std::vector<float>{20, 40, 60}));
  }
}

TEST(UserKernel, MemoryCacheAndStatistics) {
  REQUIRE_CPU_KERNELS();
  const KernelSource src{.source = "KERNEL void noop(GLOBAL int* y) { (void)y; }\n// stats test\n", .entry = "noop"};
  const KernelStats before = cpu.kernel_stats();
  Kernel a = cpu.compile_kernel(src);
  Kernel b = cpu.compile_kernel(src);
  EXPECT_EQ(b.origin(), KernelOrigin::MemoryCache);
  Tensor y = cpu.zeros(Shape{1}, DType::I32);
  cpu.default_stream().launch(b, 1, 1, y);
  const KernelStats after = cpu.kernel_stats();
  EXPECT_EQ(after.memory_hits, before.memory_hits + 1);
  EXPECT_EQ(after.launches, before.launches + 1);
  EXPECT_GE(after.kernels_cached, 1u);
  EXPECT_GE(kernel_stats().launches, after.launches);
}

// The child half of DiskCacheIsSharedAcrossProcesses: compiles and says how.
TEST(UserKernel, DiskCacheChild) {
  if (!std::getenv("TORSH_UK_CHILD")) GTEST_SKIP() << "run by DiskCacheIsSharedAcrossProcesses";
  for (Backend b : torsh_dialect_backends()) {
    Kernel k = b.compile_kernel(
        {.source = "KERNEL void cached(GLOBAL float* y) { y[GLOBAL_ID(0)] = 7.0f; }", .entry = "cached"});
    Tensor y = b.zeros(Shape{4}, DType::F32);
    b.default_stream().launch(k, 1, 4, y);
    std::printf("RESULT %s origin=%s build_ms=%.3f value=%g\n", b.device().to_string().c_str(),
                std::string(kernel_origin_name(k.origin())).c_str(), k.build_ms(), y.to_vector()[3]);
  }
}

TEST(UserKernel, DiskCacheIsSharedAcrossProcessesAndSurvivesCorruption) {
  if (torsh_dialect_backends().empty()) GTEST_SKIP() << "no backend builds the Torsh dialect here";
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("torsh_uk_disk_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string cmd = "TORSH_UK_CHILD=1 TORSH_KERNEL_CACHE_DIR=" + dir.string() + " " +
                          fs::read_symlink("/proc/self/exe").string() + " --gtest_filter=UserKernel.DiskCacheChild";
  const auto origins = [&](const test::Run& r) {
    std::vector<std::string> o;
    for (std::size_t p = r.out.find("RESULT "); p != std::string::npos; p = r.out.find("RESULT ", p + 1)) {
      const std::size_t e = r.out.find('\n', p);
      const std::string line = r.out.substr(p, e - p);
      std::printf("  %s\n", line.c_str());  // compile time of each process, for the log
      EXPECT_NE(line.find("value=7"), std::string::npos) << line;
      o.push_back(line.substr(line.find("origin=") + 7, line.find(" build_ms") - line.find("origin=") - 7));
    }
    return o;
  };
  const test::Run first = test::run(cmd);
  ASSERT_EQ(first.status, 0) << first.out;
  const auto o1 = origins(first);
  ASSERT_FALSE(o1.empty()) << first.out;
  for (const auto& o : o1) EXPECT_EQ(o, "compiled");
  const test::Run second = test::run(cmd);
  ASSERT_EQ(second.status, 0) << second.out;
  const auto o2 = origins(second);
  // Every backend whose binaries can be reused is answered from disk in the second process.
  std::size_t files = 0;
  for (auto& e : fs::recursive_directory_iterator(dir)) files += e.is_regular_file();
  ASSERT_GE(files, 1u);
  std::size_t from_disk = 0;
  for (const auto& o : o2) from_disk += o == "disk cache";
  EXPECT_EQ(from_disk, files) << second.out;
  // Damage every entry: the third process warns, rebuilds and runs correctly; the fourth reads the rebuilt ones.
  for (auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put('\x5a');
    f.seekp(-9, std::ios::end);
    f.put('\x11');
  }
  const test::Run third = test::run(cmd);
  ASSERT_EQ(third.status, 0) << third.out;
  EXPECT_NE(third.out.find("kernel cache:"), std::string::npos) << third.out;
  EXPECT_NE(third.out.find("rebuilding"), std::string::npos) << third.out;
  for (const auto& o : origins(third)) EXPECT_EQ(o, "compiled");
  const test::Run fourth = test::run(cmd);
  std::size_t again = 0;
  for (const auto& o : origins(fourth)) again += o == "disk cache";
  EXPECT_EQ(again, files) << fourth.out;
  fs::remove_all(dir);
}
