// Pinned host memory (Backend::allocate_pinned) and stream-ordered copies
// between it and device buffers, on the CPU backend and on OpenCL
// (CL_MEM_ALLOC_HOST_PTR buffers mapped for their life).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "device_test_util.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
using torsh::test::backend_available;
using torsh::test::error_code_of;

namespace {

class PinnedOpenCl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_available(BackendType::OpenCl)) GTEST_SKIP() << "OpenCL backend unavailable";
    dev = Backend::builder().backend_type(BackendType::OpenCl).build();
  }
  Backend dev;
};

}  // namespace

TEST(Pinned, OnTheCpuBackendItIsOrdinaryHostMemoryThatTensorsCanWrap) {
  Backend cpu = Backend::builder().backend_type(BackendType::Cpu).build();
  Buffer h = cpu.allocate_pinned(64 * sizeof(float));
  EXPECT_FALSE(h.pinned());  // nothing to pin for: the CPU reads host memory directly
  EXPECT_EQ(h.device(), Device(BackendType::Cpu, 0));
  ASSERT_NE(h.host_ptr(), nullptr);
  auto* p = static_cast<float*>(h.host_ptr());
  std::iota(p, p + 64, 0.f);
  Tensor t(h, DType::F32, Shape{8, 8}, {8, 1});
  const auto doubled = ops::add(t, t).to_vector();
  EXPECT_EQ(doubled[63], 126.f);
  EXPECT_GT(cpu.memory_stats().pinned_reserved_bytes, 0u);
  EXPECT_EQ(error_code_of([&] { cpu.allocate_pinned(0); }), ErrorCode::InvalidArgument);
}

TEST(Pinned, CpuStreamCopiesBetweenPinnedAndDeviceBuffers) {
  Backend cpu = Backend::builder().backend_type(BackendType::Cpu).build();
  Buffer h = cpu.allocate_pinned(256), d = cpu.allocate(256);
  std::memset(h.host_ptr(), 9, 256);
  Stream s = cpu.create_stream();
  d.copy_from_async(h, 200, s, 0, 56);
  s.synchronize();
  unsigned char got[256];
  d.copy_to_host(got, 256);
  EXPECT_EQ(got[56], 9);
  EXPECT_EQ(got[255], 9);
}

TEST_F(PinnedOpenCl, AllocatesMappedHostMemory) {
  Buffer h = dev.allocate_pinned(1 << 20);
  EXPECT_TRUE(h.pinned());
  EXPECT_EQ(h.device(), Device(BackendType::Cpu, 0));  // host memory, usable by CPU ops
  ASSERT_NE(h.host_ptr(), nullptr);
  std::memset(h.host_ptr(), 0x5a, 1 << 20);  // the host may touch all of it
  const MemoryStats s = dev.memory_stats();
  EXPECT_GE(s.pinned_reserved_bytes, std::size_t(1) << 20);
  EXPECT_EQ(s.pinned_allocated_bytes, std::size_t(1) << 20);
  EXPECT_EQ(s.live_bytes, 0u) << "pinned memory is not device memory";
}

TEST_F(PinnedOpenCl, AsyncRoundTripThroughPinnedBuffers) {
  const std::size_t n = 1 << 18, bytes = n * sizeof(float);
  Buffer up = dev.allocate_pinned(bytes), down = dev.allocate_pinned(bytes);
  auto* src = static_cast<float*>(up.host_ptr());
  for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<float>(i) * 0.25f;
  Buffer d = dev.allocate(bytes);
  Stream s = dev.create_stream();
  Event done = dev.create_event();
  d.copy_from_async(up, bytes, s);
  down.copy_from_async(d, bytes, s);
  s.record(done);
  done.synchronize();
  EXPECT_EQ(std::memcmp(down.host_ptr(), up.host_ptr(), bytes), 0);
  // Device tensors computed from data that arrived through pinned memory.
  Tensor t(d, DType::F32, Shape{static_cast<std::int64_t>(n)}, {1});
  EXPECT_EQ(ops::add(t, t).to_vector()[n - 1], 2 * src[n - 1]);
}

