// Allocator cases: alloc/free pairs through the caching pool against the
// device's own allocation (malloc on the CPU backend, clCreateBuffer on
// OpenCL), fragmentation after a mixed-size workload, and pinned-memory copies
// with their overlap with compute.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "bench_common.hpp"
#include "torsh/backend/backend_impl.hpp"

namespace torsh::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::string size_name(std::size_t n) {
  if (n >= (1u << 20)) return std::to_string(n >> 20) + "MiB";
  if (n >= (1u << 10)) return std::to_string(n >> 10) + "KiB";
  return std::to_string(n) + "B";
}

// emit() plus named figures after the main one; the main unit stays one that
// scripts/bench/suite-table.py reads.
void emit_with(const Ctx& c, const std::string& name, double ms, const char* unit, double value,
               const std::vector<std::pair<const char*, double>>& extra) {
  const std::string backend(backend_key(c.dev.type()));
  if (c.json) {
    std::printf("{\"name\":\"%s\",\"backend\":\"%s\",\"median_ms\":%.5f,\"%s\":%.4f", name.c_str(), backend.c_str(), ms,
                unit, value);
    for (const auto& [k, v] : extra) std::printf(",\"%s\":%.6g", k, v);
    std::printf("}\n");
  } else {
    std::printf("%-30s %-7s %10.4f ms %10.4f %s", name.c_str(), backend.c_str(), ms, value, unit);
    for (const auto& [k, v] : extra) std::printf("  %s %.6g", k, v);
    std::printf("\n");
  }
  std::fflush(stdout);
}

// Median over batches of nanoseconds per call of fn.
double ns_per_call(const std::function<void()>& fn, double min_seconds) {
  int batch = 1;
  for (;;) {  // size a batch to about a millisecond
    const auto t0 = Clock::now();
    for (int i = 0; i < batch; ++i) fn();
    if (std::chrono::duration<double>(Clock::now() - t0).count() > 1e-3 || batch >= (1 << 20)) break;
    batch *= 2;
  }
  std::vector<double> per;
  const auto start = Clock::now();
  while (per.size() < 5 || std::chrono::duration<double>(Clock::now() - start).count() < min_seconds) {
    const auto t0 = Clock::now();
    for (int i = 0; i < batch; ++i) fn();
    per.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / batch);
    if (per.size() >= 200) break;
  }
  std::sort(per.begin(), per.end());
  return per[per.size() / 2];
}

void alloc_pairs(Ctx& c) {
  Backend& d = c.dev;
  rt::DeviceImpl& dev = d.impl();
  const char* raw = d.type() == BackendType::Cpu ? "malloc" : "raw";
  for (std::size_t n : {std::size_t(512), std::size_t(64) << 10, std::size_t(4) << 20, std::size_t(64) << 20}) {
    const std::string pool_name = "alloc_free_pool_" + size_name(n),
                      raw_name = std::string("alloc_free_") + raw + "_" + size_name(n);
    if (wanted(c, pool_name)) {
      const double ns = ns_per_call([&] { Buffer b = d.allocate(n); }, c.min_seconds);
      emit_with(c, pool_name, ns / 1e6, "us_per_call", ns / 1e3, {{"mpairs_per_s", 1e3 / ns}});
    }
    if (wanted(c, raw_name)) {
      const double ns = ns_per_call([&] { auto b = dev.allocate(n); }, c.min_seconds);
      emit_with(c, raw_name, ns / 1e6, "us_per_call", ns / 1e3, {{"mpairs_per_s", 1e3 / ns}});
    }
  }
  // Allocating an output and writing it: where the device's own allocation also pays
  // for first-touch page faults (CPU) or lazy backing (PoCL), the pool pays once.
  const unsigned char zero = 0;
  for (std::size_t n : {std::size_t(4) << 20, std::size_t(64) << 20}) {
    const std::string pool_name = "alloc_fill_free_pool_" + size_name(n),
                      raw_name = std::string("alloc_fill_free_") + raw + "_" + size_name(n);
    if (wanted(c, pool_name)) {
      const double ms = median_ms(
          d,
          [&] {
            Buffer b = d.allocate(n);
            b.fill_bytes(0);
            d.synchronize();
          },
          200, c.min_seconds);
      emit(c, pool_name, "u8", ms, "gbps", n / ms / 1e6);
    }
    if (wanted(c, raw_name)) {
      const double ms = median_ms(
          d,
          [&] {
            auto b = dev.allocate(n);
            dev.fill(*b, 0, n, &zero, 1, dev.default_stream());
            dev.synchronize();
          },
          200, c.min_seconds);
      emit(c, raw_name, "u8", ms, "gbps", n / ms / 1e6);
    }
  }
}

