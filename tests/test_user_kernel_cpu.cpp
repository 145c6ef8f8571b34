// User kernels on the CPU backend: Torsh-dialect sources built by the system
// C++ compiler, loaded from their bytes and run on the thread pool (work-groups
// with barriers as fibers). Through Backend::compile_kernel and Stream::launch;
// what only the device interface shows (binaries, its own argument checks)
// through backend.impl().
#include <gtest/gtest.h>

#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/user_kernel/user_kernel.hpp"
#include "torsh/ops/ops.hpp"
#include "torsh/torsh.hpp"
#include "user_kernel_sources.hpp"

using namespace torsh;

namespace {

// A disk cache of this process's own, so builds are real and nothing is left behind.
struct PrivateKernelCache {
  std::string dir;
  PrivateKernelCache() {
    std::string t = (std::filesystem::temp_directory_path() / "torsh-test-uk-cpu-XXXXXX").string();
    if (mkdtemp(t.data())) {
      dir = t;
      setenv("TORSH_KERNEL_CACHE_DIR", dir.c_str(), 1);
    }
  }
  ~PrivateKernelCache() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};
const PrivateKernelCache g_cache;

rt::UserKernelSpec spec_of(KernelSource src) {
  rt::UserKernelSpec s;
  s.src = std::move(src);
  s.label = "kernel '" + (s.src.name.empty() ? s.src.entry : s.src.name) + "' (torsh dialect)";
  return s;
}

KernelSource source(std::string entry, std::string text) {
  KernelSource s;
  s.entry = std::move(entry);
  s.source = std::move(text);
  return s;
}

// Launch arguments that keep the tensors' views and the values' bytes alive.
struct Args {
  std::deque<rt::TensorArg> tensors;
  std::deque<std::vector<unsigned char>> values;
  std::vector<rt::LaunchArg> list;
  Args& t(const Tensor& x) {
    tensors.push_back(x.arg());
    list.push_back({&tensors.back(), true, nullptr, 0});
    return *this;
  }
  template <class T>
  Args& v(T x) {
    values.emplace_back(sizeof x);
    std::memcpy(values.back().data(), &x, sizeof x);
    list.push_back({nullptr, true, values.back().data(), sizeof x});
    return *this;
  }
};

std::optional<Error> error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

const char* const kAdd = R"(
KERNEL void add(GLOBAL float* y, GLOBAL const float* a, GLOBAL const float* b, float s, long n) {
  const long i = GLOBAL_ID(0);
  if (i < n) y[i] = a[i] + s * b[i];
}
)";

class UserKernelCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    // Without a C++ compiler the backend says so at build time; the tests need one.
    static const std::optional<std::string> missing = []() -> std::optional<std::string> {
      Backend b = Backend::create(BackendType::Cpu);
      try {
        auto spec = spec_of(source("add", kAdd));
        b.impl().build_kernel(spec);
      } catch (const Error& e) {
        if (e.code() == ErrorCode::Unsupported) return std::string(e.what());
      }
      return std::nullopt;
    }();
    if (missing) GTEST_SKIP() << "no C++ compiler for CPU user kernels: " << *missing;
  }

  Kernel compile(const KernelSource& src) { return cpu.compile_kernel(src); }

  template <class... A>
  void launch(const Kernel& k, Dim3 grid, Dim3 block, const A&... args) {
    cpu.default_stream().launch(k, grid, block, args...);
  }

  // The device interface alone: build, load, launch.
  std::unique_ptr<rt::UserKernelImpl> compile_impl(KernelSource src) {
    const auto spec = spec_of(std::move(src));
    const auto bin = cpu.impl().build_kernel(spec);
    return cpu.impl().load_kernel(spec, bin.bytes);
  }
  void launch_impl(rt::UserKernelImpl& k, Dim3 grid, Dim3 block, const Args& a) {
    k.launch(cpu.impl().default_stream(), grid, block, a.list);
  }

  Tensor floats(const std::vector<float>& v) {
    return cpu.from_host(v.data(), Shape{std::int64_t(v.size())}, DType::F32);
  }
  Tensor ints(std::int64_t n) { return cpu.zeros(Shape{n}, DType::I32); }

  Backend cpu = Backend::create(BackendType::Cpu);
};

TEST_F(UserKernelCpu, AdvertisesTheTorshDialectAndItsWorkGroupLimit) {
  const Capabilities c = cpu.capabilities();
  EXPECT_TRUE(c.runtime_kernels);
  EXPECT_TRUE(c.accepts(KernelDialect::Torsh));
  EXPECT_FALSE(c.accepts(KernelDialect::Wgsl));
  EXPECT_EQ(c.max_work_group, 1024u);
  const std::string id = cpu.impl().kernel_compiler_id();
  EXPECT_NE(id.find("-march=native"), std::string::npos) << id;
  EXPECT_NE(id.find("cpu flags"), std::string::npos) << id;
}

