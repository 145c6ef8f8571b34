#pragma once
// Per-op timing on every backend, memory events, an aggregated table and a
// Chrome-trace export (opens in Perfetto and chrome://tracing).
//
// Ops issued through the op layer are timed on the host; on devices with
// events (OpenCL, CUDA) each op is also bracketed by device events, and the
// device-side duration is what the table and the trace's device track show.
// Recording is off by default and costs one relaxed atomic load per op.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "torsh/core/device.hpp"

namespace torsh::profiler {

struct Record {
  enum class Kind { Op, Scope, Alloc, Free };
  Kind kind = Kind::Op;
  std::string name;    // "add", "matmul", a Scope's label, or the allocating op
  std::string device;  // "cpu:0", "opencl:0"
  std::string shapes;  // "[4, 4] [4, 4] -> [4, 4]" for ops
  double host_start_us = 0;  // since start()
  double host_dur_us = 0;
  double device_dur_us = -1;  // < 0: the device has no event timing
  std::size_t bytes = 0;      // Alloc / Free
  std::uint32_t thread = 0;   // small per-thread number, stable within a session
};

struct OpSummary {
  std::string name;
  std::string device;
  std::uint64_t calls = 0;
  double total_ms = 0;  // device time where measured, else host time
  double mean_ms = 0;
  double share = 0;  // of all op time in the session, 0..1
  bool device_timed = false;
};

// Starts a session (dropping earlier records).
void start();
// Stops recording and resolves pending device timings (waits for the devices).
void stop();
bool active();

std::vector<Record> records();
// Sorted by total time, largest first.
std::vector<OpSummary> summary();
// The summary as an aligned text table.
std::string table();
std::string chrome_trace_json();
// Throws Error(InvalidArgument) naming the path when it cannot be written.
void write_chrome_trace(const std::string& path);

// Times a user-named region (a layer, a training step) on the host.
class Scope {
 public:
  explicit Scope(std::string name);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  std::string name_;
  double start_us_ = 0;
  bool on_ = false;
};

}  // namespace torsh::profiler
