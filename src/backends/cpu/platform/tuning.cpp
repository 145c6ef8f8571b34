#include "tuning.hpp"

#include <array>
#include <atomic>
#include <bit>
#include <string>
#include <vector>

#include "../simd/simd.hpp"
#include "../simd/stream_store.hpp"
#include "cpu_info.hpp"
#include "isa.hpp"
#include "thread_pool.hpp"
#include "torsh/runtime/autotune.hpp"

namespace torsh::cpu {
namespace {

// Sizes outside [2^kLo, 2^kHi) are decided without measuring: below, waking a
// second thread always costs more than the work; above, splitting always wins.
constexpr int kLo = 10, kHi = 22;

// Per size class: 0 unknown, 1 one thread, 2 all threads. Read on every op,
// so the tuner's lock is taken once per class, not per call.
struct Decisions {
  std::atomic<int> threads{0};
  std::array<std::atomic<std::int8_t>, kHi> choice{};
  std::atomic<std::int8_t> stores{0};  // 0 unknown, 1 plain, 2 streaming
};
Decisions g_decisions;

bool measure_serial_wins(int bucket, int threads) {
  const std::int64_t n = std::int64_t{1} << bucket;
  std::vector<float> x(static_cast<std::size_t>(n), 1.0f), y(x), z(x);
  const auto run = [&](std::int64_t grain) {
    pool().parallel_for(n, grain, [&](std::int64_t b, std::int64_t e) {
      simd::binary_f32(rt::BinaryOp::Add, x.data() + b, y.data() + b, 1, z.data() + b, e - b);
    });
  };
  const std::int64_t split = (n + threads - 1) / threads;
  const std::string pick = autotune::choose(
      {tuning_device_key(threads), "elementwise_threads", "n=2^" + std::to_string(bucket), DType::F32},
      {{"threads=" + std::to_string(threads), [&] { run(split); }}, {"threads=1", [&] { run(n); }}}, 15);
  return pick == "threads=1";
}

void follow_thread_count(int threads) {
  if (g_decisions.threads.load(std::memory_order_relaxed) != threads) {
    for (auto& c : g_decisions.choice) c.store(0, std::memory_order_relaxed);
    g_decisions.stores.store(0, std::memory_order_relaxed);
    g_decisions.threads.store(threads, std::memory_order_relaxed);
  }
}

bool measure_streaming_wins(std::int64_t llc_bytes, int threads) {
  // Twice the cache, so neither kind finds the output there.
  const std::int64_t n = 2 * llc_bytes / static_cast<std::int64_t>(sizeof(float));
  std::vector<float> x(static_cast<std::size_t>(n), 1.0f), z(x);
  const auto run = [&](bool stream) {
    pool().parallel_for(n, (n + threads - 1) / threads, [&](std::int64_t b, std::int64_t e) {
      simd::binary_f32(rt::BinaryOp::Add, x.data() + b, x.data() + b, 1, z.data() + b, e - b, stream);
    });
    stream_fence();
  };
  const std::string pick = autotune::choose(
      {tuning_device_key(threads), "store_kind", "llc=" + std::to_string(llc_bytes >> 20) + "MiB", DType::F32},
      {{"streaming", [&] { run(true); }}, {"plain", [&] { run(false); }}}, 5);
  return pick == "streaming";
}

}  // namespace

std::string tuning_device_key(int threads) {
  static const std::string cpu = [] {
    const DeviceInfo info = query_host_cpu();
    const char* isa = isa_name(isa_cap());
    return "cpu:" + info.name + (info.architecture.empty() ? "" : " " + info.architecture) + " " + isa;
  }();
  return cpu + " x" + std::to_string(threads);
}

bool streaming_stores_win(std::int64_t llc_bytes) {
  if (!autotune::enabled()) return true;
  const int threads = pool().size();
  follow_thread_count(threads);
  std::int8_t c = g_decisions.stores.load(std::memory_order_relaxed);
  if (c == 0) {
    c = measure_streaming_wins(llc_bytes, threads) ? 2 : 1;
    g_decisions.stores.store(c, std::memory_order_relaxed);
  }
  return c == 2;
}

const char* store_kind() {
  switch (g_decisions.stores.load(std::memory_order_relaxed)) {
    case 1: return "plain (measured)";
    case 2: return "streaming (measured)";
    default: return autotune::enabled() ? "streaming until measured" : "streaming (built-in)";
  }
}

std::int64_t elementwise_grain(std::int64_t n, std::int64_t default_grain) {
  if (n < (std::int64_t{1} << kLo) || !autotune::enabled()) return default_grain;
  const int threads = pool().size();
  if (threads == 1 || n >= (std::int64_t{1} << kHi)) return default_grain;
  follow_thread_count(threads);
  const int bucket = std::bit_width(static_cast<std::uint64_t>(n)) - 1;
  std::int8_t c = g_decisions.choice[bucket].load(std::memory_order_relaxed);
  if (c == 0) {
    c = measure_serial_wins(bucket, threads) ? 1 : 2;
    g_decisions.choice[bucket].store(c, std::memory_order_relaxed);
  }
  return c == 1 ? n : (n + threads - 1) / threads;
}

}  // namespace torsh::cpu
