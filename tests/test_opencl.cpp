// The OpenCL plugin on whatever ICD the machine has (PoCL's CPU device in CI):
// device facts, memory, streams and events, the four op families against the
// CPU backend, fallback, and the error paths. Every test skips, with the
// registry's reason, where no OpenCL device is available.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "backends/opencl/compile_api.h"
#include "torsh/torsh.hpp"

using namespace torsh;

namespace {

std::string opencl_unavailable_reason() {
  for (const auto& st : backend_statuses())
    if (st.type == BackendType::OpenCl) return st.available ? std::string() : st.reason;
  return "OpenCL is not a known backend";
}

bool opencl_available() {
  const auto av = Backend::available();
  return std::find(av.begin(), av.end(), BackendType::OpenCl) != av.end();
}

class OpenCl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!opencl_available()) GTEST_SKIP() << "OpenCL backend unavailable: " << opencl_unavailable_reason();
    dev = Backend::create(BackendType::OpenCl);
    cpu = Backend::create(BackendType::Cpu);
  }

  Tensor on_cl(const std::vector<float>& v, const Shape& s) { return dev.from_host(v.data(), s, DType::F32); }
  Tensor on_cpu(const std::vector<float>& v, const Shape& s) { return cpu.from_host(v.data(), s, DType::F32); }

  Backend dev, cpu;
};

std::vector<float> rand_vec(std::size_t n, unsigned seed, float lo = -1, float hi = 1) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(g);
  return v;
}

template <class F>
ErrorCode error_code_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return ErrorCode::Internal;
}

// |got - want| <= rtol * max(1, |want|), element by element, with the index in the message.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rtol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << what << " at " << i;
      continue;
    }
    if (std::isinf(want[i])) {
      ASSERT_EQ(got[i], want[i]) << what << " at " << i;
      continue;
    }
    ASSERT_NEAR(got[i], want[i], rtol * std::max(1.0, std::abs(double(want[i])))) << what << " at " << i;
  }
}

// Softmax of a row-major [r, c] matrix along `axis`, in double.
std::vector<float> ref_softmax(const std::vector<float>& v, int r, int c, int axis, bool log) {
  const int ax = axis < 0 ? 1 : axis;
  const int n = ax == 0 ? r : c, lines = ax == 0 ? c : r;
  std::vector<float> out(v.size());
  for (int l = 0; l < lines; ++l) {
    auto at = [&](int i) { return ax == 0 ? i * c + l : l * c + i; };
    double mx = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int i = 0; i < n; ++i) mx = std::max(mx, double(v[at(i)]));
    for (int i = 0; i < n; ++i) sum += std::exp(double(v[at(i)]) - mx);
    for (int i = 0; i < n; ++i)
      out[at(i)] = static_cast<float>(log ? double(v[at(i)]) - mx - std::log(sum) : std::exp(double(v[at(i)]) - mx) / sum);
  }
  return out;
}

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
  EXPECT_TRUE(dev.supports(rt::OpKind::Copy, DType::F32));
  EXPECT_TRUE(dev.supports(rt::OpKind::Copy, DType::I32));
  EXPECT_FALSE(dev.supports(rt::OpKind::Copy, DType::F64));
  EXPECT_FALSE(dev.supports(rt::OpKind::Copy, DType::F16));
  EXPECT_FALSE(dev.supports(rt::OpKind::Cast, DType::F32));
  EXPECT_TRUE(dev.supports(rt::OpKind::Binary, DType::F32));
  EXPECT_FALSE(dev.supports(rt::OpKind::Binary, DType::F64));
  EXPECT_FALSE(dev.supports(rt::OpKind::Binary, DType::I32));
  EXPECT_TRUE(dev.supports(rt::OpKind::Matmul, DType::F32));
  EXPECT_FALSE(dev.supports(rt::OpKind::Matmul, DType::F16));
  EXPECT_TRUE(dev.supports(rt::OpKind::Softmax, DType::F32));
  EXPECT_FALSE(dev.supports(rt::OpKind::Unary, DType::F32));
  EXPECT_FALSE(dev.supports(rt::OpKind::Reduce, DType::F32));
  // Asked directly anyway, an unsupported op says so instead of computing garbage.
  Tensor x = dev.zeros(Shape{4}, DType::F32);
  Tensor y = dev.empty(Shape{4}, DType::F64);
  EXPECT_EQ(error_code_of([&] { dev.impl().run(rt::OpKind::Cast, rt::CopyArgs{x.arg(), y.arg()}, dev.impl().default_stream()); }),
            ErrorCode::Unsupported);
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

