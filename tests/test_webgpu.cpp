// The WebGPU plugin on whatever adapter wgpu-native finds (Mesa's lavapipe in
// CI): device facts and limits, memory at any byte offset (WebGPU moves whole
// 4-byte words), streams and events (timestamp queries where the adapter has
// them), and the error paths. Whether its ops match the CPU backend is
// test_backend_ops's job. Every test skips, with the registry's reason, where
// no WebGPU adapter is available.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "backends/webgpu/compile_api.h"
#include "device_test_util.hpp"
#include "torsh/torsh.hpp"
#include "torsh/webgpu_plugin_config.h"

using namespace torsh;
using torsh::test::backend_available;
using torsh::test::error_code_of;
using torsh::test::rand_vec;
using torsh::test::unavailable_reason;

namespace {

class WebGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto av = Backend::available();
    if (std::find(av.begin(), av.end(), BackendType::WebGpu) == av.end())
      GTEST_SKIP() << "WebGPU backend unavailable: " << unavailable_reason(BackendType::WebGpu);
    dev = Backend::create(BackendType::WebGpu);
    cpu = Backend::create(BackendType::Cpu);
  }
  Backend dev, cpu;
};

}  // namespace

TEST(WebGpuRegistry, BuiltPluginLoadsOrSaysWhy) {
  const std::string why = unavailable_reason(BackendType::WebGpu);
  if (!TORSH_WEBGPU_PLUGIN_BUILT) {
    EXPECT_NE(why.find("not built"), std::string::npos) << why;
    return;
  }
  // Built: either an adapter opened, or the reason names what is missing.
  if (!why.empty()) {
    EXPECT_TRUE(why.find("adapter") != std::string::npos || why.find("wgpu") != std::string::npos) << why;
  }
}

TEST_F(WebGpu, DeviceFactsAndLimits) {
  const DeviceInfo& info = dev.info();
  EXPECT_FALSE(info.name.empty());
  EXPECT_EQ(info.compute_capability.rfind("WebGPU on ", 0), 0u) << info.compute_capability;
  const auto has = [&](const char* prefix) {
    return std::any_of(info.features.begin(), info.features.end(),
                       [&](const std::string& f) { return f.rfind(prefix, 0) == 0; });
  };
  EXPECT_TRUE(has("max buffer ")) << "limits are listed among the features";
  EXPECT_TRUE(has("max storage binding "));
  const Capabilities caps = dev.capabilities();
  EXPECT_FALSE(caps.f64) << "WGSL has no doubles";
  EXPECT_TRUE(caps.runtime_kernels);
  EXPECT_GT(caps.max_allocation, 0u);
  // A CPU adapter (lavapipe) is a software device: usable by name, never auto-selected.
  if (info.name.find("llvmpipe") != std::string::npos) {
    EXPECT_TRUE(info.software);
    EXPECT_NE(Backend::create(BackendType::Auto).type(), BackendType::WebGpu);
  }
  // What the kernels take, per dtype, and what they do not.
  EXPECT_TRUE(dev.supports(rt::OpKind::Matmul, DType::F16));
  EXPECT_FALSE(dev.supports(rt::OpKind::Matmul, DType::F64));
  EXPECT_TRUE(dev.supports(rt::OpKind::Cast, DType::I64));
}

TEST_F(WebGpu, ManySmallOpsStayBounded) {
  // Work is submitted in batches and the queue kept a few submissions deep.
  Tensor x = dev.zeros(Shape{16}, DType::F32);
  const std::vector<float> ones(16, 1.f);
  Tensor one = dev.from_host(ones.data(), Shape{16}, DType::F32);
  for (int i = 0; i < 2000; ++i) x = ops::add(x, one);
  EXPECT_EQ(x.to_vector(), std::vector<float>(16, 2000.f));
}

TEST_F(WebGpu, AllocationsPastMaxBufferSizeNameIt) {
  const std::size_t live_before = dev.memory_stats().live_bytes;
  const std::uint64_t max_buffer = dev.capabilities().max_allocation;
  try {
    dev.allocate(max_buffer + 1);
    ADD_FAILURE() << "allocated more than maxBufferSize";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory);
    EXPECT_NE(std::string(e.what()).find("maxBufferSize"), std::string::npos) << e.what();
  }
  EXPECT_EQ(dev.memory_stats().live_bytes, live_before) << "failed allocations must not be counted";
  const float one = 1.f, two = 2.f;
  EXPECT_EQ(ops::add(dev.from_host(&one, Shape{1}, DType::F32), dev.from_host(&two, Shape{1}, DType::F32)).to_vector(),
            std::vector<float>{3});
}

TEST_F(WebGpu, F64FallsBackToTheCpuAndSaysSo) {
  // WGSL has no doubles: an f64 op runs on the CPU, counted, with the right answer.
  const std::vector<double> v = {1.5, -2.25, 3.0};
  Tensor a = dev.from_host(v.data(), Shape{3}, DType::F64);
  ops::reset_fallback_stats();
  Tensor b = ops::add(a, a);
  EXPECT_EQ(ops::fallback_stats().ops, 1u);
  EXPECT_EQ(b.to_host<double>(), (std::vector<double>{3.0, -4.5, 6.0}));
}

