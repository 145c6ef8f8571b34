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

TEST_F(OpenCl, CapabilityQueryIsHonest) {
  // Copies, casts and binary ops take every dtype the CPU does (f64 on devices
  // with cl_khr_fp64; elsewhere those calls fall back), binary never bool.
  for (DType t : kAllDTypes) {
    EXPECT_TRUE(dev.supports(rt::OpKind::Copy, t)) << dtype_name(t);
    EXPECT_TRUE(dev.supports(rt::OpKind::Cast, t)) << dtype_name(t);
    EXPECT_EQ(dev.supports(rt::OpKind::Binary, t), t != DType::Bool) << dtype_name(t);
  }
  for (DType t : {DType::F32, DType::F16, DType::BF16})
    EXPECT_TRUE(dev.supports(rt::OpKind::Matmul, t)) << dtype_name(t);
  EXPECT_EQ(dev.supports(rt::OpKind::Matmul, DType::F64), dev.capabilities().f64);
  EXPECT_FALSE(dev.supports(rt::OpKind::Matmul, DType::I32));
  // Softmax, norm and rope take every floating dtype, attention f32, f16 and
  // bf16; unary and reductions every dtype but bool (integer unary: neg, abs
  // and relu; f64 again where the device has doubles).
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64})
    for (rt::OpKind k : {rt::OpKind::Softmax, rt::OpKind::Norm, rt::OpKind::Rope})
      EXPECT_TRUE(dev.supports(k, t)) << rt::op_kind_name(k) << " " << dtype_name(t);
  for (DType t : {DType::F32, DType::F16, DType::BF16}) EXPECT_TRUE(dev.supports(rt::OpKind::Attention, t));
  EXPECT_FALSE(dev.supports(rt::OpKind::Attention, DType::F64));
  for (DType t : kAllDTypes) {
    EXPECT_EQ(dev.supports(rt::OpKind::Unary, t), t != DType::Bool) << dtype_name(t);
    EXPECT_EQ(dev.supports(rt::OpKind::Reduce, t), t != DType::Bool) << dtype_name(t);
  }
  // Asked directly anyway, an unsupported op says so instead of computing garbage.
  Tensor x = dev.zeros(Shape{4}, DType::Bool);
  Tensor y = dev.empty(Shape{4}, DType::Bool);
  EXPECT_EQ(error_code_of([&] {
              dev.impl().run(rt::OpKind::Binary, rt::BinaryArgs{rt::BinaryOp::Add, x.arg(), x.arg(), y.arg()},
                             dev.impl().default_stream());
            }),
            ErrorCode::Unsupported);
}

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

TEST_F(OpenCl, BufferRoundTrip) {
  std::vector<unsigned char> src(1000);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  Buffer b = dev.allocate(src.size());
  EXPECT_EQ(b.size(), src.size());
  EXPECT_EQ(b.device(), dev.device());
  b.copy_from_host(src.data(), src.size());
  std::vector<unsigned char> back(src.size());
  b.copy_to_host(back.data(), back.size());
  EXPECT_EQ(back, src);
  // Partial writes and reads at odd offsets.
  const unsigned char patch[5] = {1, 2, 3, 4, 5};
  b.copy_from_host(patch, 5, 333);
  unsigned char got[7] = {};
  b.copy_to_host(got, 7, 332);
  EXPECT_EQ(got[0], src[332]);
  EXPECT_EQ(std::memcmp(got + 1, patch, 5), 0);
  EXPECT_EQ(got[6], src[338]);
  EXPECT_EQ(error_code_of([&] { b.copy_to_host(got, 7, 999); }), ErrorCode::OutOfRange);
}

TEST_F(OpenCl, AsyncCopiesOnACreatedStream) {
  const std::size_t n = 1 << 18;
  std::vector<float> src(n), back(n, -1.f);
  for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<float>(i) * 0.5f;
  Buffer b = dev.allocate(n * sizeof(float));
  Stream s = dev.create_stream();
  Event written = dev.create_event(), done = dev.create_event();
  b.copy_from_host_async(src.data(), n * sizeof(float), s);
  s.record(written);
  b.copy_to_host_async(back.data(), n * sizeof(float), s);
  s.record(done);
  done.synchronize();
  EXPECT_TRUE(done.query());
  EXPECT_TRUE(written.query());
  EXPECT_EQ(back, src);
  // A second stream ordered after the first through an event.
  Stream s2 = dev.create_stream();
  std::vector<float> ones(n, 1.f), back2(n);
  b.copy_from_host_async(ones.data(), n * sizeof(float), s);
  Event e = dev.create_event();
  s.record(e);
  s2.wait(e);
  b.copy_to_host_async(back2.data(), n * sizeof(float), s2);
  s2.synchronize();
  EXPECT_EQ(back2, ones);
  dev.synchronize();
  // A stream of another device is refused.
  Stream cs = cpu.create_stream();
  EXPECT_EQ(error_code_of([&] { b.copy_from_host_async(src.data(), 4, cs); }), ErrorCode::DeviceMismatch);
}

TEST_F(OpenCl, DeviceToDeviceCopy) {
  const std::size_t n = 4096;
  std::vector<unsigned char> src(n);
  for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i ^ (i >> 8));
  Buffer a = dev.allocate(n), b = dev.allocate(n);
  a.copy_from_host(src.data(), n);
  b.fill_bytes(0);
  b.copy_from(a, 1000, 17, 5);
  std::vector<unsigned char> got(n);
  b.copy_to_host(got.data(), n);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char want = (i >= 5 && i < 1005) ? src[i - 5 + 17] : 0;
    ASSERT_EQ(got[i], want) << i;
  }
  // Overlapping ranges in one buffer behave like memmove.
  std::vector<unsigned char> ref = src;
  std::memmove(ref.data() + 10, ref.data(), 2000);
  a.copy_from(a, 2000, 0, 10);
  a.copy_to_host(got.data(), n);
  EXPECT_EQ(got, ref);
}