// ---------------------------------------------------------------- ops vs the CPU backend

TEST_F(OpenCl, BinaryMatchesCpu) {
  ops::reset_fallback_stats();
  for (int n : {1, 7, 33, 1023, 70001}) {
    const auto av = rand_vec(n, n), bv = rand_vec(n, n + 1);
    const auto got = ops::add(on_cl(av, {n}), on_cl(bv, {n})).to_vector();
    const auto want = ops::add(on_cpu(av, {n}), on_cpu(bv, {n})).to_vector();
    EXPECT_EQ(got, want) << n;
  }
  // Every op, with NaN / inf / zero cases.
  std::vector<float> x = rand_vec(64, 3, -3, 3), y = rand_vec(64, 4, 0.5f, 3);
  x[0] = std::nanf("");
  y[1] = std::nanf("");
  x[2] = std::numeric_limits<float>::infinity();
  y[3] = 0.f;
  for (auto op : {rt::BinaryOp::Add, rt::BinaryOp::Sub, rt::BinaryOp::Mul, rt::BinaryOp::Div, rt::BinaryOp::Maximum,
                  rt::BinaryOp::Minimum, rt::BinaryOp::Pow}) {
    std::vector<float> xs = x;
    if (op == rt::BinaryOp::Pow)
      for (auto& v : xs) v = std::isnan(v) ? v : std::abs(v);  // real powers of negatives are NaN on both
    const auto got = ops::binary(op, on_cl(xs, {8, 8}), on_cl(y, {8, 8})).to_vector();
    const auto want = ops::binary(op, on_cpu(xs, {8, 8}), on_cpu(y, {8, 8})).to_vector();
    expect_close(got, want, op == rt::BinaryOp::Pow ? 1e-5 : 1e-6, rt::binary_op_name(op));
  }
  // Broadcasting [3,1] + [1,4].
  const auto got = ops::add(on_cl({1, 2, 3}, {3, 1}), on_cl({10, 20, 30, 40}, {1, 4}));
  EXPECT_EQ(got.shape(), (Shape{3, 4}));
  EXPECT_EQ(got.to_vector(), (std::vector<float>{11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43}));
  // Row-vector broadcast over a matrix, and a transposed (non-contiguous) input.
  const auto mv = rand_vec(5 * 9, 8), rv = rand_vec(9, 9);
  expect_close(ops::mul(on_cl(mv, {5, 9}), on_cl(rv, {9})).to_vector(),
               ops::mul(on_cpu(mv, {5, 9}), on_cpu(rv, {9})).to_vector(), 0, "row broadcast");
  const auto tv = rand_vec(9 * 5, 10);
  Tensor at = on_cl(mv, {5, 9}).transpose(0, 1);  // [9, 5]
  Tensor ct = on_cpu(mv, {5, 9}).transpose(0, 1);
  EXPECT_FALSE(at.is_contiguous());
  expect_close(ops::sub(at, on_cl(tv, {9, 5})).to_vector(), ops::sub(ct, on_cpu(tv, {9, 5})).to_vector(), 0,
               "transposed");
  // Offset views (slices) and in-place output.
  Tensor big = on_cl(mv, {5, 9});
  Tensor part = big.slice(0, 2, 5).slice(1, 1, 8, 2);  // [3, 4] at an offset, strided
  Tensor cpart = on_cpu(mv, {5, 9}).slice(0, 2, 5).slice(1, 1, 8, 2);
  expect_close(ops::add(part, part).to_vector(), ops::add(cpart, cpart).to_vector(), 0, "offset slice");
  Tensor inplace = on_cl(mv, {5, 9});
  ops::binary_out(rt::BinaryOp::Add, inplace, inplace, inplace);
  Tensor cinplace = on_cpu(mv, {5, 9});
  ops::binary_out(rt::BinaryOp::Add, cinplace, cinplace, cinplace);
  EXPECT_EQ(inplace.to_vector(), cinplace.to_vector());
  // Empty tensors.
  EXPECT_EQ(ops::add(dev.empty(Shape{0, 3}, DType::F32), dev.empty(Shape{0, 3}, DType::F32)).numel(), 0);
  EXPECT_EQ(ops::fallback_stats().ops, 0u) << "f32 binary ops must run on the OpenCL device";
}

