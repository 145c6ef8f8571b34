#pragma once
// What every `torsh bench` case file shares: the context, the timing loop and
// the one output format.
#include <functional>
#include <string>
#include <vector>

#include "torsh/torsh.hpp"

namespace torsh::cli {

struct Ctx {
  Backend dev;
  bool json = false;
  std::string filter;
  double min_seconds = 0.3;
  // Listing: wanted() collects the names --filter selects and answers false, so nothing runs.
  bool listing = false;
  mutable std::vector<std::string> listed;
};

// Median of repeated runs of fn (each followed by a device synchronize), after one warm-up run.
double median_ms(Backend& dev, const std::function<void()>& fn, int max_reps, double min_seconds);
// `note` (optional) qualifies how the figure was made, e.g. a graph's replay mode.
void emit(const Ctx& c, const std::string& name, const char* dtype, double ms, const char* unit, double value,
          const std::string& note = {});
// Whether the case runs (its name contains --filter); every case asks before doing any work.
bool wanted(const Ctx& c, const std::string& name);

// Case groups kept in their own files.
void bench_graph(Ctx& c);
void bench_quant(Ctx& c);        // bench_quant.cpp
void bench_llm(Ctx& c);          // bench_llm.cpp
void bench_user_kernel(Ctx& c);  // bench_user_kernel.cpp
void bench_fft(Ctx& c);          // bench_fft.cpp

}  // namespace torsh::cli
