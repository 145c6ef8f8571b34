#include "torsh/runtime/profiler.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "profiler_internal.hpp"
#include "torsh/core/error.hpp"

namespace torsh::profiler {
namespace detail {

std::atomic<bool> g_active{false};

namespace {
using Clock = std::chrono::steady_clock;

struct Pending {
  std::size_t index;
  std::unique_ptr<rt::EventImpl> begin, end;
};

struct Session {
  std::mutex mu;
  Clock::time_point t0 = Clock::now();
  std::vector<Record> records;
  std::vector<Pending> pending;
  std::map<std::thread::id, std::uint32_t> threads;
};

Session& session() {
  static auto* s = new Session;  // outlives static destructors that may still free buffers
  return *s;
}

std::uint32_t thread_number(Session& s) {
  auto [it, fresh] = s.threads.try_emplace(std::this_thread::get_id(), static_cast<std::uint32_t>(s.threads.size()));
  return it->second;
}

// Device events answer only once the device has passed them; waiting here is
// why stop() (not each op) resolves them.
void resolve_locked(Session& s) {
  for (auto& p : s.pending) {
    try {
      p.end->synchronize();
      s.records[p.index].device_dur_us = p.begin->elapsed_ms(*p.end) * 1000.0;
    } catch (const std::exception&) {
      s.records[p.index].device_dur_us = -1;  // the host time stands in
    }
  }
  s.pending.clear();
}
}  // namespace

double now_us() { return std::chrono::duration<double, std::micro>(Clock::now() - session().t0).count(); }

void record_op(std::string name, std::string device, std::string shapes, double host_start_us, double host_dur_us,
               std::unique_ptr<rt::EventImpl> begin, std::unique_ptr<rt::EventImpl> end) {
  Session& s = session();
  std::lock_guard lk(s.mu);
  Record r;
  r.kind = Record::Kind::Op;
  r.name = std::move(name);
  r.device = std::move(device);
  r.shapes = std::move(shapes);
  r.host_start_us = host_start_us;
  r.host_dur_us = host_dur_us;
  r.thread = thread_number(s);
  s.records.push_back(std::move(r));
  if (begin && end) s.pending.push_back({s.records.size() - 1, std::move(begin), std::move(end)});
}

void record_memory(bool alloc, std::size_t bytes, std::string device) {
  Session& s = session();
  const double t = now_us();
  std::lock_guard lk(s.mu);
  Record r;
  r.kind = alloc ? Record::Kind::Alloc : Record::Kind::Free;
  r.name = alloc ? "alloc" : "free";
  r.device = std::move(device);
  r.host_start_us = t;
  r.bytes = bytes;
  r.thread = thread_number(s);
  s.records.push_back(std::move(r));
}

}  // namespace detail

void start() {
  auto& s = detail::session();
  {
    std::lock_guard lk(s.mu);
    s.records.clear();
    s.pending.clear();
    s.threads.clear();
    s.t0 = detail::Clock::now();
  }
  detail::g_active.store(true);
}

void stop() {
  detail::g_active.store(false);
  auto& s = detail::session();
  std::lock_guard lk(s.mu);
  detail::resolve_locked(s);
}

bool active() { return detail::on(); }

std::vector<Record> records() {
  auto& s = detail::session();
  std::lock_guard lk(s.mu);
  detail::resolve_locked(s);
  return s.records;
}

std::vector<OpSummary> summary() {
  std::map<std::pair<std::string, std::string>, OpSummary> by;
  double all = 0;
  for (const auto& r : records()) {
    if (r.kind != Record::Kind::Op) continue;
    auto& o = by[{r.name, r.device}];
    o.name = r.name;
    o.device = r.device;
    o.calls++;
    const bool dev = r.device_dur_us >= 0;
    o.device_timed = o.device_timed || dev;
    const double ms = (dev ? r.device_dur_us : r.host_dur_us) / 1000.0;
    o.total_ms += ms;
    all += ms;
  }
  std::vector<OpSummary> out;
  for (auto& [k, o] : by) {
    o.mean_ms = o.total_ms / static_cast<double>(o.calls);
    o.share = all > 0 ? o.total_ms / all : 0;
    out.push_back(o);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.total_ms > b.total_ms; });
  return out;
}