TEST_F(OpenCl, StridedCopyRunsOnTheDevice) {
  ops::reset_fallback_stats();
  const auto v = rand_vec(6 * 10 * 3, 12);
  Tensor x = on_cl(v, {6, 10, 3}).permute({2, 0, 1});
  Tensor cx = on_cpu(v, {6, 10, 3}).permute({2, 0, 1});
  EXPECT_EQ(ops::contiguous(x).to_vector(), ops::contiguous(cx).to_vector());
  std::vector<std::int32_t> iv(40);
  for (int i = 0; i < 40; ++i) iv[i] = i * 1000 - 7;
  Tensor xi = dev.from_host(iv.data(), Shape{5, 8}, DType::I32).transpose(0, 1);
  Tensor ci = cpu.from_host(iv.data(), Shape{5, 8}, DType::I32).transpose(0, 1);
  EXPECT_EQ(ops::contiguous(xi).to_host<std::int32_t>(), ops::contiguous(ci).to_host<std::int32_t>());
  // Dense copy into an offset view.
  Tensor dst = dev.zeros(Shape{4, 8}, DType::F32);
  Tensor row = dst.slice(0, 2, 3);
  Tensor src = on_cl({1, 2, 3, 4, 5, 6, 7, 8}, {1, 8});
  ops::copy_into(src, row);
  auto d = dst.to_vector();
  for (int i = 0; i < 32; ++i) EXPECT_EQ(d[i], (i >= 16 && i < 24) ? float(i - 15) : 0.f) << i;
  EXPECT_EQ(ops::fallback_stats().ops, 0u) << "same-dtype 4-byte copies must run on the OpenCL device";
  // A conversion is OpKind::Cast, which the device does not claim: it falls back, correctly.
  Tensor h = ops::cast(on_cl({1.5f, -2.f}, {2}), DType::F64);
  EXPECT_EQ(h.device(), dev.device());
  EXPECT_EQ(h.to_host<double>(), (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(ops::fallback_stats().ops, 1u);
}

TEST_F(OpenCl, MatmulMatchesCpu) {
  ops::reset_fallback_stats();
  for (auto [m, k, n] : std::vector<std::array<int, 3>>{{1, 1, 1}, {7, 13, 5}, {64, 64, 64}, {33, 17, 65}, {1, 300, 1},
                                                         {17, 1, 40}}) {
    const auto av = rand_vec(m * k, m + k), bv = rand_vec(k * n, n);
    const auto got = ops::matmul(on_cl(av, {m, k}), on_cl(bv, {k, n})).to_vector();
    const auto want = ops::matmul(on_cpu(av, {m, k}), on_cpu(bv, {k, n})).to_vector();
    expect_close(got, want, 1e-4, std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n));
  }
  // Batched, with a broadcast batch operand.
  const int B = 3, m = 19, k = 21, n = 23;
  const auto av = rand_vec(B * m * k, 1), bv = rand_vec(B * k * n, 2), b1 = rand_vec(k * n, 3);
  expect_close(ops::matmul(on_cl(av, {B, m, k}), on_cl(bv, {B, k, n})).to_vector(),
               ops::matmul(on_cpu(av, {B, m, k}), on_cpu(bv, {B, k, n})).to_vector(), 1e-4, "batched");
  expect_close(ops::matmul(on_cl(av, {B, m, k}), on_cl(b1, {k, n})).to_vector(),
               ops::matmul(on_cpu(av, {B, m, k}), on_cpu(b1, {k, n})).to_vector(), 1e-4, "broadcast batch");
  expect_close(ops::matmul(on_cl(av, {B, 1, m, k}), on_cl(bv, {B, k, n}).unsqueeze(0)).to_vector(),
               ops::matmul(on_cpu(av, {B, 1, m, k}), on_cpu(bv, {B, k, n}).unsqueeze(0)).to_vector(), 1e-4,
               "4-d");
  // Transposes through strides, alpha and beta with c, in gemm.
  const auto at = rand_vec(k * m, 4), bt = rand_vec(n * k, 5), cv = rand_vec(m * n, 6);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const Shape sa = ta ? Shape{k, m} : Shape{m, k}, sb = tb ? Shape{n, k} : Shape{k, n};
      const auto got = ops::gemm(on_cl(at, sa), on_cl(bt, sb), 1.5f, 0.25f, on_cl(cv, {m, n}), ta, tb).to_vector();
      const auto want = ops::gemm(on_cpu(at, sa), on_cpu(bt, sb), 1.5f, 0.25f, on_cpu(cv, {m, n}), ta, tb).to_vector();
      expect_close(got, want, 1e-4, std::string("gemm ta=") + (ta ? "1" : "0") + " tb=" + (tb ? "1" : "0"));
    }
  // beta == 0 never reads c (NaN there must not leak through).
  std::vector<float> nanc(m * n, std::nanf(""));
  for (float x : ops::gemm(on_cl(av, {m, k}), on_cl(b1, {k, n}), 1.f, 0.f, on_cl(nanc, {m, n})).to_vector())
    ASSERT_FALSE(std::isnan(x));
  // Batched transposed 3-D gemm, and an operand that is a view at an offset.
  const auto a3 = rand_vec(B * k * m, 7);
  expect_close(ops::gemm(on_cl(a3, {B, k, m}), on_cl(bv, {B, k, n}), 1.f, 0.f, std::nullopt, true).to_vector(),
               ops::gemm(on_cpu(a3, {B, k, m}), on_cpu(bv, {B, k, n}), 1.f, 0.f, std::nullopt, true).to_vector(),
               1e-4, "batched transposed");
  Tensor av_cl = on_cl(av, {B, m, k}).slice(0, 1, 3).slice(1, 2, 12);
  Tensor av_cpu = on_cpu(av, {B, m, k}).slice(0, 1, 3).slice(1, 2, 12);
  expect_close(ops::matmul(av_cl, on_cl(b1, {k, n})).to_vector(), ops::matmul(av_cpu, on_cpu(b1, {k, n})).to_vector(),
               1e-4, "offset view");
  // k == 0 gives zeros.
  EXPECT_EQ(ops::matmul(dev.empty(Shape{2, 0}, DType::F32), dev.empty(Shape{0, 3}, DType::F32)).to_vector(),
            std::vector<float>(6, 0.f));
  EXPECT_EQ(ops::fallback_stats().ops, 0u) << "f32 matmul must run on the OpenCL device";
}