TEST_F(PinnedOpenCl, PinnedTensorsMoveToTheDevice) {
  Buffer h = dev.allocate_pinned(16 * sizeof(float));
  auto* p = static_cast<float*>(h.host_ptr());
  std::iota(p, p + 16, 1.f);
  Tensor host(h, DType::F32, Shape{4, 4}, {4, 1});
  Tensor on_dev = host.to(dev);
  EXPECT_EQ(on_dev.device(), dev.device());
  EXPECT_EQ(ops::add(on_dev, on_dev).to_vector()[15], 32.f);
}

TEST_F(PinnedOpenCl, AFreedPinnedBlockIsNotReusedBeforeItsCopyRan) {
  const std::size_t n = 1 << 20, bytes = n * sizeof(float);
  // Hold the copy's stream behind a matmul on the default stream, so the copy is likely still queued.
  Tensor a = ops::randn(dev, Shape{512, 512}, 1), b = ops::randn(dev, Shape{512, 512}, 2);
  Tensor slow = ops::matmul(a, b);
  Event after_matmul = dev.create_event();
  Stream def = dev.default_stream();
  def.record(after_matmul);
  Stream s = dev.create_stream();
  s.wait(after_matmul);
  Buffer d = dev.allocate(bytes);
  Event copied = dev.create_event();
  void* old_ptr = nullptr;
  {
    Buffer h = dev.allocate_pinned(bytes);
    old_ptr = h.host_ptr();
    d.copy_from_async(h, bytes, s);
    s.record(copied);
  }  // freed while the copy may still read it
  Buffer again = dev.allocate_pinned(bytes);
  // Reuse is allowed only if the copy had finished when the pool looked.
  EXPECT_TRUE(again.host_ptr() != old_ptr || copied.query());
  s.synchronize();
  EXPECT_EQ(test_hooks::check_memory_pool(dev), "");
  again = Buffer();
  dev.synchronize();
  Buffer third = dev.allocate_pinned(bytes);  // every copy has run: the cache serves it
  EXPECT_GE(dev.memory_stats().pinned_reserved_bytes, bytes);
  EXPECT_EQ(test_hooks::check_memory_pool(dev), "");
}

TEST_F(PinnedOpenCl, PageableHostMemoryIsCopiedBeforeTheCallReturns) {
  Backend cpu = Backend::create(BackendType::Cpu);
  Buffer host = cpu.allocate(4096), d = dev.allocate(4096);
  std::vector<unsigned char> pattern(4096, 0x33);
  host.copy_from_host(pattern.data(), 4096);
  Stream s = dev.create_stream();
  d.copy_from_async(host, 4096, s);
  pattern.assign(4096, 0);
  host.copy_from_host(pattern.data(), 4096);  // the copy must already have its bytes
  std::vector<unsigned char> got(4096);
  d.copy_to_host(got.data(), 4096);
  EXPECT_EQ(got, std::vector<unsigned char>(4096, 0x33));
}

TEST_F(PinnedOpenCl, ErrorsNameTheProblem) {
  Backend cpu = Backend::create(BackendType::Cpu);
  Buffer x = cpu.allocate(64), y = cpu.allocate(64);
  Stream s = dev.create_stream();
  EXPECT_EQ(error_code_of([&] { x.copy_from_async(y, 64, s); }), ErrorCode::DeviceMismatch);
  Buffer h = dev.allocate_pinned(64), d = dev.allocate(64);
  EXPECT_EQ(error_code_of([&] { d.copy_from_async(h, 65, s); }), ErrorCode::OutOfRange);
  Buffer gone = h;
  h.free();
  EXPECT_EQ(error_code_of([&] { d.copy_from_async(gone, 8, s); }), ErrorCode::InvalidState);
}

TEST_F(PinnedOpenCl, InjectedFailuresLeaveThePinnedPoolConsistent) {
  Buffer keep = dev.allocate_pinned(1000);
  test_hooks::fail_next_device_allocations(1000);
  EXPECT_EQ(error_code_of([&] { dev.allocate_pinned(64 << 20); }), ErrorCode::OutOfMemory);
  test_hooks::fail_next_device_allocations(0);
  EXPECT_EQ(test_hooks::check_memory_pool(dev), "");
  Buffer ok = dev.allocate_pinned(64 << 20);
  EXPECT_TRUE(ok.pinned());
  ok = Buffer();
  EXPECT_GE(dev.empty_cache(), std::size_t(64) << 20);
  EXPECT_EQ(test_hooks::check_memory_pool(dev), "");
}
