// What every device promises, run on every device present (the CPU's too):
// buffers at any byte offset, device-to-device copies that behave like
// memmove, fill patterns, stream-ordered copies and events, copies across
// backends, allocation failures that leave the pool as it was, and use after
// free. A backend with no usable device shows up as one skipped case naming
// why. What is one backend's own (its limits, its driver's error names,
// pinned memory) stays in test_<backend>.cpp; whether its ops match the CPU
// is test_backend_ops's job.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "device_test_util.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
using torsh::test::device_targets;
using torsh::test::error_code_of;
using torsh::test::rand_vec;
using torsh::test::Target;
using torsh::test::target_label;

namespace {

class DeviceContract : public ::testing::TestWithParam<Target> {
 protected:
  void SetUp() override {
    const Target& t = GetParam();
    if (t.index < 0) GTEST_SKIP() << backend_name(t.type) << " unavailable: " << t.reason;
    dev = Backend::create(t.type, t.index);
    cpu = Backend::create(BackendType::Cpu);
  }

  Tensor on_dev(const std::vector<float>& v, const Shape& s) { return dev.from_host(v.data(), s, DType::F32); }
  Tensor on_cpu(const std::vector<float>& v, const Shape& s) { return cpu.from_host(v.data(), s, DType::F32); }
  bool is_cpu() const { return dev.type() == BackendType::Cpu; }

  Backend dev, cpu;
};

unsigned char byte_of(const void* pattern, std::size_t i) { return static_cast<const unsigned char*>(pattern)[i]; }

}  // namespace

TEST_P(DeviceContract, BufferRoundTripAtAnyOffset) {
  // An odd size, and writes and reads at odd offsets and lengths (WebGPU moves
  // whole 4-byte words and must still touch exactly these bytes).
  std::vector<unsigned char> src(1001);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  Buffer b = dev.allocate(src.size());
  EXPECT_EQ(b.size(), src.size());
  EXPECT_EQ(b.device(), dev.device());
  b.copy_from_host(src.data(), src.size());
  std::vector<unsigned char> back(src.size());
  b.copy_to_host(back.data(), back.size());
  EXPECT_EQ(back, src);
  const unsigned char patch[5] = {1, 2, 3, 4, 5};
  b.copy_from_host(patch, 5, 333);
  unsigned char got[7] = {};
  b.copy_to_host(got, 7, 332);
  EXPECT_EQ(got[0], src[332]);
  EXPECT_EQ(std::memcmp(got + 1, patch, 5), 0);
  EXPECT_EQ(got[6], src[338]);
  b.copy_from_host(patch, 1, 1000);  // the last byte
  b.copy_to_host(got, 2, 999);
  EXPECT_EQ(got[0], src[999]);
  EXPECT_EQ(got[1], 1);
  EXPECT_EQ(error_code_of([&] { b.copy_to_host(got, 7, 999); }), ErrorCode::OutOfRange);
}

TEST_P(DeviceContract, DeviceToDeviceCopiesBehaveLikeMemmove) {
  const std::size_t n = 4096;
  std::vector<unsigned char> src(n);
  for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i ^ (i >> 8));
  Buffer a = dev.allocate(n), b = dev.allocate(n);
  a.copy_from_host(src.data(), n);
  b.fill_bytes(0);
  b.copy_from(a, 1000, 17, 5);  // unaligned source and destination
  std::vector<unsigned char> got(n);
  b.copy_to_host(got.data(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], (i >= 5 && i < 1005) ? src[i - 5 + 17] : 0) << i;
  // Overlapping ranges in one buffer, in both directions.
  std::vector<unsigned char> ref = src;
  std::memmove(ref.data() + 10, ref.data(), 2000);
  a.copy_from(a, 2000, 0, 10);
  std::memmove(ref.data() + 100, ref.data() + 101, 3000);
  a.copy_from(a, 3000, 101, 100);
  std::memmove(ref.data() + 10, ref.data() + 3, 500);
  a.copy_from(a, 500, 3, 10);
  a.copy_to_host(got.data(), n);
  EXPECT_EQ(got, ref);
}

TEST_P(DeviceContract, FillPatterns) {
  const std::size_t n = 256;
  Buffer b = dev.allocate(n);
  b.fill_bytes(0xAB);
  std::vector<unsigned char> got(n);
  b.copy_to_host(got.data(), n);
  EXPECT_EQ(got, std::vector<unsigned char>(n, 0xAB));
  const std::uint16_t p16 = 0x1234;
  b.fill_pattern(&p16, 2, 9, 62);  // an odd offset
  const std::uint32_t p32 = 0xDEADBEEF;
  b.fill_pattern(&p32, 4, 128, 64);
  const std::uint64_t p64 = 0x0102030405060708ull;
  b.fill_pattern(&p64, 8, 192, 64);
  b.copy_to_host(got.data(), n);
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char want = 0xAB;
    if (i >= 9 && i < 71) want = byte_of(&p16, (i - 9) % 2);
    if (i >= 128 && i < 192) want = byte_of(&p32, (i - 128) % 4);
    if (i >= 192) want = byte_of(&p64, (i - 192) % 8);
    ASSERT_EQ(got[i], want) << i;
  }
  // An offset that is not a multiple of the pattern (clEnqueueFillBuffer refuses it).
  b.fill_pattern(&p32, 4, 3, 8);
  b.copy_to_host(got.data(), 16);
  EXPECT_EQ(got[2], 0xAB);
  for (std::size_t i = 3; i < 11; ++i) EXPECT_EQ(got[i], byte_of(&p32, (i - 3) % 4)) << i;
  EXPECT_EQ(got[11], byte_of(&p16, 0));  // untouched: still the 2-byte fill
  // A wide pattern of one repeated byte, and zeros().
  const std::uint32_t same = 0x7F7F7F7F;
  b.fill_pattern(&same, 4, 0, 16);
  b.copy_to_host(got.data(), 16);
  EXPECT_EQ(std::vector<unsigned char>(got.begin(), got.begin() + 16), std::vector<unsigned char>(16, 0x7F));
  EXPECT_EQ(dev.zeros(Shape{5}, DType::F32).to_vector(), std::vector<float>(5, 0.f));
}

