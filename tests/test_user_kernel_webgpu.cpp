// User kernels in WGSL on the WebGPU backend (lavapipe in CI), through
// Backend::compile_kernel and Stream::launch: the binding convention (argument
// i at @group(0) @binding(i); tensors as storage arrays, values as uniforms),
// parameter reflection, defines, launch geometry checks, tensors at offsets
// that are not binding-aligned, and the compile errors; build_kernel and
// load_kernel directly where the runtime's caches would hide them. Skips
// where no WebGPU adapter is available.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>

#include "device_test_util.hpp"
#include "torsh/backend/backend_impl.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
using torsh::test::error_of;
using torsh::test::has;

namespace {

class UserKernelWebGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::backend_available(BackendType::WebGpu))
      GTEST_SKIP() << "WebGPU backend unavailable: " << test::unavailable_reason(BackendType::WebGpu);
    dev = Backend::create(BackendType::WebGpu);
  }

  static KernelSource wgsl(std::string source, std::string entry,
                           std::vector<std::pair<std::string, std::string>> defines = {}) {
    KernelSource s;
    s.source = std::move(source);
    s.entry = std::move(entry);
    s.dialect = KernelDialect::Wgsl;
    s.defines = std::move(defines);
    return s;
  }
  rt::UserKernelSpec spec(const KernelSource& src) {
    rt::UserKernelSpec sp;
    sp.src = src;
    sp.src.name = src.entry;
    sp.label = "kernel '" + src.entry + "'";
    return sp;
  }
  Kernel build(const KernelSource& src) { return dev.compile_kernel(src); }
  template <class... A>
  void launch(const Kernel& k, Dim3 grid, Dim3 block, const A&... args) {
    dev.default_stream().launch(k, grid, block, args...);
  }
  Tensor f32(const std::vector<float>& v) {
    return dev.from_host(v.data(), Shape{static_cast<std::int64_t>(v.size())}, DType::F32);
  }

  Backend dev;
};

const char* kAxpy = R"(
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> a: f32;
@group(0) @binding(3) var<uniform> n: u32;

@compute @workgroup_size(64)
fn axpy(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < n) { y[id.x] = a * x[id.x] + y[id.x]; }
}
)";

}  // namespace

TEST_F(UserKernelWebGpu, DialectsAndCompilerId) {
  EXPECT_EQ(dev.impl().kernel_dialects(), std::vector<KernelDialect>{KernelDialect::Wgsl});
  const std::string id = dev.impl().kernel_compiler_id();
  EXPECT_TRUE(has(id, "wgpu-native ")) << id;
  EXPECT_TRUE(has(id, dev.info().name)) << id;
}

TEST_F(UserKernelWebGpu, ElementwiseWithUniformScalars) {
  auto k = build(wgsl(kAxpy, "axpy"));
  ASSERT_TRUE(k.params_known());
  const auto& p = k.params();
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].kind, KernelParam::Kind::Buffer);
  EXPECT_EQ(p[0].type, ParamType::F32);
  EXPECT_FALSE(p[0].writable);
  EXPECT_EQ(p[0].name, "x");
  EXPECT_TRUE(p[1].writable);
  EXPECT_EQ(p[2].kind, KernelParam::Kind::Value);
  EXPECT_EQ(p[2].type, ParamType::F32);
  EXPECT_EQ(p[2].size, 4u);
  EXPECT_EQ(p[3].type, ParamType::U32);

  const std::uint32_t n = 1000;
  std::vector<float> x(n), y(n);
  for (std::uint32_t i = 0; i < n; ++i) x[i] = 0.5f * i, y[i] = 1.f + i;
  // x and y from one pool segment: one buffer bound read-only and writable in one dispatch.
  Tensor tx = f32(x), ty = f32(y);
  launch(k, Dim3{(n + 63) / 64}, Dim3{64}, tx, ty, 2.f, n);
  const auto got = ty.to_vector();
  for (std::uint32_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 2.f * x[i] + y[i]) << i;
}