TEST_F(OpenCl, SoftmaxMatchesCpu) {
  ops::reset_fallback_stats();
  const int r = 37, c = 301;
  auto v = rand_vec(r * c, 3, -5, 5);
  v[3] = 1e4f;                                           // a huge value in row 0
  for (int j = 0; j < c; ++j) v[5 * c + j] = -1e4f + j;  // a whole row of large negative values
  for (int axis : {0, 1, -1}) {
    for (bool log : {false, true}) {
      const auto got = (log ? ops::log_softmax(on_cl(v, {r, c}), axis) : ops::softmax(on_cl(v, {r, c}), axis)).to_vector();
      const auto want = (log ? ops::log_softmax(on_cpu(v, {r, c}), axis) : ops::softmax(on_cpu(v, {r, c}), axis)).to_vector();
      const auto ref = ref_softmax(v, r, c, axis, log);
      const std::string what = std::string(log ? "log_softmax" : "softmax") + " axis " + std::to_string(axis);
      expect_close(got, want, 1e-5, what + " vs CPU");
      expect_close(got, ref, 1e-5, what + " vs f64 reference");
    }
  }
  // Masked entries (-inf, as in attention masks) get probability 0 and log-probability -inf.
  v[9 * c + 1] = -std::numeric_limits<float>::infinity();
  for (bool log : {false, true}) {
    const auto got = (log ? ops::log_softmax(on_cl(v, {r, c}), -1) : ops::softmax(on_cl(v, {r, c}), -1)).to_vector();
    expect_close(got, ref_softmax(v, r, c, -1, log), 1e-5, std::string(log ? "log_softmax" : "softmax") + " with -inf");
    EXPECT_EQ(got[9 * c + 1], log ? -std::numeric_limits<float>::infinity() : 0.f);
  }
  // 3-d, middle axis (outer and inner both > 1), rows shorter and longer than the work-group.
  for (int n : {1, 5, 128, 129, 1000}) {
    const auto x = rand_vec(3 * n * 4, n, -20, 20);
    expect_close(ops::softmax(on_cl(x, {3, n, 4}), 1).to_vector(), ops::softmax(on_cpu(x, {3, n, 4}), 1).to_vector(),
                 1e-5, "3-d n=" + std::to_string(n));
  }
  // Inputs at an element offset: unaligned (staged copy) and aligned (sub-buffer) views.
  const auto big = rand_vec(64 * 32, 77, -3, 3);
  for (int start : {3, 32, 64}) {
    Tensor xs = on_cl(big, {64 * 32}).slice(0, start, start + 40 * 32).reshape({40, 32});
    Tensor cs = on_cpu(big, {64 * 32}).slice(0, start, start + 40 * 32).reshape({40, 32});
    ASSERT_EQ(xs.offset(), start);
    expect_close(ops::log_softmax(xs, -1).to_vector(), ops::log_softmax(cs, -1).to_vector(), 1e-5,
                 "offset " + std::to_string(start));
    expect_close(ops::softmax(xs, 0).to_vector(), ops::softmax(cs, 0).to_vector(), 1e-5,
                 "offset " + std::to_string(start) + " axis 0");
  }
  // Rows sum to one.
  const auto s = ops::softmax(on_cl(v, {r, c}), -1).to_vector();
  for (int i = 0; i < r; ++i) {
    double sum = 0;
    for (int j = 0; j < c; ++j) sum += s[i * c + j];
    EXPECT_NEAR(sum, 1.0, 1e-4) << i;
  }
  EXPECT_EQ(ops::fallback_stats().ops, 0u) << "f32 softmax must run on the OpenCL device";
}