TEST_F(WebGpu, ReductionsPastTheDevicesLoopLimitAreExact) {
  // llvmpipe stops every shader loop after 65535 iterations without a word:
  // dot products of 70000 terms came back as 65535 (and tiled ones with
  // tiles unwritten). The ops whose invocations loop over k run such lengths
  // on the CPU there; on a GPU they run here. Either way the sums are exact.
  const std::int64_t k = 70000;
  const std::vector<float> ones(static_cast<std::size_t>(64 * k), 1.0f);
  for (const std::int64_t m : {std::int64_t{1}, std::int64_t{64}}) {
    const Tensor a = dev.from_host(ones.data(), Shape{m, k}, DType::F32);
    const Tensor b = dev.from_host(ones.data(), Shape{k, m}, DType::F32);
    for (float v : ops::matmul(a, b).to_vector()) ASSERT_EQ(v, 70000.0f) << "m = n = " << m;
  }
  const std::vector<std::uint8_t> bytes(static_cast<std::size_t>(8 * k), 1);
  const Tensor a8 = dev.from_host(bytes.data(), Shape{8, k}, DType::U8);
  const Tensor b8 = dev.from_host(bytes.data(), Shape{k, 8}, DType::U8);
  for (float v : ops::matmul_integer(a8, b8).to_vector()) ASSERT_EQ(v, 70000.0f);
}

TEST_F(WebGpu, LongRowsWindowsAndSequencesPastTheLoopBudgetAreRight) {
  // The budget is per invocation, all loops together: on llvmpipe a sum of
  // 8.4M values lost half of them, softmax and the norms left the tail of a
  // 3M row zero, a 256 x 256 pooling window missed its corner, attention over
  // 28000 keys missed the last. These now run on the CPU there.
  const std::int64_t n = 8'400'000;
  std::vector<float> ones(static_cast<std::size_t>(n), 1.0f);
  EXPECT_EQ(ops::sum(dev.from_host(ones.data(), Shape{n}, DType::F32)).to_vector()[0], static_cast<float>(n));
  ones.back() = 5.0f;
  EXPECT_EQ(ops::argmax(dev.from_host(ones.data(), Shape{n}, DType::F32), 0).to_host<std::int64_t>()[0], n - 1);
  const std::int64_t row = 3'000'000;
  ones[static_cast<std::size_t>(row - 1)] = 5.0f;
  const Tensor x = dev.from_host(ones.data(), Shape{1, row}, DType::F32);
  const std::vector<float> sm = ops::softmax(x).to_vector();
  EXPECT_GT(sm.back(), 0.0f);
  const std::vector<float> rn = ops::rms_norm(x).to_vector();
  EXPECT_GT(rn.back(), 1.0f);  // the 5 among ones
  std::vector<float> img(256 * 256, 0.5f);
  img.back() = 7.0f;
  ops::Pool2dParams window;
  window.kernel_h = window.kernel_w = 256;
  EXPECT_EQ(ops::max_pool2d(dev.from_host(img.data(), Shape{1, 1, 256, 256}, DType::F32), window).to_vector(),
            (std::vector<float>{7.0f}));
  const std::int64_t keys = 28000, d = 64;
  std::vector<float> q(d, 0.1f), k(static_cast<std::size_t>(keys * d), 0.0f),
      v(static_cast<std::size_t>(keys * d), 0.0f);
  for (std::int64_t i = 0; i < d; ++i)
    k[static_cast<std::size_t>((keys - 1) * d + i)] = 40.0f, v[static_cast<std::size_t>((keys - 1) * d + i)] = 50.0f;
  const Tensor out = ops::attention(dev.from_host(q.data(), Shape{1, 1, 1, d}, DType::F32),
                                    dev.from_host(k.data(), Shape{1, 1, keys, d}, DType::F32),
                                    dev.from_host(v.data(), Shape{1, 1, keys, d}, DType::F32));
  EXPECT_NEAR(out.to_vector()[0], 50.0f, 0.5f);
}

TEST_F(WebGpu, CompileErrorsNameLineAndColumn) {
  std::string plugin;
  for (const auto& st : backend_statuses())
    if (st.type == BackendType::WebGpu) plugin = st.source;
  void* h = dlopen(plugin.c_str(), RTLD_NOW | RTLD_NOLOAD);  // the registry's; this only finds it
  ASSERT_NE(h, nullptr) << plugin << ": " << dlerror();
  auto compile = reinterpret_cast<torsh_webgpu_compile_fn>(dlsym(h, TORSH_WEBGPU_COMPILE_SYMBOL));
  ASSERT_NE(compile, nullptr);
  rt::DeviceImpl* d = &dev.impl();
  EXPECT_EQ(compile(d,
                    "@group(0) @binding(0) var<storage, read_write> x: array<f32>;\n"
                    "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {\n"
                    "  x[g.x] = 1.0;\n}\n"),
            0);
  try {
    compile(d, "@compute @workgroup_size(1)\nfn main() {\n  let y: u32 = torsh_no_such_identifier_42;\n}\n");
    ADD_FAILURE() << "broken WGSL compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::KernelCompile);
    const std::string what = e.what();
    EXPECT_NE(what.find("torsh_no_such_identifier_42"), std::string::npos) << what;
    EXPECT_NE(what.find("wgsl:3:"), std::string::npos) << what;  // line 3, with its column
  }
  EXPECT_EQ(error_code_of([&] { compile(&cpu.impl(), "fn f() {}"); }), ErrorCode::InvalidArgument);
  // The device still works after a failed compile.
  const float one = 1.f;
  EXPECT_EQ(ops::add(dev.from_host(&one, Shape{1}, DType::F32), dev.from_host(&one, Shape{1}, DType::F32)).to_vector(),
            std::vector<float>{2});
  dlclose(h);
}
