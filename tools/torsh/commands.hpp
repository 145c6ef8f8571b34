#pragma once
// The commands of the torsh CLI, each taking its options already parsed and
// checked by main.cpp (CLI11).
#include <cstddef>
#include <string>

namespace torsh::cli {

struct InfoOptions {
  bool json = false;
};

struct DemoOptions {
  std::string backend = "auto";
  std::string size = "256";  // validated by demo() against the memory available
};

struct BenchOptions {
  bool json = false;
  bool list = false;  // print the case names (after --filter) and run nothing
  std::string filter;
  std::string backend = "cpu";
  int threads = 2;
  double min_seconds = 0.3;
  std::string profile;  // Chrome trace path; empty: no profiling
  std::size_t profile_max_events = std::size_t(1) << 20;
  bool profile_keep_last = false;
};

int info(const InfoOptions& opt);
int demo(const DemoOptions& opt);
// Returns 2 (usage error) when --filter matches no case.
int bench(const BenchOptions& opt);

}  // namespace torsh::cli