TEST_F(UserKernelWebGpu, WorkgroupReduction) {
  const char* src = R"(
@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read_write> sums: array<T>;
var<workgroup> part: array<T, WG>;

@compute @workgroup_size(WG, 1, 1)
fn block_sum(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) g: vec3<u32>) {
  part[li] = x[g.x * WG + li];
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (li < s) { part[li] = part[li] + part[li + s]; }
    workgroupBarrier();
  }
  if (li == 0u) { sums[g.x] = part[0]; }
}
)";
  // Defines: a constant (the work-group size) and a type (an alias).
  auto k = build(wgsl(src, "block_sum", {{"WG", "128u"}, {"T", "f32"}}));
  EXPECT_EQ(k.params()[0].type, ParamType::F32) << "the element type through the alias";
  const int groups = 37;
  std::vector<float> x(groups * 128);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) - 8.f;
  Tensor tx = f32(x), out = dev.zeros(Shape{groups}, DType::F32);
  launch(k, Dim3{groups}, Dim3{128}, tx, out);
  const auto got = out.to_vector();
  for (int g = 0; g < groups; ++g)
    ASSERT_EQ(got[g], std::accumulate(x.begin() + g * 128, x.begin() + (g + 1) * 128, 0.f)) << g;
  // The work-group size comes from the define: another block is refused with both values.
  const Error e = error_of([&] { launch(k, Dim3{groups}, Dim3{64}, tx, out); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(has(e.what(), "(64, 1, 1)") && has(e.what(), "(128, 1, 1)")) << e.what();
}

// Workgroup arrays past the device's maxComputeWorkgroupStorageSize are
// refused when the kernel is made, naming both sizes (wgpu-native let such a
// module through and lavapipe ran it); the WG-sized array above fits.
TEST_F(UserKernelWebGpu, WorkgroupMemoryBeyondTheDeviceIsRefusedWithTheLimit) {
  const char* src = R"(
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
var<workgroup> buf: array<vec4<f32>, 65536>;
var<workgroup> flag: u32;

@compute @workgroup_size(64)
fn big(@builtin(local_invocation_index) li: u32) {
  buf[li] = vec4<f32>(1.0);
  flag = 1u;
  workgroupBarrier();
  y[li] = buf[li].x;
}
)";
  const Error e = error_of([&] { build(wgsl(src, "big", {})); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  // 65536 vec4<f32> and one u32 rounded up to 16 bytes.
  EXPECT_TRUE(has(e.what(), "1048592 bytes") && has(e.what(), "maxComputeWorkgroupStorageSize")) << e.what();
  EXPECT_TRUE(has(e.what(), "more than ")) << e.what();
}

TEST_F(UserKernelWebGpu, StructUniform) {
  // WGSL's uniform layout: v (a vec3) is aligned to 16, so n lands at 28 and the struct is 32 bytes.
  const char* src = R"(
struct Params {
  scale: f32,
  v: vec3<f32>,
  n: u32,
}
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<uniform> p: Params;

@compute @workgroup_size(32)
fn affine(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < p.n) { out[id.x] = p.scale * f32(id.x) + p.v[id.x % 3u]; }
}
)";
  auto k = build(wgsl(src, "affine"));
  ASSERT_EQ(k.params().size(), 2u);
  EXPECT_EQ(k.params()[1].kind, KernelParam::Kind::Value);
  EXPECT_EQ(k.params()[1].type, ParamType::Struct);
  EXPECT_EQ(k.params()[1].size, 32u);
  struct {
    float scale;
    float pad[3];
    float v[3];
    std::uint32_t n;
  } p{3.f, {}, {10.f, 20.f, 30.f}, 100};
  static_assert(sizeof p == 32);
  Tensor out = dev.zeros(Shape{128}, DType::F32);
  launch(k, Dim3{4}, Dim3{32}, out, KernelArg::pod(p));
  const auto got = out.to_vector();
  for (int i = 0; i < 128; ++i) ASSERT_EQ(got[i], i < 100 ? 3.f * i + p.v[i % 3] : 0.f) << i;
}