// ---------------------------------------------------------------- fallback and errors

TEST_F(OpenCl, UnsupportedOpsFallBackToTheCpuWithCountedCopies) {
  ops::reset_fallback_stats();
  const std::vector<double> a = {1.5, 2.5, -3.0, 1e300}, b = {0.25, -0.5, 3.0, 1e300};
  Tensor x = dev.from_host(a.data(), Shape{4}, DType::F64), y = dev.from_host(b.data(), Shape{4}, DType::F64);
  Tensor z = ops::add(x, y);
  EXPECT_EQ(z.device(), dev.device());
  EXPECT_EQ(z.dtype(), DType::F64);
  EXPECT_EQ(z.to_host<double>(), (std::vector<double>{1.75, 2.0, 0.0, 2e300}));
  const auto st = ops::fallback_stats();
  EXPECT_EQ(st.ops, 1u);
  EXPECT_EQ(st.copies, 4u);  // two inputs and the output to the CPU, the output back
  EXPECT_EQ(st.bytes, 4u * 4 * sizeof(double));
  // A unary op (not implemented on OpenCL at all) in f32 as well.
  ops::reset_fallback_stats();
  const auto e = ops::exp(on_cl({0.f, 1.f}, {2})).to_vector();
  EXPECT_NEAR(e[1], std::exp(1.0), 1e-6);
  EXPECT_EQ(ops::fallback_stats().ops, 1u);
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
  EXPECT_EQ(compile(d, "__kernel void one(__global float* x) { x[get_global_id(0)] = 1.0f; }\n"
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