// A mixed workload: sizes log-uniform in [256 B, 8 MiB], about 200 live buffers, random frees.
void fragmentation(Ctx& c) {
  struct Variant {
    const char* name;
    AllocationStrategy strategy;
    bool caching;
  };
  for (Variant v :
       {Variant{"bestfit", AllocationStrategy::BestFit, true}, Variant{"firstfit", AllocationStrategy::FirstFit, true},
        Variant{"nocache", AllocationStrategy::BestFit, false}}) {
    const std::string name = std::string("pool_mixed_") + v.name;
    if (!wanted(c, name)) continue;
    MemoryPoolConfig cfg;
    cfg.strategy = v.strategy;
    cfg.caching = v.caching;
    Backend b = Backend::builder().backend_type(c.dev.type()).device_id(c.dev.device().index).memory_pool(cfg).build();
    std::mt19937 rng(42);
    std::uniform_real_distribution<double> log_size(std::log(256.0), std::log(8.0 * (1 << 20)));
    std::vector<Buffer> live;
    const int steps = 20000;
    const auto t0 = Clock::now();
    for (int i = 0; i < steps; ++i) {
      if (live.size() < 100 || (live.size() < 300 && rng() % 2)) {
        live.push_back(b.allocate(static_cast<std::size_t>(std::exp(log_size(rng)))));
      } else {
        const std::size_t k = rng() % live.size();
        live[k] = std::move(live.back());
        live.pop_back();
      }
    }
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / steps;
    const MemoryStats s = b.memory_stats();
    const double mib = 1 << 20;
    emit_with(c, name, ns / 1e6, "us_per_call", ns / 1e3,
              {{"peak_live_mib", s.peak_bytes / mib},
               {"peak_reserved_mib", s.peak_reserved_bytes / mib},
               {"reserved_over_live", s.peak_bytes ? double(s.peak_reserved_bytes) / double(s.peak_bytes) : 0.0},
               {"fragmentation", s.fragmentation()},
               {"hit_rate", s.hit_rate()},
               {"device_allocations", double(s.device_allocations)}});
  }
}

// Host -> device from pageable and from pinned memory, and a pinned copy on its
// own stream beside a matmul on the default stream (overlap: both together over
// the sum of each alone; 0.5 is perfect overlap, 1.0 none).
void pinned(Ctx& c) {
  Backend& d = c.dev;
  if (d.type() == BackendType::Cpu) return;  // host memory is the device's: nothing to pin or overlap
  const bool any =
      wanted(c, "h2d_pageable_64MiB") | wanted(c, "h2d_pinned_64MiB") | wanted(c, "h2d_pinned_overlap_matmul");
  if (!any) return;
  const std::size_t n = std::size_t(64) << 20;
  Buffer dst = d.allocate(n), pin = d.allocate_pinned(n);
  std::vector<unsigned char> pageable(n, 1);
  std::memset(pin.host_ptr(), 1, n);
  Stream s = d.create_stream();
  if (wanted(c, "h2d_pageable_64MiB")) {
    const double ms = median_ms(
        d, [&] { dst.copy_from_host(pageable.data(), n); }, 50, c.min_seconds);
    emit(c, "h2d_pageable_64MiB", "u8", ms, "gbps", n / ms / 1e6);
  }
  auto copy = [&] {
    dst.copy_from_async(pin, n, s);
    s.synchronize();
  };
  if (wanted(c, "h2d_pinned_64MiB")) {
    const double ms = median_ms(d, copy, 50, c.min_seconds);
    emit(c, "h2d_pinned_64MiB", "u8", ms, "gbps", n / ms / 1e6);
  }
  if (wanted(c, "h2d_pinned_overlap_matmul")) {
    Tensor a = ops::randn(d, Shape{512, 512}, 1), b = ops::randn(d, Shape{512, 512}, 2);
    const double t_copy = median_ms(d, copy, 20, c.min_seconds);
    const double t_mm = median_ms(
        d, [&] { ops::matmul(a, b); }, 20, c.min_seconds);
    const double t_both = median_ms(
        d,
        [&] {
          dst.copy_from_async(pin, n, s);
          ops::matmul(a, b);
          s.synchronize();
        },
        20, c.min_seconds);
    emit_with(c, "h2d_pinned_overlap_matmul", t_both, "us_per_call", t_both * 1e3,
              {{"copy_ms", t_copy}, {"matmul_ms", t_mm}, {"both_over_sum", t_both / (t_copy + t_mm)}});
  }
}

}  // namespace

void bench_alloc(Ctx& c) {
  alloc_pairs(c);
  fragmentation(c);
  pinned(c);
}

}  // namespace torsh::cli