TEST_F(UserKernelWebGpu, TwoDimensionalGrid) {
  const char* src = R"(
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> size: vec2<u32>;

@compute @workgroup_size(8, 4)
fn coords(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < size.x && id.y < size.y) { out[id.y * size.x + id.x] = id.y * 1000u + id.x; }
}
)";
  auto k = build(wgsl(src, "coords"));
  EXPECT_EQ(k.params()[0].type, ParamType::U32);
  EXPECT_EQ(k.params()[1].size, 8u);
  const std::uint32_t w = 45, h = 19;
  Tensor out = dev.zeros(Shape{h, w}, DType::I32);
  const std::uint32_t size[2] = {w, h};
  launch(k, Dim3{(w + 7) / 8, (h + 3) / 4}, Dim3{8, 4}, out, KernelArg::bytes(size, sizeof size));
  const auto got = out.to_host<std::uint32_t>();
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) ASSERT_EQ(got[y * w + x], y * 1000 + x) << x << "," << y;
}

TEST_F(UserKernelWebGpu, TensorsAtOffsets) {
  const char* src = R"(
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;
@compute @workgroup_size(64)
fn twice(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < n) { y[id.x] = 2.0 * x[id.x] + 1.0; }
}
)";
  auto k = build(wgsl(src, "twice"));
  std::vector<float> a(1000), b(1000, -1.f);
  std::iota(a.begin(), a.end(), 0.f);
  Tensor ta = f32(a), tb = f32(b);
  // Element offsets 3 (12 bytes: staged), 64 (256 bytes: bound in place) and 7 (staged, written back).
  const std::uint32_t n = 500;
  launch(k, Dim3{8}, Dim3{64}, ta.slice(0, 3, 503), tb.slice(0, 64, 564), n);
  launch(k, Dim3{8}, Dim3{64}, ta.slice(0, 100, 600), tb.slice(0, 7, 57), 50);
  std::vector<float> want = b;
  for (int i = 0; i < 500; ++i) want[64 + i] = 2.f * a[3 + i] + 1.f;
  for (int i = 0; i < 50; ++i) want[7 + i] = 2.f * a[100 + i] + 1.f;
  EXPECT_EQ(tb.to_vector(), want);
  EXPECT_EQ(ta.to_vector(), a) << "the read-only input is untouched";
  // A strided view: its elements are bound from the first to the last, the gaps copied back unchanged.
  Tensor m = dev.zeros(Shape{10, 10}, DType::F32);
  launch(k, Dim3{1}, Dim3{64}, ta.slice(0, 0, 10), m.slice(0, 1, 10).slice(1, 1, 2), 1);
  std::vector<float> wm(100, 0.f);
  wm[11] = 1.f;  // only element 0 of the view (row 1, column 1) was written
  EXPECT_EQ(m.to_vector(), wm);
  // One view given twice (in place): one staged copy, read and written back once.
  Tensor c = f32(a);
  launch(k, Dim3{1}, Dim3{64}, c.slice(0, 5, 45), c.slice(0, 5, 45), 40);
  std::vector<float> wc = a;
  for (int i = 5; i < 45; ++i) wc[i] = 2.f * a[i] + 1.f;
  EXPECT_EQ(c.to_vector(), wc);
  // A staged writable view overlapping another argument is refused: the copy back would undo its writes.
  const Error e = error_of([&] { launch(k, Dim3{1}, Dim3{64}, tb.slice(0, 5, 50), tb.slice(0, 3, 40), 1); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(has(e.what(), "overlap")) << e.what();
}

TEST_F(UserKernelWebGpu, HalfWordViewsAreStagedInWholeWords) {
  // A 2-byte view starting mid-word: its staged copy begins at its first element and is
  // bound in whole words. Through the backend, as raw words (the runtime binds f16 tensors
  // to array<f16> only, which needs shader-f16).
  const char* src = R"(
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(4)
fn words(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < arrayLength(&x)) { y[id.x] = x[id.x]; }
}
)";
  const rt::UserKernelSpec sp = spec(wgsl(src, "words"));
  auto k = dev.impl().load_kernel(sp, dev.impl().build_kernel(sp).bytes);
  std::vector<std::uint16_t> bits(10);
  for (int i = 0; i < 10; ++i) bits[i] = static_cast<std::uint16_t>(0x100 + i);
  Tensor x = dev.from_host(bits.data(), Shape{10}, DType::F16), y = dev.zeros(Shape{4}, DType::I32);
  const rt::TensorArg tx = x.slice(0, 1, 7).arg(), ty = y.arg();  // bytes 2 .. 14: three words
  const rt::LaunchArg la[] = {{&tx, false, nullptr, 0}, {&ty, true, nullptr, 0}};
  k->launch(dev.default_stream().impl(), Dim3{1}, Dim3{4}, la);
  const auto got = y.to_host<std::uint32_t>();
  for (int w = 0; w < 3; ++w) EXPECT_EQ(got[w], bits[1 + 2 * w] | std::uint32_t(bits[2 + 2 * w]) << 16) << w;
  EXPECT_EQ(got[3], 0u) << "arrayLength saw three words";
}

