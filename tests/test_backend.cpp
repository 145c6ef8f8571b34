// Backend API: discovery, selection, builder validation, buffers, streams,
// events, tensors, and the failure paths of each.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

#include "torsh/torsh.hpp"

using namespace torsh;

namespace {
template <class F>
Error expect_error(ErrorCode code, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e;
  }
  ADD_FAILURE() << "expected " << error_code_name(code);
  return Error(ErrorCode::Internal, "none");
}
}  // namespace

TEST(Registry, CpuIsAlwaysAvailableAndLast) {
  auto av = Backend::available();
  ASSERT_FALSE(av.empty());
  EXPECT_EQ(av.back(), BackendType::Cpu);
  auto st = backend_statuses();
  ASSERT_EQ(st.size(), 6u);
  EXPECT_EQ(st.front().type, BackendType::Cuda);  // priority order
  for (const auto& s : st) {
    if (!s.available) {
      EXPECT_FALSE(s.reason.empty()) << backend_name(s.type);
      EXPECT_TRUE(s.devices.empty());
    } else {
      EXPECT_FALSE(s.devices.empty());
    }
  }
}

TEST(Registry, CpuDeviceFactsComeFromTheOs) {
  Backend cpu = Backend::create(BackendType::Cpu);
  const DeviceInfo& d = cpu.info();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.total_memory, 1u << 20);
  ASSERT_TRUE(d.free_memory.has_value());
  EXPECT_LE(*d.free_memory, d.total_memory);
  EXPECT_GE(d.compute_units, 1);
  EXPECT_GT(d.peak_gflops, 0);
  EXPECT_TRUE(d.unified_memory);
  EXPECT_FALSE(d.software);
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) {
    EXPECT_NE(std::find(d.features.begin(), d.features.end(), "avx2"), d.features.end());
  }
  if (__builtin_cpu_supports("avx512f")) {
    EXPECT_NE(std::find(d.features.begin(), d.features.end(), "avx512f"), d.features.end());
  }
#endif
}

// Each figure says where it came from: the CPU's family and model, and the
// variant every hand-written kernel family runs (TORSH_CPU_ISA caps them).
TEST(Registry, CpuReportsItsArchitectureAndKernelVariants) {
  Backend cpu = Backend::create(BackendType::Cpu);
  const DeviceInfo& d = cpu.info();
#if defined(__x86_64__) && defined(__linux__)
  EXPECT_EQ(d.architecture.rfind("family ", 0), 0u) << d.architecture;
#endif
  const auto variant = [&](const std::string& family) {
    for (const auto& [f, v] : d.kernel_variants)
      if (f == family) return v;
    return std::string("(missing)");
  };
  const std::string gemm = variant("gemm f32"), binary = variant("binary f32"), fft = variant("fft");
  for (const char* family : {"gemm f32", "gemm bf16", "binary f32", "softmax, norms", "quantized dot", "fft"})
    EXPECT_NE(variant(family), "(missing)") << family;
  const char* cap = std::getenv("TORSH_CPU_ISA");
#if defined(__x86_64__)
  const bool capped = cap && (std::string(cap) == "avx2" || std::string(cap) == "generic");
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && !capped) {
    EXPECT_EQ(gemm.rfind("avx512", 0), 0u) << gemm;
    EXPECT_EQ(binary, "avx512");
    EXPECT_EQ(fft.rfind("stockham avx512 stages", 0), 0u) << fft;
  }
  if (cap && std::string(cap) == "avx2" && __builtin_cpu_supports("avx2")) {
    EXPECT_EQ(gemm.rfind("avx2", 0), 0u) << gemm;
    EXPECT_EQ(binary, "avx2 (TORSH_CPU_ISA=avx2)");
    EXPECT_EQ(fft.rfind("stockham avx2 stages", 0), 0u) << fft;  // the cap reaches the FFT's stages too
  }
#endif
  (void)cap;
}

TEST(Registry, SelectionIsExplainedAndNeverPicksSoftwareDevices) {
  auto rep = explain_selection();
  EXPECT_EQ(rep.reasons.size() >= 6, true);
  for (const auto& st : backend_statuses())
    for (const auto& d : st.devices)
      if (d.software && st.type != BackendType::Cpu) {
        EXPECT_NE(rep.chosen.type, st.type);
      }
  Backend b = Backend::auto_select();
  EXPECT_EQ(b.device(), rep.chosen);
  const std::string summary = backend_summary();
  EXPECT_NE(summary.find("Recommended backend"), std::string::npos);
  EXPECT_NE(summary.find("✓ CPU"), std::string::npos);
}

TEST(Registry, MemoryAwareSelection) {
  Backend b = Backend::with_free_memory(1 << 20);
  EXPECT_TRUE(b.info().free_memory.value_or(b.info().total_memory) >= (1u << 20));
  auto e = expect_error(ErrorCode::OutOfMemory, [] { Backend::with_free_memory(std::size_t(1) << 60); });
  EXPECT_NE(std::string(e.what()).find("bytes free"), std::string::npos);
}

