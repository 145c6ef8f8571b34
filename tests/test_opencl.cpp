// The OpenCL plugin on whatever ICD the machine has (PoCL's CPU device in CI):
// device facts and capability claims, memory, streams and events, fallback,
// and the error paths. Whether its ops match the CPU backend is
// test_backend_ops's job. Every test skips, with the registry's reason, where
// no OpenCL device is available.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "backends/opencl/compile_api.h"
#include "device_test_util.hpp"
#include "torsh/backend/backend_impl.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
using torsh::test::backend_available;
using torsh::test::error_code_of;
using torsh::test::rand_vec;
using torsh::test::unavailable_reason;

namespace {

class OpenCl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_available(BackendType::OpenCl))
      GTEST_SKIP() << "OpenCL backend unavailable: " << unavailable_reason(BackendType::OpenCl);
    dev = Backend::create(BackendType::OpenCl);
    cpu = Backend::create(BackendType::Cpu);
  }

  Tensor on_cl(const std::vector<float>& v, const Shape& s) { return dev.from_host(v.data(), s, DType::F32); }
  Tensor on_cpu(const std::vector<float>& v, const Shape& s) { return cpu.from_host(v.data(), s, DType::F32); }

  Backend dev, cpu;
};

}  // namespace

// ---------------------------------------------------------------- devices

TEST(OpenClRegistry, StatusExplainsItself) {
  for (const auto& st : backend_statuses()) {
    if (st.type != BackendType::OpenCl) continue;
    if (!st.available) {
      EXPECT_FALSE(st.reason.empty());
      GTEST_SKIP() << "OpenCL backend unavailable: " << st.reason;
    }
    EXPECT_FALSE(st.version.empty());
    EXPECT_NE(st.source.find("libtorsh_backend_opencl.so"), std::string::npos) << st.source;
    ASSERT_FALSE(st.devices.empty());
  }
}

TEST_F(OpenCl, DeviceFacts) {
  const DeviceInfo& info = dev.info();
  EXPECT_EQ(dev.type(), BackendType::OpenCl);
  EXPECT_FALSE(info.name.empty());
  EXPECT_FALSE(info.vendor.empty());
  EXPECT_GT(info.total_memory, 0u);
  EXPECT_GT(info.compute_units, 0);
  EXPECT_EQ(info.compute_capability.rfind("OpenCL C ", 0), 0u) << info.compute_capability;
  EXPECT_GT(info.peak_gflops, 0.0);
  EXPECT_FALSE(info.driver_version.empty());
  const bool pocl_cpu = info.kind == DeviceKind::Cpu || info.name.find("pthread") != std::string::npos;
  if (pocl_cpu) {
    EXPECT_TRUE(info.software) << info.name;
  }
  const Capabilities caps = dev.capabilities();
  EXPECT_TRUE(caps.event_timing);
  EXPECT_TRUE(caps.runtime_kernels);
  EXPECT_TRUE(caps.async_copy);
  EXPECT_GT(caps.max_allocation, 0u);
  EXPECT_LE(caps.max_allocation, info.total_memory);
  EXPECT_GT(caps.max_work_group, 0u);
  EXPECT_GT(dev.hints().alignment, 0u);
  EXPECT_NE(dev.name().find(info.name), std::string::npos);
  // A software device is never auto-selected over the native CPU backend.
  if (info.software) {
    const auto rep = explain_selection(0);
    EXPECT_NE(rep.chosen.type, BackendType::OpenCl);
    const std::string summary = backend_summary();
    EXPECT_NE(summary.find("software device"), std::string::npos) << summary;
  }
  // Same index, same device object.
  EXPECT_EQ(&Backend::create(BackendType::OpenCl).impl(), &dev.impl());
  EXPECT_EQ(error_code_of([] { Backend::create(BackendType::OpenCl, 1000); }), ErrorCode::OutOfRange);
}

TEST_F(OpenCl, CapabilityQueryIsHonest) { torsh::test::expect_honest_gpu_capabilities(dev); }

// Integer means and variances, and sums that wrap in the input dtype: the op
// layer never asks for them (it widens integers first), but the CPU's kernel
// takes them, and so does the device's, with the same results.
TEST_F(OpenCl, IntegerReductionsMatchTheCpuKernel) {
  const std::vector<std::int8_t> v = {100, 90, -128, 127, 5, -7, 60, 70, 3, -1, 2, 120};
  for (rt::ReduceOp op : {rt::ReduceOp::Sum, rt::ReduceOp::Mean, rt::ReduceOp::Var}) {
    std::vector<std::vector<std::int8_t>> got;
    for (Backend* b : {&dev, &cpu}) {
      Tensor x = b->from_host(v.data(), Shape{3, 4}, DType::I8);
      Tensor y = b->empty(Shape{3}, DType::I8);
      b->impl().run(rt::OpKind::Reduce, rt::ReduceArgs{op, x.arg(), y.arg(), 3, 4, 1, 1}, b->impl().default_stream());
      got.push_back(y.to_host<std::int8_t>());
    }
    EXPECT_EQ(got[0], got[1]) << rt::reduce_op_name(op);
  }
}