TEST_F(OpenCl, FillPatterns) {
  const std::size_t n = 256;
  Buffer b = dev.allocate(n);
  b.fill_bytes(0xAB);
  std::vector<unsigned char> got(n);
  b.copy_to_host(got.data(), n);
  EXPECT_EQ(got, std::vector<unsigned char>(n, 0xAB));

  const std::uint16_t p16 = 0x1234;
  b.fill_pattern(&p16, 2, 8, 64);
  const std::uint32_t p32 = 0xDEADBEEF;
  b.fill_pattern(&p32, 4, 128, 64);
  const std::uint64_t p64 = 0x0102030405060708ull;
  b.fill_pattern(&p64, 8, 192, 64);
  b.copy_to_host(got.data(), n);
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char want = 0xAB;
    if (i >= 8 && i < 72) want = reinterpret_cast<const unsigned char*>(&p16)[(i - 8) % 2];
    if (i >= 128 && i < 192) want = reinterpret_cast<const unsigned char*>(&p32)[(i - 128) % 4];
    if (i >= 192) want = reinterpret_cast<const unsigned char*>(&p64)[(i - 192) % 8];
    ASSERT_EQ(got[i], want) << i;
  }
  // An offset that is not a multiple of the pattern (clEnqueueFillBuffer refuses it) still works.
  b.fill_pattern(&p32, 4, 3, 8);
  b.copy_to_host(got.data(), 16);
  for (std::size_t i = 3; i < 11; ++i) EXPECT_EQ(got[i], reinterpret_cast<const unsigned char*>(&p32)[(i - 3) % 4]);
  EXPECT_EQ(got[11], reinterpret_cast<const unsigned char*>(&p16)[1]);  // untouched: still the 2-byte fill
  // zeros() goes through fill.
  EXPECT_EQ(dev.zeros(Shape{5}, DType::F32).to_vector(), std::vector<float>(5, 0.f));
}

TEST_F(OpenCl, CopiesToAndFromTheCpuBackend) {
  const auto v = rand_vec(777, 5);
  Buffer hb = cpu.allocate(v.size() * 4), db = dev.allocate(v.size() * 4), hb2 = cpu.allocate(v.size() * 4);
  hb.copy_from_host(v.data(), v.size() * 4);
  db.copy_from(hb, v.size() * 4);
  hb2.copy_from(db, v.size() * 4);
  std::vector<float> back(v.size());
  hb2.copy_to_host(back.data(), back.size() * 4);
  EXPECT_EQ(back, v);
  // Tensors: CPU -> OpenCL -> CPU, including a non-contiguous source on the device.
  Tensor t = on_cpu(v, {7, 111});
  Tensor d = t.to(dev);
  EXPECT_EQ(d.device(), dev.device());
  EXPECT_EQ(d.to(cpu).to_vector(), v);
  Tensor dt = d.transpose(0, 1);
  EXPECT_EQ(dt.to(cpu).to_vector(), t.transpose(0, 1).contiguous().to_vector());
}

TEST_F(OpenCl, EventsMeasureDeviceTime) {
  Tensor a = on_cl(rand_vec(128 * 128, 1), {128, 128});
  Stream s = dev.default_stream();
  Event start = dev.create_event(), stop = dev.create_event();
  s.record(start);
  Tensor c = ops::matmul(a, a);
  s.record(stop);
  stop.synchronize();
  const double ms = start.elapsed_ms(stop);
  EXPECT_GE(ms, 0.0);
  EXPECT_LT(ms, 60'000.0);
  EXPECT_GE(start.elapsed_ms(start), 0.0);
  Event never = dev.create_event();
  EXPECT_EQ(error_code_of([&] { start.elapsed_ms(never); }), ErrorCode::InvalidState);
  EXPECT_TRUE(never.query());  // an unrecorded event has nothing pending
  never.synchronize();
}

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

TEST_F(OpenCl, AbsurdAllocationsFailClearly) {
  const std::size_t live_before = dev.memory_stats().live_bytes;
  try {
    dev.allocate(std::size_t(1) << 50);
    ADD_FAILURE() << "allocated a petabyte";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory);
    EXPECT_NE(std::string(e.what()).find(std::to_string(std::size_t(1) << 50)), std::string::npos) << e.what();
  }
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

TEST_F(OpenCl, UseAfterFreeIsInvalidState) {
  Buffer b = dev.allocate(64);
  b.fill_bytes(1);
  b.free();
  EXPECT_FALSE(b.valid());
  unsigned char tmp[4];
  EXPECT_EQ(error_code_of([&] { b.copy_to_host(tmp, 4); }), ErrorCode::InvalidState);
  EXPECT_EQ(error_code_of([&] { b.copy_from_host(tmp, 4); }), ErrorCode::InvalidState);
  EXPECT_EQ(error_code_of([&] { b.free(); }), ErrorCode::InvalidState);
  Tensor t = on_cl({1, 2, 3}, {3});
  Tensor u = t;
  const_cast<Buffer&>(t.buffer()).free();
  EXPECT_EQ(error_code_of([&] { ops::add(u, u); }), ErrorCode::InvalidState);
  EXPECT_EQ(error_code_of([&] { u.to_vector(); }), ErrorCode::InvalidState);
}