TEST(Backend, UnknownAndOutOfRange) {
  auto e = expect_error(ErrorCode::OutOfRange, [] { Backend::create(BackendType::Cpu, 3); });
  EXPECT_NE(std::string(e.what()).find("has 1 device"), std::string::npos);
  expect_error(ErrorCode::OutOfRange, [] { Backend::create(BackendType::Cpu, -1); });
  for (const auto& st : backend_statuses())
    if (!st.available) {
      auto u = expect_error(ErrorCode::BackendUnavailable, [&] { Backend::create(st.type); });
      EXPECT_NE(std::string(u.what()).find(st.reason), std::string::npos);
    }
  expect_error(ErrorCode::InvalidArgument, [] { Backend::create(BackendType::Auto, 2); });
  EXPECT_FALSE(backend_from_name("quantum").has_value());
}

TEST(Builder, ValidatesCombinations) {
  expect_error(ErrorCode::InvalidArgument,
               [] { Backend::builder().backend_type(BackendType::Cpu).enable_tensor_cores(true).build(); });
  expect_error(ErrorCode::InvalidArgument,
               [] { Backend::builder().backend_type(BackendType::Cpu).enable_cudnn(true).build(); });
  expect_error(ErrorCode::InvalidArgument,
               [] { Backend::builder().backend_type(BackendType::Cpu).num_threads(-2).build(); });
  expect_error(ErrorCode::InvalidArgument,
               [] { Backend::builder().backend_type(BackendType::Cpu).device_id(-1).build(); });
  expect_error(ErrorCode::InvalidArgument, [] { Backend::builder().device_id(1).build(); });
  expect_error(ErrorCode::InvalidArgument, [] {
    Backend::builder().backend_type(BackendType::Cpu).memory_pool_size(std::size_t(1) << 62).build();
  });
  expect_error(ErrorCode::OutOfRange, [] { Backend::builder().backend_type(BackendType::Cpu).device_id(7).build(); });
  Backend b = Backend::builder().backend_type(BackendType::Cpu).num_threads(2).memory_pool_size(1 << 20).build();
  EXPECT_EQ(b.config().num_threads, 2);
  EXPECT_EQ(b.hints().threads, 2);
  Backend def = Backend::builder().backend_type(BackendType::Cpu).build();
  EXPECT_EQ(def.type(), BackendType::Cpu);
}

TEST(Builder, MemoryPoolSizeIsAHardLimit) {
  Backend b = Backend::builder().backend_type(BackendType::Cpu).memory_pool_size(4096).build();
  Buffer x = b.allocate(3000);
  auto e = expect_error(ErrorCode::OutOfMemory, [&] { b.allocate(2000); });
  EXPECT_NE(std::string(e.what()).find("memory_pool_size"), std::string::npos);
  x.free();
  Buffer y = b.allocate(4000);
  EXPECT_EQ(b.memory_stats().live_bytes, 4000u);
}

TEST(Buffer, RoundTripFillCopyAndStats) {
  Backend cpu = Backend::builder().backend_type(BackendType::Cpu).build();
  {
    Buffer a = cpu.allocate(64);
    Buffer b = cpu.allocate(64);
    std::vector<unsigned char> src(64);
    std::iota(src.begin(), src.end(), 0);
    a.copy_from_host(src.data(), 64);
    b.copy_from(a, 32, 16, 8);
    b.fill_pattern("\x01\x02", 2, 40, 8);
    std::vector<unsigned char> out(64);
    b.copy_to_host(out.data(), 64);
    for (int i = 0; i < 32; ++i) EXPECT_EQ(out[8 + i], 16 + i);
    EXPECT_EQ(out[40], 1);
    EXPECT_EQ(out[41], 2);
    EXPECT_EQ(cpu.memory_stats().live_buffers, 2u);
    EXPECT_EQ(cpu.memory_stats().live_bytes, 128u);
  }
  EXPECT_EQ(cpu.memory_stats().live_buffers, 0u);  // released with the last handle
  EXPECT_EQ(cpu.memory_stats().live_bytes, 0u);
  EXPECT_EQ(cpu.memory_stats().total_allocations, 2u);
}

TEST(Buffer, BadSizesAndRanges) {
  Backend cpu = Backend::builder().backend_type(BackendType::Cpu).build();
  auto z = expect_error(ErrorCode::InvalidArgument, [&] { cpu.allocate(0); });
  EXPECT_NE(std::string(z.what()).find("0 bytes"), std::string::npos);
  auto big = expect_error(ErrorCode::OutOfMemory, [&] { cpu.allocate(std::size_t(1) << 60); });
  EXPECT_NE(std::string(big.what()).find("requested"), std::string::npos);
  Buffer b = cpu.allocate(16);
  char tmp[32] = {};
  expect_error(ErrorCode::OutOfRange, [&] { b.copy_from_host(tmp, 17); });
  expect_error(ErrorCode::OutOfRange, [&] { b.copy_to_host(tmp, 8, 9); });
  expect_error(ErrorCode::InvalidArgument, [&] { b.fill_pattern(tmp, 3, 0, 9); });
  Buffer small = cpu.allocate(8);
  expect_error(ErrorCode::OutOfRange, [&] { small.copy_from(b, 16); });
  EXPECT_EQ(cpu.memory_stats().live_bytes, 24u);  // failed calls allocated nothing
}