std::string table() {
  std::string t;
  char line[256];
  std::snprintf(line, sizeof line, "%-20s %-10s %8s %12s %12s %7s  %s\n", "op", "device", "calls", "total ms", "mean ms",
                "share", "timed on");
  t += line;
  for (const auto& o : summary()) {
    std::snprintf(line, sizeof line, "%-20s %-10s %8llu %12.3f %12.4f %6.1f%%  %s\n", o.name.c_str(), o.device.c_str(),
                  static_cast<unsigned long long>(o.calls), o.total_ms, o.mean_ms, 100.0 * o.share,
                  o.device_timed ? "device" : "host");
    t += line;
  }
  return t;
}

std::string chrome_trace_json() {
  using nlohmann::json;
  json events = json::array();
  std::map<std::string, int> pids;  // one process per device, so tracks group by device
  auto pid_of = [&](const std::string& dev) {
    auto [it, fresh] = pids.try_emplace(dev, static_cast<int>(pids.size()) + 1);
    if (fresh) {
      events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", it->second}, {"args", {{"name", dev}}}});
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", it->second}, {"tid", 1000},
                        {"args", {{"name", "device timeline"}}}});
    }
    return it->second;
  };
  std::map<std::string, long long> live;  // bytes per device, for the memory counter track
  std::map<int, double> device_cursor;  // per device: its stream runs one op at a time
  for (const auto& r : records()) {
    const int pid = pid_of(r.device.empty() ? "host" : r.device);
    switch (r.kind) {
      case Record::Kind::Op:
      case Record::Kind::Scope: {
        json e = {{"name", r.name}, {"cat", r.kind == Record::Kind::Op ? "op" : "scope"}, {"ph", "X"},
                  {"ts", r.host_start_us}, {"dur", r.host_dur_us}, {"pid", pid}, {"tid", r.thread}};
        if (!r.shapes.empty()) e["args"] = {{"shapes", r.shapes}};
        events.push_back(std::move(e));
        if (r.device_dur_us >= 0) {
          // Device work is serialised on the stream: lay it out after the previous op.
          const double ts = std::max(device_cursor[pid], r.host_start_us);
          events.push_back({{"name", r.name}, {"cat", "device"}, {"ph", "X"}, {"ts", ts}, {"dur", r.device_dur_us},
                            {"pid", pid}, {"tid", 1000}, {"args", {{"shapes", r.shapes}}}});
          device_cursor[pid] = ts + r.device_dur_us;
        }
        break;
      }
      case Record::Kind::Alloc:
      case Record::Kind::Free: {
        auto& l = live[r.device];
        l += r.kind == Record::Kind::Alloc ? static_cast<long long>(r.bytes) : -static_cast<long long>(r.bytes);
        events.push_back({{"name", r.name}, {"cat", "memory"}, {"ph", "i"}, {"s", "t"}, {"ts", r.host_start_us},
                          {"pid", pid}, {"tid", r.thread}, {"args", {{"bytes", r.bytes}}}});
        events.push_back({{"name", "live bytes"}, {"ph", "C"}, {"ts", r.host_start_us}, {"pid", pid},
                          {"args", {{"bytes", l}}}});
        break;
      }
    }
  }
  return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump();
}

void write_chrome_trace(const std::string& path) {
  const std::string text = chrome_trace_json();
  std::ofstream f(path, std::ios::binary);
  if (f) f << text;
  if (!f)
    throw Error(ErrorCode::InvalidArgument, "cannot write the trace to '" + path + "'", {.op = "profiler.write_chrome_trace"},
                {"Check that the directory exists and is writable"});
}

Scope::Scope(std::string name) : name_(std::move(name)), on_(detail::on()) {
  if (on_) start_us_ = detail::now_us();
}

Scope::~Scope() {
  if (!on_ || !detail::on()) return;
  const double end = detail::now_us();
  auto& s = detail::session();
  std::lock_guard lk(s.mu);
  Record r;
  r.kind = Record::Kind::Scope;
  r.name = std::move(name_);
  r.device = "host";
  r.host_start_us = start_us_;
  r.host_dur_us = end - start_us_;
  r.thread = detail::thread_number(s);
  s.records.push_back(std::move(r));
}

}  // namespace torsh::profiler
