// The profiler: per-op records, the summary table, and a Chrome trace that parses.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "torsh/runtime/profiler.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;

namespace {
std::vector<float> iota(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 0.01f * static_cast<float>(i % 97);
  return v;
}

std::optional<Backend> opencl() {
  for (auto t : Backend::available())
    if (t == BackendType::OpenCl) return Backend::create(BackendType::OpenCl);
  return std::nullopt;
}
}  // namespace

TEST(Profiler, OffByDefaultAndRecordsNothing) {
  profiler::stop();
  Backend b = Backend::create(BackendType::Cpu);
  auto v = iota(16);
  Tensor x = b.from_host(v.data(), {4, 4}, DType::F32);
  profiler::start();
  profiler::stop();
  ops::add(x, x);
  EXPECT_FALSE(profiler::active());
  EXPECT_TRUE(profiler::summary().empty());
}

TEST(Profiler, SummaryCountsCallsPerOp) {
  Backend b = Backend::create(BackendType::Cpu);
  auto v = iota(64 * 64);
  Tensor x = b.from_host(v.data(), {64, 64}, DType::F32);
  profiler::start();
  for (int i = 0; i < 3; ++i) ops::add(x, x);
  Tensor m = ops::matmul(x, x);
  ops::softmax(m, -1);
  profiler::stop();
  std::map<std::string, std::uint64_t> calls;
  double share = 0;
  for (const auto& o : profiler::summary()) {
    calls[o.name] += o.calls;
    share += o.share;
    EXPECT_EQ(o.device, "cpu:0");
    EXPECT_GE(o.total_ms, 0);
    EXPECT_FALSE(o.device_timed);  // the CPU runs ops synchronously: host time is the op's time
  }
  EXPECT_EQ(calls["add"], 3u);
  EXPECT_EQ(calls["matmul"], 1u);
  EXPECT_EQ(calls["softmax"], 1u);
  EXPECT_NEAR(share, 1.0, 1e-9);
  const std::string t = profiler::table();
  EXPECT_NE(t.find("matmul"), std::string::npos);
  EXPECT_NE(t.find("calls"), std::string::npos);
}

TEST(Profiler, ChromeTraceParsesAndHoldsTheOps) {
  Backend b = Backend::create(BackendType::Cpu);
  auto v = iota(32 * 32);
  Tensor x = b.from_host(v.data(), {32, 32}, DType::F32);
  profiler::start();
  {
    profiler::Scope layer("layer0");
    ops::gelu(ops::matmul(x, x));
  }
  profiler::stop();
  const auto j = nlohmann::json::parse(profiler::chrome_trace_json());
  ASSERT_TRUE(j.contains("traceEvents"));
  std::set<std::string> names;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    names.insert(e["name"].get<std::string>());
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    EXPECT_TRUE(e.contains("ts") && e.contains("pid") && e.contains("tid"));
  }
  EXPECT_TRUE(names.count("matmul"));
  EXPECT_TRUE(names.count("gelu"));
  EXPECT_TRUE(names.count("layer0"));

  const std::string path = ::testing::TempDir() + "torsh_trace_test.json";
  profiler::write_chrome_trace(path);
  std::ifstream f(path);
  const auto again = nlohmann::json::parse(f);
  EXPECT_EQ(again["traceEvents"].size(), j["traceEvents"].size());
}

TEST(Profiler, UnwritableTracePathIsAClearError) {
  profiler::start();
  profiler::stop();
  try {
    profiler::write_chrome_trace("/nonexistent-dir/trace.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/trace.json"), std::string::npos);
  }
}

TEST(Profiler, OpenClOpsAreTimedOnTheDevice) {
  auto cl = opencl();
  if (!cl) GTEST_SKIP() << "no OpenCL device";
  auto v = iota(256 * 256);
  Tensor x = cl->from_host(v.data(), {256, 256}, DType::F32);
  profiler::start();
  for (int i = 0; i < 4; ++i) ops::add(x, x);
  profiler::stop();
  bool seen = false;
  for (const auto& r : profiler::records()) {
    if (r.kind != profiler::Record::Kind::Op || r.name != "add") continue;
    seen = true;
    EXPECT_EQ(r.device, cl->device().to_string());
    EXPECT_GT(r.device_dur_us, 0.0) << "OpenCL events give device-side durations";
  }
  EXPECT_TRUE(seen);
  const auto j = nlohmann::json::parse(profiler::chrome_trace_json());
  int device_track = 0;
  for (const auto& e : j["traceEvents"])
    if (e.value("cat", "") == "device") ++device_track;
  EXPECT_EQ(device_track, 4);
}

TEST(Profiler, MemoryEventsAndLiveBytesCounter) {
  Backend b = Backend::create(BackendType::Cpu);
  auto v = iota(1024);
  Tensor x = b.from_host(v.data(), {1024}, DType::F32);
  profiler::start();
  { Tensor y = ops::exp(x); }  // one 4 KiB output, allocated and freed
  profiler::stop();
  std::size_t allocs = 0, frees = 0;
  for (const auto& r : profiler::records()) {
    if (r.kind == profiler::Record::Kind::Alloc && r.bytes == 4096) ++allocs;
    if (r.kind == profiler::Record::Kind::Free && r.bytes == 4096) ++frees;
  }
  EXPECT_EQ(allocs, 1u);
  EXPECT_EQ(frees, 1u);
  const auto j = nlohmann::json::parse(profiler::chrome_trace_json());
  int counters = 0;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "C") ++counters;
  EXPECT_EQ(counters, 2);
}