TEST_F(UserKernelCpu, ElementwiseOverAPartialLastGroup) {
  auto k = compile(source("add", kAdd));
  ASSERT_EQ(k.params().size(), 5u);
  EXPECT_TRUE(k.params_known());
  EXPECT_EQ(k.params()[0].kind, KernelParam::Kind::Buffer);
  EXPECT_TRUE(k.params()[0].writable);
  EXPECT_EQ(k.params()[1].type, ParamType::F32);
  EXPECT_FALSE(k.params()[1].writable);
  EXPECT_EQ(k.params()[3].kind, KernelParam::Kind::Value);
  EXPECT_EQ(k.params()[3].type, ParamType::F32);
  EXPECT_EQ(k.params()[4].type, ParamType::I64);
  EXPECT_EQ(k.params()[4].size, 8u);

  for (const long n : {1L, 1000L, 100003L}) {
    std::vector<float> a(n), b(n);
    for (long i = 0; i < n; ++i) a[i] = float(i), b[i] = float(i % 13);
    Tensor ta = floats(a), tb = floats(b), ty = cpu.zeros(Shape{n + 5}, DType::F32);
    launch(k, Dim3(std::uint32_t((n + 255) / 256)), Dim3(256), ty, ta, tb, 0.5f, n);
    const auto y = ty.to_vector();
    for (long i = 0; i < n; ++i) ASSERT_EQ(y[i], a[i] + 0.5f * b[i]) << i;
    for (long i = n; i < n + 5; ++i) ASSERT_EQ(y[i], 0.0f) << "wrote past n at " << i;
  }
}

TEST_F(UserKernelCpu, TensorViewsStartAtTheirFirstElement) {
  auto k = compile(source("add", kAdd));
  std::vector<float> a(64);
  for (int i = 0; i < 64; ++i) a[i] = float(i);
  Tensor ta = floats(a), tb = floats(a), ty = cpu.zeros(Shape{64}, DType::F32);
  Tensor a_tail = ta.slice(0, 10, 64), y_tail = ty.slice(0, 20, 64);
  launch(k, Dim3(1), Dim3(64), y_tail, a_tail, tb, 1.0f, 30L);
  const auto y = ty.to_vector();
  for (int i = 0; i < 30; ++i) EXPECT_EQ(y[20 + i], a[10 + i] + a[i]) << i;
  EXPECT_EQ(y[19], 0.0f);
  EXPECT_EQ(y[50], 0.0f);
}

TEST_F(UserKernelCpu, TwoAndThreeDimensionalGrids) {
  auto k = compile(source("ids", R"(
KERNEL void ids(GLOBAL int* out) {
  const long x = GLOBAL_ID(0), y = GLOBAL_ID(1), z = GLOBAL_ID(2);
  const long w = GLOBAL_SIZE(0), h = GLOBAL_SIZE(1);
  const long i = (z * h + y) * w + x;
  /* every coordinate function agrees with the others */
  const int ok = GROUP_ID(0) * LOCAL_SIZE(0) + LOCAL_ID(0) == x && GROUP_ID(2) < NUM_GROUPS(2) &&
                 LOCAL_ID(1) < LOCAL_SIZE(1) && GLOBAL_SIZE(2) == NUM_GROUPS(2) * LOCAL_SIZE(2);
  out[i] = ok ? (int)(x + 100 * y + 10000 * z) : -1;
}
)"));
  for (const auto& [grid, block] : std::vector<std::pair<Dim3, Dim3>>{{{5, 3}, {8, 4}}, {{2, 3, 4}, {4, 2, 2}}}) {
    const std::int64_t w = grid.x * block.x, h = grid.y * block.y, d = grid.z * block.z;
    Tensor out = ints(w * h * d);
    launch(k, grid, block, out);
    const auto v = out.to_host<int>();
    for (std::int64_t z = 0; z < d; ++z)
      for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x)
          ASSERT_EQ(v[(z * h + y) * w + x], x + 100 * y + 10000 * z)
              << grid.to_string() << " " << x << "," << y << "," << z;
  }
}

const char* const kBlockSum = R"(
/* One sum per work-group: a tree over work-group memory. */
KERNEL void block_sum(GLOBAL float* sums, GLOBAL const float* x, long n) {
  LOCAL_ARRAY(float, part, 1024);
  const long lid = LOCAL_ID(0), i = GLOBAL_ID(0);
  part[lid] = i < n ? x[i] : 0.0f;
  BARRIER();
  for (long stride = LOCAL_SIZE(0) / 2; stride > 0; stride /= 2) {
    if (lid < stride) part[lid] += part[lid + stride];
    BARRIER();
  }
  if (lid == 0) sums[GROUP_ID(0)] = part[0];
}
)";