// ---------------------------------------------------------------- memory

// ---------------------------------------------------------------- fallback and errors

TEST_F(OpenCl, UnsupportedOpsFallBackToTheCpuWithCountedCopies) {
  // Attention with a head size past what a work-group keeps in registers
  // (AT_MAX_D, 256): one op on the CPU. One query and one key: the output is v.
  ops::reset_fallback_stats();
  const std::int64_t d = 300;
  std::vector<float> q(d, 0.5f), k(d, -0.25f), v(d);
  for (std::int64_t i = 0; i < d; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i) - 7.5f;
  const auto on = [&](const std::vector<float>& x) { return dev.from_host(x.data(), Shape{1, 1, 1, d}, DType::F32); };
  Tensor z = ops::attention(on(q), on(k), on(v));
  EXPECT_EQ(z.device(), dev.device());
  EXPECT_EQ(z.to_vector(), v);
  const auto st = ops::fallback_stats();
  EXPECT_EQ(st.ops, 1u);
  EXPECT_EQ(st.copies, 5u);  // three inputs and the output to the CPU, the output back
  EXPECT_EQ(st.bytes, 5u * d * sizeof(float));
  // A reduction runs on the device.
  ops::reset_fallback_stats();
  const auto e = ops::sum(on_cl({0.5f, 1.f}, {2})).to_vector();
  EXPECT_EQ(e, std::vector<float>{1.5f});
  EXPECT_EQ(ops::fallback_stats().ops, 0u);
  // f64 arithmetic, conversions and reductions run on the device only where it has doubles.
  const std::uint64_t native = dev.impl().capabilities().f64 ? 0u : 1u;
  ops::reset_fallback_stats();
  Tensor h = ops::cast(on_cl({1.5f, -2.f}, {2}), DType::F64);
  EXPECT_EQ(h.device(), dev.device());
  EXPECT_EQ(h.to_host<double>(), (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(ops::fallback_stats().ops, native);
  ops::reset_fallback_stats();
  EXPECT_EQ(ops::add(h, h).to_host<double>(), (std::vector<double>{3.0, -4.0}));
  EXPECT_EQ(ops::fallback_stats().ops, native);
  ops::reset_fallback_stats();
  EXPECT_EQ(ops::sum(h).to_host<double>(), (std::vector<double>{-0.5}));
  EXPECT_EQ(ops::fallback_stats().ops, native);
}

TEST_F(OpenCl, KernelCompileFailureCarriesTheBuildLog) {
  std::string plugin;
  for (const auto& st : backend_statuses())
    if (st.type == BackendType::OpenCl) plugin = st.source;
  // The registry already loaded the plugin; this only finds it.
  void* h = dlopen(plugin.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(h, nullptr) << plugin << ": " << dlerror();
  auto compile = reinterpret_cast<torsh_opencl_compile_fn>(dlsym(h, TORSH_OPENCL_COMPILE_SYMBOL));
  ASSERT_NE(compile, nullptr);
  rt::DeviceImpl* d = &dev.impl();
  EXPECT_EQ(compile(d,
                    "__kernel void one(__global float* x) { x[get_global_id(0)] = 1.0f; }\n"
                    "__kernel void two(__global int* y) { y[0] = 2; }\n",
                    nullptr),
            2);
  try {
    compile(d, "__kernel void broken(__global float* x) {\n  x[0] = torsh_no_such_identifier_42;\n}\n", nullptr);
    ADD_FAILURE() << "a broken kernel compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::KernelCompile);
    const std::string what = e.what();
    EXPECT_NE(what.find("torsh_no_such_identifier_42"), std::string::npos) << what;  // from the compiler's log
    EXPECT_NE(what.find("build log"), std::string::npos) << what;
    EXPECT_NE(what.find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << what;
  }
  EXPECT_EQ(error_code_of([&] { compile(&cpu.impl(), "__kernel void k() {}", nullptr); }), ErrorCode::InvalidArgument);
  dlclose(h);  // drops only the reference taken above
}

TEST_F(OpenCl, AllocationsPastTheDeviceLimitNameIt) {
  const std::size_t live_before = dev.memory_stats().live_bytes;
  // Larger than one allocation may be, though the device has that much: the per-allocation limit is named.
  const std::uint64_t max_alloc = dev.capabilities().max_allocation;
  if (max_alloc < dev.info().total_memory) {
    try {
      dev.allocate(max_alloc + 1);
      ADD_FAILURE() << "allocated more than CL_DEVICE_MAX_MEM_ALLOC_SIZE";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::OutOfMemory);
      EXPECT_NE(std::string(e.what()).find("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(dev.memory_stats().live_bytes, live_before) << "failed allocations must not be counted";
  // The device still works afterwards.
  EXPECT_EQ(ops::add(on_cl({1}, {1}), on_cl({2}, {1})).to_vector(), std::vector<float>{3});
}
