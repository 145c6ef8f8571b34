#pragma once
// Per-op timing on every backend, memory events, an aggregated table and a
// Chrome-trace export (opens in Perfetto and chrome://tracing).
//
// Ops issued through the op layer are timed on the host; on devices with
// events (OpenCL, CUDA) each op is also bracketed by device events, and the
// device-side duration is what the table and the trace's device track show.
// Recording is off by default and costs one relaxed atomic load per op.
//
// A session keeps at most Options::max_events records (ops, scopes, memory
// events) for records() and the trace, the first ones or the latest ones; the
// rest are counted as dropped. The per-op summary is aggregated as ops arrive,
// so it counts every op of the session whatever the cap. Device timings are
// resolved in batches as they accumulate, so the events waiting for them are
// bounded too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "torsh/core/device.hpp"

namespace torsh::profiler {

struct Record {
  enum class Kind { Op, Scope, Alloc, Free };
  Kind kind = Kind::Op;
  std::string name;          // "add", "matmul", a Scope's label, or the allocating op
  std::string device;        // "cpu:0", "opencl:0"
  std::string shapes;        // "[4, 4] [4, 4] -> [4, 4]" for ops
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

struct Options {
  // Records kept for records() and the trace; 0: no limit (memory grows with
  // every op). 1M records take about 200 MB.
  std::size_t max_events = std::size_t(1) << 20;
  enum class Overflow {
    KeepFirst,  // the first max_events; later records are dropped
    KeepLast,   // a ring: the latest max_events; older records are dropped
  };
  Overflow overflow = Overflow::KeepFirst;
};

// Counts of the current (or last) session.
struct SessionStats {
  std::uint64_t events = 0;   // records made (ops, scopes, memory events)
  std::uint64_t kept = 0;     // held for records() and the trace
  std::uint64_t dropped = 0;  // events - kept
  Options options;
};

// Starts a session (dropping earlier records).
void start(const Options& options = {});
SessionStats session_stats();
// Stops recording and resolves pending device timings (waits for the devices).
void stop();
bool active();

// The kept records, oldest first.
std::vector<Record> records();
// Every op of the session (dropped records included), sorted by total time, largest first.
std::vector<OpSummary> summary();
// The summary as an aligned text table; a last line says how many records the cap dropped.
std::string table();
// The kept records; "otherData" says how many events there were and how many were dropped.
std::string chrome_trace_json();
// Streams the trace to the file (no copy of it in memory). Throws
// Error(InvalidArgument) naming the path when it cannot be written.
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