TEST_F(UserKernelCpu, WorkGroupMemoryAndBarriersGiveBlockSums) {
  auto k = compile(source("block_sum", kBlockSum));
  for (const std::uint32_t block : {2u, 64u, 256u, 1024u}) {
    const std::uint32_t groups = 37;
    const long n = long(groups) * block - 13;
    std::vector<float> x(n);
    for (long i = 0; i < n; ++i) x[i] = float(i % 7);
    Tensor tx = floats(x), sums = cpu.zeros(Shape{groups}, DType::F32);
    launch(k, Dim3(groups), Dim3(block), sums, tx, n);
    const auto s = sums.to_vector();
    for (std::uint32_t g = 0; g < groups; ++g) {
      double want = 0;
      for (long i = long(g) * block; i < std::min(n, long(g + 1) * block); ++i) want += x[i];
      ASSERT_EQ(s[g], float(want)) << "block " << block << " group " << g;
    }
  }
}

TEST_F(UserKernelCpu, BarriersInTwoDimensionalGroupsAndHelperFunctions) {
  // A transpose through work-group memory: every item writes one element,
  // reads another's after the barrier (called from a DEVICE_FN).
  auto k = compile(source("tile_transpose", R"(
DEVICE_FN void sync_group(void) { BARRIER(); }
KERNEL void tile_transpose(GLOBAL float* out, GLOBAL const float* in, int width) {
  LOCAL_ARRAY(float, tile, 16 * 16);
  const long lx = LOCAL_ID(0), ly = LOCAL_ID(1);
  tile[ly * 16 + lx] = in[GLOBAL_ID(1) * width + GLOBAL_ID(0)];
  sync_group();
  const long ox = GROUP_ID(1) * 16 + lx, oy = GROUP_ID(0) * 16 + ly;
  out[oy * width + ox] = tile[lx * 16 + ly];
}
)"));
  const int w = 64;
  std::vector<float> in(w * w);
  for (int i = 0; i < w * w; ++i) in[i] = float(i);
  Tensor tin = floats(in), tout = cpu.zeros(Shape{w * w}, DType::F32);
  launch(k, Dim3(w / 16, w / 16), Dim3(16, 16), tout, tin, w);
  const auto out = tout.to_vector();
  for (int y = 0; y < w; ++y)
    for (int x = 0; x < w; ++x) ASSERT_EQ(out[y * w + x], in[x * w + y]) << x << "," << y;
}

TEST_F(UserKernelCpu, ItemsThatSkipABarrierAreReportedNotHung) {
  auto early = compile(source("early", R"(
KERNEL void early(GLOBAL float* y) {
  LOCAL_ARRAY(float, t, 64);
  if (LOCAL_ID(0) == 3) return; /* skips the barrier the others wait at */
  t[LOCAL_ID(0)] = 1.0f;
  BARRIER();
  y[GLOBAL_ID(0)] = t[0];
}
)"));
  Tensor y = cpu.zeros(Shape{64 * 8}, DType::F32);
  auto e = error_of([&] { launch(early, Dim3(8), Dim3(64), y); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(e->what()).find("BARRIER()"), std::string::npos) << e->what();
  EXPECT_NE(std::string(e->what()).find("early"), std::string::npos) << e->what();

  auto extra = compile(source("extra", R"(
KERNEL void extra(GLOBAL float* y) {
  BARRIER();
  if (LOCAL_ID(0) == 0) BARRIER(); /* one item waits at a second barrier alone */
  y[GLOBAL_ID(0)] = 1.0f;
}
)"));
  e = error_of([&] { launch(extra, Dim3(4), Dim3(32), y); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), ErrorCode::InvalidArgument);

  // The pool and the fiber stacks are fine afterwards.
  auto k = compile(source("block_sum", kBlockSum));
  std::vector<float> x(256, 1.0f);
  Tensor tx = floats(x), sums = cpu.zeros(Shape{4}, DType::F32);
  launch(k, Dim3(4), Dim3(64), sums, tx, 256L);
  EXPECT_EQ(sums.to_vector(), std::vector<float>(4, 64.0f));
}

TEST_F(UserKernelCpu, ExceptionsInKernelsBecomeErrors) {
  // Kernels are C++ here: one that throws on a worker thread (or in a fiber)
  // must come back as an Error, not terminate the process.
  auto k = compile(source("thrower", R"(
#include <stdexcept>
KERNEL void thrower(GLOBAL int* y, long bad) {
  if (GLOBAL_ID(0) == bad) throw std::runtime_error("item went wrong");
  y[GLOBAL_ID(0)] = 1;
}
)"));
  Tensor y = ints(1 << 20);
  auto e = error_of([&] { launch(k, Dim3(4096), Dim3(256), y, long(1 << 20) - 7); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("item went wrong"), std::string::npos) << e->what();

  auto kb = compile(source("thrower_b", R"(
#include <stdexcept>
KERNEL void thrower_b(GLOBAL int* y, long bad) {
  BARRIER();
  if (GLOBAL_ID(0) == bad) throw std::runtime_error("fiber went wrong");
  y[GLOBAL_ID(0)] = 1;
}
)"));
  e = error_of([&] { launch(kb, Dim3(64), Dim3(64), y, 64L * 40 + 5); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("fiber went wrong"), std::string::npos) << e->what();
}

TEST_F(UserKernelCpu, CompileErrorsCarryTheLogWithTheUsersLines) {
  KernelSource s =
      source("broken",
             "KERNEL void broken(GLOBAL float* y) {\n  const long i = GLOBAL_ID(0);\n  y[i] = undeclared_thing;\n}\n");
  s.name = "my_broken_kernel";
  auto e = error_of([&] { compile(s); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), ErrorCode::KernelCompile);
  const std::string m = e->what();
  EXPECT_NE(m.find("my_broken_kernel:3:"), std::string::npos) << m;
  EXPECT_NE(m.find("undeclared_thing"), std::string::npos) << m;
  EXPECT_NE(m.find("'broken'"), std::string::npos) << m;

  // An entry that is not in the source: the trampoline's line says which.
  e = error_of([&] { compile(source("missing_entry", kAdd)); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), ErrorCode::KernelCompile);
  EXPECT_NE(std::string(e->what()).find("missing_entry"), std::string::npos) << e->what();
}

TEST_F(UserKernelCpu, DefinesAndOptionsReachTheCompiler) {
  KernelSource s = source("affine", R"(
KERNEL void affine(GLOBAL float* y, GLOBAL const float* x) {
  const long i = GLOBAL_ID(0);
#if defined(USE_FMA_FREE)
  y[i] = mul_add_unfused(x[i], (float)SCALE, (float)OFFSET);
#else
  y[i] = -1.0f;
#endif
}
)");
  s.defines = {{"SCALE", "3"}, {"USE_FMA_FREE", ""}};
  s.options = {"-DOFFSET=4", "-O1"};
  auto k = compile(s);
  std::vector<float> x{1, 2, 3, 4};
  Tensor tx = floats(x), ty = cpu.zeros(Shape{4}, DType::F32);
  launch(k, Dim3(1), Dim3(4), ty, tx);
  EXPECT_EQ(ty.to_vector(), (std::vector<float>{7, 10, 13, 16}));

  // Options are arguments, never shell words.
  s.options = {"-DOFFSET=4; touch /tmp/torsh_should_not_exist"};
  auto e = error_of([&] { compile(s); });
  (void)e;
  EXPECT_NE(std::system("test -e /tmp/torsh_should_not_exist"), 0);

  s.defines = {{"NOT AN IDENTIFIER", "1"}};
  e = error_of([&] { compile(s); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), ErrorCode::InvalidArgument);
}

TEST_F(UserKernelCpu, DialectHelpersCompileAsCpp) {
  auto k = compile(source("helpers", R"(
KERNEL void helpers(GLOBAL uint* out, GLOBAL const float* x) {
  const long i = GLOBAL_ID(0);
  out[3 * i] = float_to_half_bits(x[i]);
  out[3 * i + 1] = AS_UINT(half_bits_to_float(float_to_half_bits(x[i])));
  out[3 * i + 2] = float_to_bf16_bits(x[i]);
#ifdef TORSH_FP64
  (void)mul_add_unfused_f64(1.0, 2.0, 3.0);
#endif
}
)"));
  std::vector<float> x{1.0f, -2.5f, 65504.0f, 1e-8f};
  Tensor tx = floats(x), out = cpu.zeros(Shape{12}, DType::I32);
  launch(k, Dim3(1), Dim3(4), out, tx);
  const auto v = out.to_host<std::uint32_t>();
  EXPECT_EQ(v[0], 0x3c00u);
  EXPECT_EQ(v[3], 0xc100u);
  EXPECT_EQ(v[6], 0x7bffu);
  float back;
  std::memcpy(&back, &v[4], 4);
  EXPECT_EQ(back, -2.5f);
  EXPECT_EQ(v[2], 0x3f80u);
}

TEST_F(UserKernelCpu, EveryNameOfTheDialect) {
  Kernel k = compile(source("tour", torsh::test::kDialectTour));
  const Dim3 grid(2, 3, 2), block(16);
  const std::int64_t n = 32 * 3 * 2;
  Tensor h = cpu.zeros(Shape{n}, DType::F32);
  h.copy_from_host(std::vector<float>(n, 1.0f).data(), n * 4);
  h = h.cast(DType::F16);
  Tensor y = cpu.zeros(Shape{n}, DType::F32), flags = cpu.zeros(Shape{n}, DType::U8),
         d = cpu.zeros(Shape{n}, DType::F64);
  launch(k, grid, block, y, h, flags, d, std::uint32_t(n));
  const auto yv = y.to_vector();
  const auto dv = d.to_host<double>();
  const auto fv = flags.to_host<std::uint8_t>();
  for (std::int64_t i = 0; i < n; ++i) {
    const long x = i % 32, gy = (i / 32) % 3, gz = i / 96;
    const float want = 6.0f + float(x / 16 + gy + gz + 7 + x % 16 + 18);
    ASSERT_EQ(yv[i], want) << i;
    ASSERT_EQ(dv[i], double(want) * 0.5 + 1.0) << i;
    ASSERT_EQ(fv[i] & 1, 1) << i;
  }
}

TEST_F(UserKernelCpu, MathAsOnTheGpuTargets) {
  // The names OpenCL C and CUDA have built in, float overloads kept float.
  Kernel k = compile(source("math", R"(
DEVICE_FN float gelu(float v) { return 0.5f * v * (1.0f + tanh(0.7978845608028654f * (v + 0.044715f * v * v * v))); }
KERNEL void math(GLOBAL float* y, GLOBAL const float* x, long n) {
  const long i = GLOBAL_ID(0);
  if (i >= min(n, 8L)) return;
  const float v = x[i];
  float r = 0.0f;
  switch (i) {
    case 0: r = gelu(v); break;
    case 1: r = rsqrt(v) + sqrt(v); break;
    case 2: r = exp(v) + log(v) + fabs(-v) + pow(v, 2.0f); break;
    case 3: r = fmin(v, 1.0f) + fmax(v, 1.0f) + floor(v) + ceil(v); break;
    case 4: r = (float)max(GLOBAL_ID(0), 2) + min(v, 0.5f); break;
    case 5: r = isnan(v / 0.0f - v / 0.0f) ? FLT_MAX : 0.0f; break;
    default: r = (float)(sizeof(tanh(v)) + sizeof(rsqrt(v)) + sizeof(max(1.0f, 2))); break;
  }
  y[i] = r;
}
)"));
  std::vector<float> x{1.5f, 4.0f, 2.0f, 2.5f, 3.0f, 1.0f, 1.0f, 1.0f};
  Tensor tx = floats(x), ty = cpu.zeros(Shape{8}, DType::F32);
  launch(k, Dim3(1), Dim3(8), ty, tx, 100L);
  const auto y = ty.to_vector();
  const float v0 = 1.5f;
  EXPECT_FLOAT_EQ(y[0], 0.5f * v0 * (1.0f + std::tanh(0.7978845608028654f * (v0 + 0.044715f * v0 * v0 * v0))));
  EXPECT_FLOAT_EQ(y[1], 0.5f + 2.0f);
  EXPECT_FLOAT_EQ(y[2], std::exp(2.0f) + std::log(2.0f) + 2.0f + 4.0f);
  EXPECT_FLOAT_EQ(y[3], 1.0f + 2.5f + 2.0f + 3.0f);
  EXPECT_FLOAT_EQ(y[4], 4.0f + 0.5f);
  EXPECT_EQ(y[5], FLT_MAX);
  EXPECT_EQ(y[6], 12.0f);  // every result a 4-byte float

  // A kernel's own min wins over the dialect's.
  Kernel own = compile(source("own_min", R"(
DEVICE_FN int min(int a, int b) { return a < b ? a - 100 : b - 100; }
KERNEL void own_min(GLOBAL int* y) { y[0] = min(1, 2); }
)"));
  Tensor t = ints(1);
  launch(own, Dim3(1), Dim3(1), t);
  EXPECT_EQ(t.to_host<int>()[0], -99);
}

TEST_F(UserKernelCpu, BinaryRoundTrip) {
  const auto spec = spec_of(source("add", kAdd));
  const auto bin = cpu.impl().build_kernel(spec);
  ASSERT_TRUE(bin.cacheable);
  ASSERT_GT(bin.bytes.size(), 1000u);
  std::vector<float> a{1, 2, 3}, b{10, 20, 30};
  Tensor ta = floats(a), tb = floats(b);
  // Loaded twice at once, then again after both are gone: each is its own object.
  auto k1 = cpu.impl().load_kernel(spec, bin.bytes);
  auto k2 = cpu.impl().load_kernel(spec, bin.bytes);
  for (auto* k : {k1.get(), k2.get()}) {
    Tensor ty = cpu.zeros(Shape{3}, DType::F32);
    launch_impl(*k, Dim3(1), Dim3(4), Args{}.t(ty).t(ta).t(tb).v(2.0f).v(3L));
    EXPECT_EQ(ty.to_vector(), (std::vector<float>{21, 42, 63}));
  }
  // Another object loaded while those are: it gets a descriptor number they
  // were loaded under, and must still be itself, not the loaded one.
  auto other = compile_impl(source("add", R"(
KERNEL void add(GLOBAL float* y, GLOBAL const float* a, GLOBAL const float* b, float s, long n) {
  if (GLOBAL_ID(0) < n) y[GLOBAL_ID(0)] = a[GLOBAL_ID(0)] - s * b[GLOBAL_ID(0)];
}
)"));
  Tensor ty = cpu.zeros(Shape{3}, DType::F32);
  launch_impl(*other, Dim3(1), Dim3(4), Args{}.t(ty).t(ta).t(tb).v(1.0f).v(3L));
  EXPECT_EQ(ty.to_vector(), (std::vector<float>{-9, -18, -27}));
  k1.reset();
  k2.reset();
  auto k3 = cpu.impl().load_kernel(spec, bin.bytes);
  launch_impl(*k3, Dim3(1), Dim3(4), Args{}.t(ty).t(ta).t(tb).v(1.0f).v(3L));
  EXPECT_EQ(ty.to_vector(), (std::vector<float>{11, 22, 33}));
  launch_impl(*other, Dim3(1), Dim3(4), Args{}.t(ty).t(ta).t(tb).v(1.0f).v(3L));
  EXPECT_EQ(ty.to_vector(), (std::vector<float>{-9, -18, -27}));
}

TEST_F(UserKernelCpu, TheDiskCacheHoldsTheSharedObject) {
  KernelSource src = source("add", kAdd);
  // A key no other test or repetition uses.
  src.defines = {{"DISK_CACHE_TEST", std::to_string(std::chrono::steady_clock::now().time_since_epoch().count())}};
  Kernel first = compile(src);
  EXPECT_EQ(first.origin(), KernelOrigin::Compiled);
  ASSERT_FALSE(first.cache_path().empty());
  clear_kernel_memory_cache();
  Kernel again = compile(src);
  EXPECT_EQ(again.origin(), KernelOrigin::DiskCache);
  std::vector<float> a{1, 2}, b{3, 4};
  Tensor ta = floats(a), tb = floats(b), ty = cpu.zeros(Shape{2}, DType::F32);
  launch(again, Dim3(1), Dim3(2), ty, ta, tb, 1.0f, 2L);
  EXPECT_EQ(ty.to_vector(), (std::vector<float>{4, 6}));

  // A damaged entry is rebuilt, not loaded.
  {
    std::fstream f(again.cache_path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(again.cache_path()) / 2));
    f.put('\x55').put('\xaa').put('\x55');
  }
  clear_kernel_memory_cache();
  Kernel rebuilt = compile(src);
  EXPECT_EQ(rebuilt.origin(), KernelOrigin::Compiled);
  launch(rebuilt, Dim3(1), Dim3(2), ty, tb, ta, 2.0f, 2L);
  EXPECT_EQ(ty.to_vector(), (std::vector<float>{5, 8}));
}

TEST_F(UserKernelCpu, GarbageBinariesThrow) {
  const auto spec = spec_of(source("add", kAdd));
  const auto bin = cpu.impl().build_kernel(spec);
  std::mt19937 rng(7);
  std::vector<std::uint8_t> noise(bin.bytes.size());
  for (auto& c : noise) c = static_cast<std::uint8_t>(rng());
  std::vector<std::vector<std::uint8_t>> bad{
      {},
      noise,
      std::vector<std::uint8_t>(bin.bytes.begin(), bin.bytes.begin() + bin.bytes.size() / 2),
      std::vector<std::uint8_t>(bin.bytes.begin(), bin.bytes.end() - 1),
  };
  // A damaged byte in the middle.
  bad.push_back(bin.bytes);
  bad.back()[bad.back().size() / 3] ^= 0x5a;
  // A truncated shared object with a valid seal: the ELF checks catch it
  // before the loader maps pages that are not there.
  std::vector<std::uint8_t> so(bin.bytes.begin(), bin.bytes.end() - 24);
  so.resize(so.size() / 2);
  bad.push_back(cpu::uk::seal(so));
  // Sealed noise with an ELF header in front.
  std::vector<std::uint8_t> fake(bin.bytes.begin(), bin.bytes.begin() + 64);
  fake.insert(fake.end(), noise.begin(), noise.begin() + 4096);
  bad.push_back(cpu::uk::seal(fake));
  for (std::size_t i = 0; i < bad.size(); ++i) {
    auto e = error_of([&] { cpu.impl().load_kernel(spec, bad[i]); });
    ASSERT_TRUE(e) << "case " << i;
    EXPECT_NE(std::string(e->what()).find("add"), std::string::npos) << e->what();
  }
}

TEST_F(UserKernelCpu, LaunchesTheDeviceCannotRunAreRefused) {
  auto k = compile(source("add", kAdd));
  std::vector<float> a(8);
  Tensor ta = floats(a), ty = cpu.zeros(Shape{8}, DType::F32);
  auto e = error_of([&] { launch(k, Dim3(1), Dim3(2048), ty, ta, ta, 1.0f, 8L); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(e->what()).find("1024"), std::string::npos) << e->what();
  e = error_of([&] { launch(k, Dim3(1), Dim3(512, 4), ty, ta, ta, 1.0f, 8L); });
  ASSERT_TRUE(e);
  e = error_of([&] { launch(k, Dim3(0xffffffffu, 0xffffffffu, 2), Dim3(1024), ty, ta, ta, 1.0f, 8L); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("2^63"), std::string::npos) << e->what();
  // Arguments the signature does not take, straight to the device's kernel
  // (the runtime checks them first; the backend does not rely on that).
  auto ki = compile_impl(source("add", kAdd));
  e = error_of([&] { launch_impl(*ki, Dim3(1), Dim3(8), Args{}.t(ty).t(ta).t(ta).v(1.0f)); });
  ASSERT_TRUE(e);
  e = error_of([&] { launch_impl(*ki, Dim3(1), Dim3(8), Args{}.t(ty).t(ta).t(ta).v(1.0f).v(8)); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("8 bytes"), std::string::npos) << e->what();
  e = error_of([&] { launch_impl(*ki, Dim3(1), Dim3(8), Args{}.t(ty).v(1.0f).t(ta).v(1.0f).v(8L)); });
  ASSERT_TRUE(e);
}

TEST_F(UserKernelCpu, OtherDialectsAndAMissingCompilerAreUnsupported) {
  KernelSource s = source("k", "__kernel void k(__global float* y) {}");
  s.dialect = KernelDialect::OpenCL;
  auto e = error_of([&] { compile(s); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), ErrorCode::Unsupported);

  const char* old = std::getenv("TORSH_CXX");
  const std::string saved = old ? old : "";
  setenv("TORSH_CXX", "/nonexistent/bin/c++", 1);
  e = error_of([&] { compile(source("add", kAdd)); });
  const std::string id = cpu.impl().kernel_compiler_id();
  if (old)
    setenv("TORSH_CXX", saved.c_str(), 1);
  else
    unsetenv("TORSH_CXX");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), ErrorCode::Unsupported);
  EXPECT_NE(std::string(e->what()).find("/nonexistent/bin/c++"), std::string::npos) << e->what();
  EXPECT_EQ(id.rfind("none", 0), 0u) << id;
}

TEST_F(UserKernelCpu, BarrierDetectionIgnoresCommentsAndStrings) {
  EXPECT_FALSE(cpu::uk::uses_barriers(
      spec_of(source("k", "/* BARRIER() */ // BARRIER()\nconst char* s = \"BARRIER()\"; int MY_BARRIER;"))));
  EXPECT_TRUE(cpu::uk::uses_barriers(spec_of(source("k", "void f() { BARRIER(); }"))));
  KernelSource viadefine = source("k", "void f() { SYNC; }");
  viadefine.defines = {{"SYNC", "BARRIER()"}};
  EXPECT_TRUE(cpu::uk::uses_barriers(spec_of(viadefine)));
}

TEST_F(UserKernelCpu, ABarrierTheSourceScanMissesIsAnErrorNotARace) {
  // Token pasting hides BARRIER from the scan, so the items run as a plain
  // loop; reaching the barrier with more than one item must then fail loudly.
  auto k = compile(source("hidden", R"(
#define CAT(a, b) a##b
KERNEL void hidden(GLOBAL float* y) {
  CAT(BARR, IER)();
  y[GLOBAL_ID(0)] = 1.0f;
}
)"));
  Tensor y = cpu.zeros(Shape{64}, DType::F32);
  auto e = error_of([&] { launch(k, Dim3(2), Dim3(32), y); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("BARRIER()"), std::string::npos) << e->what();
  // One-item groups need no other item to arrive: the barrier is a no-op.
  launch(k, Dim3(64), Dim3(1), y);
  EXPECT_EQ(y.to_vector(), std::vector<float>(64, 1.0f));
}

TEST_F(UserKernelCpu, ParameterTypesComeFromTheCompiledEntry) {
  auto k = compile(source("types", R"(
struct pair_t { int a; float b; };
KERNEL void types(GLOBAL uchar* a, GLOBAL const void* b, char c, ushort d, int e, uint f, ulong g, double h,
                  struct pair_t p, GLOBAL const double* q) {}
)"));
  const auto& p = k.params();
  ASSERT_EQ(p.size(), 10u);
  EXPECT_EQ(p[0].type, ParamType::U8);
  EXPECT_EQ(p[0].kind, KernelParam::Kind::Buffer);
  EXPECT_EQ(p[1].type, ParamType::Unknown);
  EXPECT_EQ(p[1].size, 0u);
  EXPECT_FALSE(p[1].writable);
  EXPECT_EQ(p[2].type, ParamType::I8);
  EXPECT_EQ(p[3].type, ParamType::U16);
  EXPECT_EQ(p[4].type, ParamType::I32);
  EXPECT_EQ(p[5].type, ParamType::U32);
  EXPECT_EQ(p[6].type, ParamType::U64);
  EXPECT_EQ(p[7].type, ParamType::F64);
  EXPECT_EQ(p[8].type, ParamType::Struct);
  EXPECT_EQ(p[8].size, 8u);
  EXPECT_EQ(p[8].kind, KernelParam::Kind::Value);
  EXPECT_EQ(p[9].type, ParamType::F64);
  EXPECT_EQ(p[9].size, 8u);

  // No parameters at all.
  Kernel none = compile(source("none", "KERNEL void none(void) {}"));
  EXPECT_TRUE(none.params().empty());
  launch(none, Dim3(3), Dim3(2));

  // The user's macros do not reach the trampoline's standard headers.
  auto macros = compile(source("macros", R"(
#define T float
#define _Tp oops
#define param p
#define signature s
#define it i
#define first 1
KERNEL void macros(GLOBAL T* y) { y[GLOBAL_ID(0)] = 1; }
)"));
  EXPECT_EQ(macros.params().size(), 1u);

  // References cannot be passed: the compiler says why.
  auto e = error_of([&] { compile(source("byref", "KERNEL void byref(float& x) {}")); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("not a reference"), std::string::npos) << e->what();
}

// Figures for the report: build vs load, launch overhead vs a built-in op,
// time per work-group with barriers. Run with --gtest_also_run_disabled_tests.
TEST_F(UserKernelCpu, DISABLED_Timings) {
  using clock = std::chrono::steady_clock;
  auto ms = [](clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  {
    const auto spec = spec_of(source("add", kAdd));
    auto t0 = clock::now();
    const auto bin = cpu.impl().build_kernel(spec);
    auto t1 = clock::now();
    auto k = cpu.impl().load_kernel(spec, bin.bytes);
    auto t2 = clock::now();
    std::printf("device: build %.1f ms, load from bytes %.3f ms, %zu bytes\n", ms(t1 - t0), ms(t2 - t1),
                bin.bytes.size());
  }
  KernelSource src = source("add", kAdd);
  src.defines = {{"TIMING_RUN", std::to_string(clock::now().time_since_epoch().count())}};  // never cached before
  Kernel k = compile(src);
  clear_kernel_memory_cache();
  Kernel from_disk = compile(src);
  Kernel from_memory = compile(src);
  std::printf("compile_kernel: compiled %.1f ms, disk cache %.3f ms, memory cache %.4f ms\n", k.build_ms(),
              from_disk.build_ms(), from_memory.build_ms());

  const long n = 1 << 20;
  std::vector<float> a(n, 1.0f), b(n, 2.0f);
  Tensor ta = floats(a), tb = floats(b), ty = cpu.zeros(Shape{n}, DType::F32);
  const int reps = 200;
  double kernel_ms = 0, op_ms = 0;
  for (int r = 0; r < reps + 10; ++r) {
    auto s0 = clock::now();
    launch(k, Dim3(n / 256), Dim3(256), ty, ta, tb, 1.0f, n);
    auto s1 = clock::now();
    Tensor y = ops::add(ta, tb);
    auto s2 = clock::now();
    if (r >= 10) kernel_ms += ms(s1 - s0), op_ms += ms(s2 - s1);
  }
  std::printf("1M f32 add: user kernel %.3f ms, ops::add %.3f ms (mean of %d, interleaved, %d threads)\n",
              kernel_ms / reps, op_ms / reps, reps, cpu.hints().threads);
  {
    Tensor small = cpu.zeros(Shape{1}, DType::F32), one = floats({1.0f});
    auto s0 = clock::now();
    for (int r = 0; r < 10000; ++r) launch(k, Dim3(1), Dim3(1), small, one, one, 1.0f, 1L);
    auto s1 = clock::now();
    Tensor y1;
    for (int r = 0; r < 10000; ++r) y1 = ops::add(one, one);
    auto s2 = clock::now();
    auto ki = compile_impl(source("add", kAdd));
    Args sa;
    sa.t(small).t(one).t(one).v(1.0f).v(1L);
    auto s3 = clock::now();
    for (int r = 0; r < 10000; ++r) launch_impl(*ki, Dim3(1), Dim3(1), sa);
    auto s4 = clock::now();
    std::printf("1-element launch: user kernel %.2f us (of which the device's launch %.2f us), ops::add %.2f us\n",
                ms(s1 - s0) * 1000 / 10000, ms(s4 - s3) * 1000 / 10000, ms(s2 - s1) * 1000 / 10000);
  }

  Kernel kb = compile(source("block_sum", kBlockSum));
  for (const std::uint32_t block : {64u, 256u, 1024u}) {
    const std::uint32_t groups = 4096;
    const long m = long(groups) * block;
    std::vector<float> x(m, 1.0f);
    Tensor tx = floats(x), sums = cpu.zeros(Shape{groups}, DType::F32);
    launch(kb, Dim3(groups), Dim3(block), sums, tx, m);
    auto s0 = clock::now();
    const int r = 5;
    for (int i = 0; i < r; ++i) launch(kb, Dim3(groups), Dim3(block), sums, tx, m);
    auto s1 = clock::now();
    const double per_group_us = ms(s1 - s0) * 1000 / r / groups;
    const double barriers = 1 + std::log2(double(block));
    std::printf("block_sum block %u: %.2f us per work-group (%u groups, %d threads), %.1f ns per item per barrier\n",
                block, per_group_us, groups, cpu.hints().threads, per_group_us * 1000 / (block * barriers));
  }
}

}  // namespace