TEST(Buffer, UseAfterFreeAndDoubleFree) {
  Backend cpu = Backend::builder().backend_type(BackendType::Cpu).build();
  Buffer b = cpu.allocate(32);
  Buffer alias = b;
  b.free();
  EXPECT_FALSE(alias.valid());
  EXPECT_EQ(cpu.memory_stats().live_bytes, 0u);
  char tmp[8];
  auto e = expect_error(ErrorCode::InvalidState, [&] { alias.copy_to_host(tmp, 8); });
  EXPECT_NE(std::string(e.what()).find("after free"), std::string::npos);
  auto d = expect_error(ErrorCode::InvalidState, [&] { alias.free(); });
  EXPECT_NE(std::string(d.what()).find("freed twice"), std::string::npos);
  Buffer empty;
  expect_error(ErrorCode::InvalidState, [&] { empty.free(); });
}

TEST(Stream, AsyncCopiesAndEvents) {
  Backend cpu = Backend::create(BackendType::Cpu);
  Stream s = cpu.create_stream();
  Event start = cpu.create_event(), stop = cpu.create_event();
  Buffer b = cpu.allocate(1024);
  std::vector<float> src(256, 1.5f), dst(256);
  s.record(start);
  b.copy_from_host_async(src.data(), 1024, s);
  b.copy_to_host_async(dst.data(), 1024, s);
  s.record(stop);
  stop.synchronize();
  EXPECT_TRUE(stop.query());
  EXPECT_GE(start.elapsed_ms(stop), 0.0);
  EXPECT_EQ(dst[255], 1.5f);
  Event never = cpu.create_event();
  expect_error(ErrorCode::InvalidState, [&] { (void)never.elapsed_ms(stop); });
  s.wait(stop);
  s.synchronize();
}

TEST(Tensor, CopyChecksShapeAndDtype) {
  Backend cpu = Backend::create(BackendType::Cpu);
  Tensor a = cpu.zeros(Shape{2, 3}, DType::F32);
  std::vector<float> v{1, 2, 3, 4, 5, 6};
  Tensor src = cpu.from_host(v.data(), Shape{3, 2}, DType::F32);
  a.copy_(src.transpose(0, 1));
  EXPECT_EQ(a.to_vector(), (std::vector<float>{1, 3, 5, 2, 4, 6}));
  expect_error(ErrorCode::ShapeMismatch, [&] { a.copy_(src); });
  expect_error(ErrorCode::DTypeMismatch, [&] { a.copy_(src.transpose(0, 1).cast(DType::F64)); });
  EXPECT_EQ(a.to_vector(), (std::vector<float>{1, 3, 5, 2, 4, 6}));  // failed copies wrote nothing
}

TEST(Tensor, ViewsAndHostHelpers) {
  Backend cpu = Backend::create(BackendType::Cpu);
  std::vector<float> v(6);
  std::iota(v.begin(), v.end(), 0.f);
  Tensor t = cpu.from_host(v.data(), Shape{2, 3}, DType::F32);
  Tensor tt = t.transpose(0, 1);
  EXPECT_FALSE(tt.is_contiguous());
  EXPECT_EQ(tt.to_vector(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(t.slice(1, 1, 3).to_vector(), (std::vector<float>{1, 2, 4, 5}));
  EXPECT_EQ(t.slice(1, 0, 3, 2).to_vector(), (std::vector<float>{0, 2, 3, 5}));
  EXPECT_EQ(t.reshape({3, -1}).shape(), (Shape{3, 2}));
  EXPECT_EQ(t.unsqueeze(0).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(t.cast(DType::F16).cast(DType::F32).to_vector(), v);
  EXPECT_EQ(t.cast(DType::I32).to_host<std::int32_t>()[5], 5);
  expect_error(ErrorCode::InvalidArgument, [&] { (void)tt.reshape({6}); });
  expect_error(ErrorCode::ShapeMismatch, [&] { (void)t.reshape({4, 2}); });
  expect_error(ErrorCode::ShapeMismatch, [&] { t.copy_from_host(v.data(), 8); });
  expect_error(ErrorCode::OutOfRange, [&] { (void)t.transpose(0, 2); });
  expect_error(ErrorCode::OutOfRange, [&] { Tensor(t.buffer(), DType::F32, Shape{7}, {1}, 0); });
  Tensor e = cpu.empty(Shape{0, 4}, DType::F32);
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.to_vector().empty());
  expect_error(ErrorCode::InvalidArgument, [&] {
    (void)cpu.empty(Shape{std::int64_t(1) << 40, std::int64_t(1) << 40}, DType::F32);
  });
}