TEST_P(DeviceContract, AsyncCopiesAndEventsOrderStreams) {
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
  if (!is_cpu()) {  // a stream of another device is refused
    Stream cs = cpu.create_stream();
    EXPECT_EQ(error_code_of([&] { b.copy_from_host_async(src.data(), 4, cs); }), ErrorCode::DeviceMismatch);
  }
}

TEST_P(DeviceContract, EventsOrderAndTimeWork) {
  const auto v = rand_vec(128 * 128, 1);
  Tensor a = on_dev(v, {128, 128});
  Stream s = dev.default_stream();
  Event start = dev.create_event(), stop = dev.create_event();
  s.record(start);
  Tensor c = ops::matmul(a, a);
  s.record(stop);
  stop.synchronize();
  EXPECT_TRUE(stop.query());
  Event never = dev.create_event();
  if (dev.capabilities().event_timing) {
    const double ms = start.elapsed_ms(stop);
    EXPECT_GE(ms, 0.0);
    EXPECT_LT(ms, 60'000.0);
    EXPECT_GE(start.elapsed_ms(start), 0.0);
    EXPECT_EQ(error_code_of([&] { start.elapsed_ms(never); }), ErrorCode::InvalidState);
  } else {
    EXPECT_EQ(error_code_of([&] { start.elapsed_ms(stop); }), ErrorCode::Unsupported);
  }
  EXPECT_TRUE(never.query());  // an unrecorded event has nothing pending
  never.synchronize();
  // The result is right after all that (the harness checks every op; this checks the ordering).
  const auto want = ops::matmul(on_cpu(v, {128, 128}), on_cpu(v, {128, 128})).to_vector();
  const auto got = c.to_vector();
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-3f) << i;
}

TEST_P(DeviceContract, CopiesToAndFromTheCpuBackend) {
  const auto v = rand_vec(777, 5);
  Buffer hb = cpu.allocate(v.size() * 4), db = dev.allocate(v.size() * 4), hb2 = cpu.allocate(v.size() * 4);
  hb.copy_from_host(v.data(), v.size() * 4);
  db.copy_from(hb, v.size() * 4);
  hb2.copy_from(db, v.size() * 4);
  std::vector<float> back(v.size());
  hb2.copy_to_host(back.data(), back.size() * 4);
  EXPECT_EQ(back, v);
  // Tensors: CPU -> device -> CPU, including a non-contiguous source on the device.
  Tensor t = on_cpu(v, {7, 111});
  Tensor d = t.to(dev);
  EXPECT_EQ(d.device(), dev.device());
  EXPECT_EQ(d.to(cpu).to_vector(), v);
  EXPECT_EQ(d.transpose(0, 1).to(cpu).to_vector(), t.transpose(0, 1).contiguous().to_vector());
}

TEST_P(DeviceContract, AbsurdAllocationsFailClearly) {
  const std::size_t live_before = dev.memory_stats().live_bytes;
  try {
    dev.allocate(std::size_t(1) << 50);
    ADD_FAILURE() << "allocated a petabyte";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory);
    EXPECT_NE(std::string(e.what()).find(std::to_string(std::size_t(1) << 50)), std::string::npos) << e.what();
  }
  EXPECT_EQ(dev.memory_stats().live_bytes, live_before) << "failed allocations must not be counted";
  // The failure is not reported again by the next, unrelated launch.
  EXPECT_EQ(ops::add(on_dev({1}, {1}), on_dev({2}, {1})).to_vector(), std::vector<float>{3});
}

TEST_P(DeviceContract, UseAfterFreeIsInvalidState) {
  Buffer b = dev.allocate(64);
  b.fill_bytes(1);
  b.free();
  EXPECT_FALSE(b.valid());
  unsigned char tmp[4];
  EXPECT_EQ(error_code_of([&] { b.copy_to_host(tmp, 4); }), ErrorCode::InvalidState);
  EXPECT_EQ(error_code_of([&] { b.copy_from_host(tmp, 4); }), ErrorCode::InvalidState);
  EXPECT_EQ(error_code_of([&] { b.free(); }), ErrorCode::InvalidState);
  Tensor t = on_dev({1, 2, 3}, {3});
  Tensor u = t;
  const_cast<Buffer&>(t.buffer()).free();
  EXPECT_EQ(error_code_of([&] { ops::add(u, u); }), ErrorCode::InvalidState);
  EXPECT_EQ(error_code_of([&] { u.to_vector(); }), ErrorCode::InvalidState);
}

INSTANTIATE_TEST_SUITE_P(Devices, DeviceContract, ::testing::ValuesIn(device_targets(true)),
                         [](const ::testing::TestParamInfo<Target>& info) { return target_label(info.param); });
