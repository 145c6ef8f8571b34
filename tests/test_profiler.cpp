// The profiler: per-op records, the summary table, and a Chrome trace that parses.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
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

namespace {
// Resident set size of this process, from /proc/self/statm.
std::size_t resident_bytes() {
  std::ifstream f("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * 4096;
}

std::uint64_t other_data(const nlohmann::json& j, const char* key) {
  return j.at("otherData").at(key).get<std::uint64_t>();
}
}  // namespace

TEST(Profiler, EventCapKeepsTheFirstRecordsAndTheTableCountsEveryOp) {
  Backend b = Backend::create(BackendType::Cpu);
  auto v = iota(16);
  Tensor x = b.from_host(v.data(), {16}, DType::F32);
  profiler::Options o;
  o.max_events = 100;
  profiler::start(o);
  for (int i = 0; i < 1000; ++i) ops::add(x, x);  // an op, its output's alloc and free: 3 events each
  profiler::stop();
  const auto st = profiler::session_stats();
  EXPECT_EQ(st.events, 3000u);
  EXPECT_EQ(st.kept, 100u);
  EXPECT_EQ(st.dropped, 2900u);
  const auto rec = profiler::records();
  ASSERT_EQ(rec.size(), 100u);
  for (std::size_t i = 1; i < rec.size(); ++i) EXPECT_LE(rec[i - 1].host_start_us, rec[i].host_start_us);
  std::uint64_t adds = 0;
  for (const auto& s : profiler::summary())
    if (s.name == "add") adds += s.calls;
  EXPECT_EQ(adds, 1000u) << "the table is aggregated as ops arrive, dropped or not";
  const std::string t = profiler::table();
  EXPECT_NE(t.find("2900 of 3000 events dropped"), std::string::npos) << t;
  const auto j = nlohmann::json::parse(profiler::chrome_trace_json());
  EXPECT_EQ(other_data(j, "events"), 3000u);
  EXPECT_EQ(other_data(j, "kept_events"), 100u);
  EXPECT_EQ(other_data(j, "dropped_events"), 2900u);
  EXPECT_EQ(other_data(j, "max_events"), 100u);
  std::size_t ops = 0;
  for (const auto& e : j["traceEvents"])
    if (e.value("cat", "") == "op") ++ops;
  EXPECT_GT(ops, 0u);
  EXPECT_LE(ops, 100u);
}

TEST(Profiler, RingKeepsTheLatestRecordsInOrder) {
  profiler::Options o;
  o.max_events = 10;
  o.overflow = profiler::Options::Overflow::KeepLast;
  profiler::start(o);
  for (int i = 0; i < 1000; ++i) profiler::Scope s(std::to_string(i));
  profiler::stop();
  const auto rec = profiler::records();
  ASSERT_EQ(rec.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(rec[i].name, std::to_string(990 + i));
  EXPECT_EQ(profiler::session_stats().dropped, 990u);
  const auto j = nlohmann::json::parse(profiler::chrome_trace_json());
  EXPECT_EQ(j["otherData"]["overflow"], "keep last");
}

TEST(Profiler, RingKeepsTheLiveBytesOfDroppedMemoryEvents) {
  Backend b = Backend::create(BackendType::Cpu);
  profiler::Options o;
  o.max_events = 4;
  o.overflow = profiler::Options::Overflow::KeepLast;
  profiler::start(o);
  std::vector<Tensor> live;
  for (int i = 0; i < 20; ++i) live.push_back(b.empty({1024}, DType::F32));  // 20 x 4 KiB held
  profiler::stop();
  const auto j = nlohmann::json::parse(profiler::chrome_trace_json());
  long long last = -1;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "C") last = e["args"]["bytes"].get<long long>();
  EXPECT_EQ(last, 20 * 4096) << "the counter starts from the bytes of the records the ring overwrote";
}

TEST(Profiler, UnlimitedSessionKeepsEverything) {
  profiler::Options o;
  o.max_events = 0;
  profiler::start(o);
  for (int i = 0; i < 5000; ++i) profiler::Scope s("s");
  profiler::stop();
  EXPECT_EQ(profiler::records().size(), 5000u);
  EXPECT_EQ(profiler::session_stats().dropped, 0u);
  EXPECT_EQ(profiler::table().find("dropped"), std::string::npos);
}

TEST(Profiler, ALongSessionStaysWithinItsCap) {
  // Three million records would take about 450 MB kept; the default cap keeps 1M at most,
  // and a cap of 1000 keeps memory flat.
  profiler::Options o;
  o.max_events = 1000;
  profiler::start(o);
  const std::size_t before = resident_bytes();
  for (int i = 0; i < 3'000'000; ++i) profiler::Scope s("a scope label longer than the small-string buffer");
  const std::size_t grown = resident_bytes() - std::min(before, resident_bytes());
  profiler::stop();
  EXPECT_EQ(profiler::session_stats().events, 3'000'000u);
  EXPECT_EQ(profiler::records().size(), 1000u);
#ifndef __SANITIZE_ADDRESS__  // ASan's quarantine holds freed memory, so resident size grows regardless
  EXPECT_LT(grown, std::size_t(32) << 20) << "resident memory grew by " << grown << " bytes";
#else
  (void)grown;
#endif
}

TEST(Profiler, OpenClDeviceTimingsResolveInBatchesAndCountEveryOp) {
  auto cl = opencl();
  if (!cl) GTEST_SKIP() << "no OpenCL device";
  auto v = iota(64);
  Tensor x = cl->from_host(v.data(), {64}, DType::F32);
  Tensor out = cl->empty({64}, DType::F32);
  profiler::Options o;
  o.max_events = 16;
  profiler::start(o);
  for (int i = 0; i < 5000; ++i) ops::binary_out(rt::BinaryOp::Add, x, x, out);
  profiler::stop();
  std::uint64_t calls = 0;
  bool device = false;
  for (const auto& s : profiler::summary())
    if (s.name == "add") {
      calls += s.calls;
      device = device || s.device_timed;
    }
  EXPECT_EQ(calls, 5000u);
  EXPECT_TRUE(device);
  EXPECT_EQ(profiler::records().size(), 16u);
}