TEST_F(UserKernelWebGpu, BindingsSmallerThanTheShaderNeedsAreRefused) {
  // WebGPU checks these when the dispatch's command buffer is finished (wgpu-native would abort
  // on submitting it): refused with WebGPU's reason, and the device goes on working.
  const char* src = R"(
struct Item { a: vec4<f32>, b: vec4<f32> }
@group(0) @binding(0) var<storage, read> items: array<Item>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(1)
fn first(@builtin(global_invocation_id) id: vec3<u32>) { y[0] = items[0].b.w; }
)";
  Kernel k = build(wgsl(src, "first"));
  Tensor small = f32({1, 2, 3, 4}), y = dev.zeros(Shape{1}, DType::F32);
  const Error e = error_of([&] { launch(k, 1, 1, small, y); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(has(e.what(), "first") && has(e.what(), "refused")) << e.what();
  std::vector<float> eight(8);
  std::iota(eight.begin(), eight.end(), 1.f);
  Tensor big = f32(eight);
  launch(k, 1, 1, big, y);
  EXPECT_EQ(y.to_vector(), std::vector<float>{8.f});
  // Smaller again after a launch that passed: validated again, refused again.
  EXPECT_EQ(error_of([&] { launch(k, 1, 1, small, y); }).code(), ErrorCode::InvalidArgument);
  launch(k, 1, 1, big.slice(0, 0, 8), y);
  dev.synchronize();
  EXPECT_EQ(y.to_vector(), std::vector<float>{8.f});
}

TEST_F(UserKernelWebGpu, CompileErrorNamesTheUsersLine) {
  const char* src =
      "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"  // line 1
      "\n"
      "@compute @workgroup_size(64)\n"
      "fn broken(@builtin(global_invocation_id) id: vec3<u32>) {\n"
      "  y[id.x] = undefined_thing * SCALE;\n"  // line 5
      "}\n";
  const Error e = error_of([&] { build(wgsl(src, "broken", {{"SCALE", "2.0"}, {"OTHER", "3"}})); });
  EXPECT_EQ(e.code(), ErrorCode::KernelCompile);
  const std::string msg = e.what();
  EXPECT_TRUE(has(msg, "undefined_thing")) << msg;
  EXPECT_TRUE(has(msg, "<broken>:5:")) << msg;
  EXPECT_FALSE(has(msg, ":7:")) << "the two define lines are not counted: " << msg;
  EXPECT_TRUE(has(msg, "broken")) << msg;
  EXPECT_TRUE(has(msg, dev.info().name)) << "the device: " << msg;
  // A bad define is named as such, not as a line of the module.
  const Error d = error_of([&] { build(wgsl(src, "broken", {{"SCALE", "2.0 +"}})); });
  EXPECT_EQ(d.code(), ErrorCode::KernelCompile);
  EXPECT_TRUE(has(d.what(), "define 'SCALE'")) << d.what();
}

TEST_F(UserKernelWebGpu, ReadOnlyBindingsStayReadOnly) {
  // The pipeline binds every tensor read-write (tensors share pool buffers); the module as
  // written is still checked, so a store to a `read` binding does not compile.
  const char* src =
      "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
      "@compute @workgroup_size(1) fn main() { x[0] = 1.0; }\n";
  const Error e = error_of([&] { build(wgsl(src, "main")); });
  EXPECT_EQ(e.code(), ErrorCode::KernelCompile);
  EXPECT_TRUE(has(e.what(), "<main>:2:")) << e.what();
  // Defines that are not declarations are refused before compiling.
  const Error d = error_of([&] { build(wgsl(kAxpy, "axpy", {{"N; fn f() {}", "1"}})); });
  EXPECT_EQ(d.code(), ErrorCode::InvalidArgument);
}

TEST_F(UserKernelWebGpu, WrongEntryListsTheEntryPoints) {
  const Error e = error_of([&] { build(wgsl(kAxpy, "saxpy")); });
  EXPECT_EQ(e.code(), ErrorCode::KernelCompile);
  EXPECT_TRUE(has(e.what(), "'saxpy'") && has(e.what(), "axpy")) << e.what();
}

TEST_F(UserKernelWebGpu, LaunchGeometryIsChecked) {
  Kernel k = build(wgsl(kAxpy, "axpy"));
  Tensor x = dev.zeros(Shape{64}, DType::F32), y = dev.zeros(Shape{64}, DType::F32);
  Error e = error_of([&] { launch(k, Dim3{1}, Dim3{128}, x, y, 1.f, 64); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(has(e.what(), "(128, 1, 1)") && has(e.what(), "(64, 1, 1)")) << e.what();
  EXPECT_TRUE(has(e.what(), "axpy")) << "the kernel is named: " << e.what();
  const std::uint32_t max_groups = 65535;  // WebGPU's default; lavapipe reports it
  e = error_of([&] { launch(k, Dim3{max_groups + 1}, Dim3{64}, x, y, 1.f, 64); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(has(e.what(), "maxComputeWorkgroupsPerDimension") && has(e.what(), std::to_string(max_groups + 1)))
      << e.what();
  e = error_of([&] { launch(k, Dim3{1, 1, max_groups + 1}, Dim3{64}, x, y, 1.f, 64); });
  EXPECT_TRUE(has(e.what(), "z = 65536")) << e.what();
  // Values whose bytes do not match the uniform (the backend checks too, under the runtime's checks).
  const rt::UserKernelSpec sp = spec(wgsl(kAxpy, "axpy"));
  auto impl = dev.impl().load_kernel(sp, dev.impl().build_kernel(sp).bytes);
  const rt::TensorArg tx = x.arg(), ty = y.arg();
  const double wide = 1.0;
  const std::uint32_t n = 64;
  const rt::LaunchArg la[] = {
      {&tx, false, nullptr, 0}, {&ty, true, nullptr, 0}, {nullptr, true, &wide, 8}, {nullptr, true, &n, 4}};
  e = error_of([&] { impl->launch(dev.default_stream().impl(), Dim3{1}, Dim3{64}, la); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(has(e.what(), "8 bytes") && has(e.what(), "'a'")) << e.what();
  e = error_of([&] { impl->launch(dev.default_stream().impl(), Dim3{1}, Dim3{64}, std::span(la, 3)); });
  EXPECT_TRUE(has(e.what(), "3 arguments")) << e.what();
  // Nothing was dispatched by the refused launches.
  EXPECT_EQ(y.to_vector(), std::vector<float>(64, 0.f));
}

TEST_F(UserKernelWebGpu, BindingsOutsideTheConventionAreRefused) {
  const auto refused = [&](const char* src, const char* why) {
    const Error e = error_of([&] { build(wgsl(src, "main")); });
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
    EXPECT_TRUE(has(e.what(), why)) << e.what();
  };
  refused(
      "@group(1) @binding(0) var<storage, read_write> y: array<f32>;\n"
      "@compute @workgroup_size(1) fn main() { y[0] = 1.0; }\n",
      "group 0");
  refused(
      "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
      "@group(0) @binding(2) var<storage, read_write> z: array<f32>;\n"
      "@compute @workgroup_size(1) fn main() { y[0] = z[0]; }\n",
      "binding 1 is missing");
  KernelSource s = wgsl(kAxpy, "axpy");
  s.options = {"-O3"};
  const Error e = error_of([&] { build(s); });
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(has(e.what(), "-O3")) << e.what();
}

TEST_F(UserKernelWebGpu, ReflectsElementTypesAndAtomics) {
  const char* src = R"(
/* a block comment with @group(0) @binding(9) var<uniform> nope: f32; */
const N = 4;
alias Pair = vec2<f32>;
struct Item { a: Pair, b: array<vec4<f32>, N>, @size(16) c: u32 }
@group(0) @binding(0) var<storage, read_write> hist: array<atomic<u32>>;
@group(0) @binding(1) var<storage> items: array<Item>;  // read by default
@group(0) @binding(2) var<uniform> item: Item;
@group(0) @binding(3) var<storage, read> v: array<vec4<i32>>;
@group(0) @binding(4) var<uniform> m: mat3x3<f32>;
@compute @workgroup_size(N * 16, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  atomicAdd(&hist[u32(v[0].x) % 4u], u32(items[0].c + item.c) + u32(m[0][0]));
}
)";
  auto k = build(wgsl(src, "main"));
  const auto& p = k.params();
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[0].type, ParamType::U32);
  EXPECT_TRUE(p[0].writable);
  EXPECT_EQ(p[1].type, ParamType::Unknown);
  EXPECT_FALSE(p[1].writable);
  EXPECT_EQ(p[2].size, 96u);  // a: 8, b at 16: 64, c at 80: @size(16) -> 96
  EXPECT_EQ(p[3].type, ParamType::I32);
  EXPECT_EQ(p[4].size, 48u);  // three columns of 16
  // @workgroup_size(N * 16, 1) is 64 from the module's const.
  Tensor hist = dev.zeros(Shape{4}, DType::I32);
  Tensor items = dev.zeros(Shape{24}, DType::F32), v = dev.zeros(Shape{4}, DType::I32);
  std::vector<unsigned char> item(96, 0);
  const std::uint32_t c = 2;
  std::memcpy(item.data() + 80, &c, 4);
  std::vector<float> m(12, 0.f);
  m[0] = 1.f;
  launch(k, Dim3{2}, Dim3{64}, hist, items, KernelArg::bytes(item.data(), item.size()), v,
         KernelArg::bytes(m.data(), 48));
  EXPECT_EQ(hist.to_host<std::uint32_t>(), (std::vector<std::uint32_t>{128 * 3, 0, 0, 0}));
  EXPECT_EQ(error_of([&] {
              launch(k, Dim3{2}, Dim3{32}, hist, items, KernelArg::bytes(item.data(), item.size()), v,
                     KernelArg::bytes(m.data(), 48));
            }).code(),
            ErrorCode::InvalidArgument);
}

TEST_F(UserKernelWebGpu, ProfilerGraphsAndThreads) {
  const char* src = R"(
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;
@compute @workgroup_size(64)
fn twice(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < n) { y[id.x] = 2.0 * x[id.x]; }
}
)";
  KernelSource ks = wgsl(src, "twice");
  ks.name = "twice_wgsl";
  Kernel k = build(ks);
  Tensor x = f32({1, 2, 3}), y = dev.zeros(Shape{3}, DType::F32);
  Stream s = dev.default_stream();
  profiler::start();
  s.launch(k, 1, 64, y, x, 3);
  profiler::stop();
  bool seen = false;
  for (const auto& r : profiler::records())
    seen = seen || (r.name == "twice_wgsl" && r.device == dev.device().to_string());
  EXPECT_TRUE(seen) << profiler::table();
  // Captured with a built-in op after it, replayed on new input.
  Graph g;
  Tensor z;
  {
    GraphCapture cap(dev);
    s.launch(k, 1, 64, y, x, 3);
    z = ops::add(y, x);
    g = cap.end();
  }
  x.copy_from_host(std::vector<float>{10, 20, 30}.data(), 12);
  g.replay();
  EXPECT_EQ(y.to_vector(), (std::vector<float>{20, 40, 60}));
  EXPECT_EQ(z.to_vector(), (std::vector<float>{30, 60, 90}));
  // Compiles and launches from several threads at once, each on its own tensors and slices.
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        KernelSource mine = wgsl(src, "twice", {{"THREAD", std::to_string(t)}});
        Kernel kt = dev.compile_kernel(mine);
        std::vector<float> in(300);
        for (int i = 0; i < 300; ++i) in[i] = float(t * 1000 + i);
        Tensor xt = f32(in), yt = dev.zeros(Shape{300}, DType::F32);
        for (int rep = 0; rep < 20; ++rep)
          dev.default_stream().launch(kt, 5, 64, yt.slice(0, 1, 300), xt.slice(0, 3, 300), 297);
        const auto got = yt.to_vector();
        for (int i = 0; i < 297; ++i) bad[t] += got[1 + i] != 2.f * in[3 + i];
        bad[t] += got[0] != 0.f || got[298] != 0.f;
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        bad[t] = -1;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad, std::vector<int>(4, 0));
}

TEST_F(UserKernelWebGpu, GarbageBytesDoNotLoad) {
  const rt::UserKernelSpec sp = spec(wgsl(kAxpy, "axpy"));
  const std::vector<std::uint8_t> junk{0xff, 0xfe, 0x00, 0x12, 0x80};
  EXPECT_EQ(error_of([&] { dev.impl().load_kernel(sp, junk); }).code(), ErrorCode::KernelCompile);
  const std::string text = "this is not WGSL {";
  const std::vector<std::uint8_t> words(text.begin(), text.end());
  EXPECT_EQ(error_of([&] { dev.impl().load_kernel(sp, words); }).code(), ErrorCode::KernelCompile);
  // The module's text reloads (another process would take this path).
  const rt::KernelBinary bin = dev.impl().build_kernel(sp);
  EXPECT_FALSE(bin.cacheable);
  auto k1 = dev.impl().load_kernel(sp, bin.bytes);
  auto k2 = dev.impl().load_kernel(sp, bin.bytes);  // compiled again: the first load took the built pipeline
  EXPECT_EQ(k2->params().size(), 4u);
}

// Figures for the report: build time, and launch cost against the built-in add on 1M f32.
TEST_F(UserKernelWebGpu, Figures) {
  using clock = std::chrono::steady_clock;
  const auto ms = [](clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const char* src = R"(
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> n: u32;
@compute @workgroup_size(256)
fn add(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < n) { c[id.x] = a[id.x] + b[id.x]; }
}
const unused_salt = SALT;
)";
  // The first build (parse, validate, pipeline) and a load of the same text (as another process
  // would), through the backend; then compile_kernel's memory cache.
  double build_ms = 1e9, load_ms = 1e9, compile_ms = 1e9;
  for (int rep = 0; rep < 3; ++rep) {
    const std::string salt = std::to_string(rep) + "u + " +
                             std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000) +
                             "u";
    KernelSource s = wgsl(src, "add", {{"SALT", salt}});  // a text no earlier build saw
    const rt::UserKernelSpec sp = spec(s);
    auto t0 = clock::now();
    const rt::KernelBinary bin = dev.impl().build_kernel(sp);
    auto k1 = dev.impl().load_kernel(sp, bin.bytes);  // takes the pipeline build_kernel made
    auto t1 = clock::now();
    auto k2 = dev.impl().load_kernel(sp, bin.bytes);  // from the text alone
    auto t2 = clock::now();
    build_ms = std::min(build_ms, ms(t1 - t0));
    load_ms = std::min(load_ms, ms(t2 - t1));
    s.defines[0].second += " + 1u";
    compile_ms = std::min(compile_ms, build(s).build_ms());
  }
  KernelSource add_src = wgsl(src, "add", {{"SALT", "0u"}});
  Kernel k = build(add_src);
  const auto hit0 = clock::now();
  for (int i = 0; i < 100; ++i) build(add_src);
  const double hit_us = ms(clock::now() - hit0) * 10;
  // The first dispatch of a new pipeline, against the next ones (drivers may compile late).
  double first_ms = 0, next_ms = 0;
  {
    Tensor a1 = dev.zeros(Shape{256}, DType::F32), c1 = dev.zeros(Shape{256}, DType::F32);
    KernelSource s = wgsl(src, "add", {{"SALT", "99u"}});
    auto t0 = clock::now();
    Kernel kf = build(s);
    launch(kf, Dim3{1}, Dim3{256}, a1, a1, c1, 256);
    dev.synchronize();
    auto t1 = clock::now();
    launch(kf, Dim3{1}, Dim3{256}, a1, a1, c1, 256);
    dev.synchronize();
    auto t2 = clock::now();
    first_ms = ms(t1 - t0);
    next_ms = ms(t2 - t1);
  }
  std::printf(
      "[figures] %s\n[figures] build (module + pipeline): %.2f ms; load from the text: %.2f ms; "
      "compile_kernel: %.2f ms, memory-cache hit %.1f us; build + first 256-item launch + sync: %.2f ms, "
      "the next launch + sync: %.2f ms\n",
      dev.impl().kernel_compiler_id().c_str(), build_ms, load_ms, compile_ms, hit_us, first_ms, next_ms);
  // Launches against the built-in add into the same preallocated output, interleaved.
  for (const std::uint32_t n : {64u, 1u << 20}) {
    std::vector<float> h(n, 1.f);
    Tensor a = dev.from_host(h.data(), Shape{n}, DType::F32), b = dev.from_host(h.data(), Shape{n}, DType::F32);
    Tensor c = dev.zeros(Shape{n}, DType::F32), r = dev.zeros(Shape{n}, DType::F32);
    const Dim3 groups{(n + 255) / 256};
    launch(k, groups, Dim3{256}, a, b, c, n);
    ops::binary_out(rt::BinaryOp::Add, a, b, r);
    dev.synchronize();
    const int rounds = n == 64 ? 20 : 5, per = n == 64 ? 200 : 20;
    double user_enqueue = 0, user_total = 0, add_enqueue = 0, add_total = 0;
    for (int round = 0; round < rounds; ++round) {
      auto t0 = clock::now();
      for (int i = 0; i < per; ++i) launch(k, groups, Dim3{256}, a, b, c, n);
      auto t1 = clock::now();
      dev.synchronize();
      auto t2 = clock::now();
      for (int i = 0; i < per; ++i) ops::binary_out(rt::BinaryOp::Add, a, b, r);
      auto t3 = clock::now();
      dev.synchronize();
      auto t4 = clock::now();
      user_enqueue += ms(t1 - t0);
      user_total += ms(t2 - t0);
      add_enqueue += ms(t3 - t2);
      add_total += ms(t4 - t2);
    }
    const double count = rounds * per;
    EXPECT_EQ(c.to_vector()[n - 1], 2.f);
    EXPECT_EQ(r.to_vector()[n - 1], 2.f);
    std::printf(
        "[figures] f32 add of %u, %d launches in %d interleaved rounds: user kernel %.1f us enqueue / %.1f us "
        "each with the device's work; ops::binary_out add %.1f us / %.1f us\n",
        n, static_cast<int>(count), rounds, 1e3 * user_enqueue / count, 1e3 * user_total / count,
        1e3 * add_enqueue / count, 1e3 * add_total / count);
  }
}
