#include "torsh/runtime/profiler.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <thread>

#include "profiler_internal.hpp"
#include "torsh/core/error.hpp"

namespace torsh::profiler {
namespace detail {

std::atomic<bool> g_active{false};

namespace {
using Clock = std::chrono::steady_clock;

// Device events still to be read are resolved in batches of this many once
// twice as many wait, so a long session holds a bounded number of them.
constexpr std::size_t kResolveBatch = 1024;

// One (op, device) row of the summary, updated as ops arrive.
struct Agg {
  std::uint64_t calls = 0;
  double total_ms = 0;
  bool device_timed = false;
};

struct Pending {
  std::uint64_t seq;  // the record's sequence number (it may have been dropped since)
  Agg* agg;
  double host_dur_us;
  std::unique_ptr<rt::EventImpl> begin, end;
};

struct Session {
  std::mutex mu;
  Clock::time_point t0 = Clock::now();
  Options opt;
  // Unlimited or KeepFirst: records in order. KeepLast: a ring of opt.max_events,
  // record `seq` at seq % max_events.
  std::vector<Record> records;
  std::uint64_t events = 0;  // records made in this session (the next sequence number)
  std::deque<Pending> pending;
  std::map<std::pair<std::string, std::string>, Agg> agg;
  std::map<std::string, long long> evicted_live;  // net bytes of memory records a ring overwrote, per device
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

bool ring(const Session& s) { return s.opt.max_events && s.opt.overflow == Options::Overflow::KeepLast; }

std::uint64_t kept_count(const Session& s) {
  return s.opt.max_events ? std::min<std::uint64_t>(s.events, s.opt.max_events) : s.events;
}

// Kept records have the sequence numbers [first_kept, first_kept + kept_count).
std::uint64_t first_kept(const Session& s) { return ring(s) ? s.events - kept_count(s) : 0; }

// The kept record with sequence number `seq`, or null when the cap dropped it.
Record* kept(Session& s, std::uint64_t seq) {
  if (seq >= s.events) return nullptr;
  const std::uint64_t cap = s.opt.max_events;
  if (!cap) return &s.records[seq];
  if (!ring(s)) return seq < cap ? &s.records[seq] : nullptr;
  if (s.events - seq > cap) return nullptr;
  return &s.records[seq % cap];
}

std::uint64_t push(Session& s, Record&& r) {
  const std::uint64_t seq = s.events++;
  const std::uint64_t cap = s.opt.max_events;
  if (!cap || s.records.size() < cap) {
    s.records.push_back(std::move(r));
  } else if (ring(s)) {
    Record& old = s.records[seq % cap];
    if (old.kind == Record::Kind::Alloc || old.kind == Record::Kind::Free)
      s.evicted_live[old.device] +=
          old.kind == Record::Kind::Alloc ? static_cast<long long>(old.bytes) : -static_cast<long long>(old.bytes);
    old = std::move(r);
  }
  return seq;
}

// Device events answer only once the device has passed them; waiting here, in
// batches and at stop(), is why each op does not. Resolves the oldest `n`.
void resolve_locked(Session& s, std::size_t n) {
  for (; n && !s.pending.empty(); --n) {
    Pending& p = s.pending.front();
    double dev_us = -1;  // the host time stands in when the device cannot say
    try {
      p.end->synchronize();
      dev_us = p.begin->elapsed_ms(*p.end) * 1000.0;
    } catch (const std::exception&) {
    }
    if (Record* r = kept(s, p.seq)) r->device_dur_us = dev_us;
    p.agg->total_ms += (dev_us >= 0 ? dev_us : p.host_dur_us) / 1000.0;
    p.agg->device_timed = p.agg->device_timed || dev_us >= 0;
    s.pending.pop_front();
  }
}

void resolve_all_locked(Session& s) { resolve_locked(s, s.pending.size()); }

const char* overflow_name(Options::Overflow o) { return o == Options::Overflow::KeepLast ? "keep last" : "keep first"; }

// A JSON string; invalid UTF-8 in a user's scope label becomes U+FFFD instead of failing the trace.
void put_string(std::ostream& os, const std::string& v) {
  os << nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void put_number(std::ostream& os, double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  os << buf;
}

// The Chrome trace of the kept records, written as it goes: nothing the size of
// the trace is built in memory.
void write_trace_locked(Session& s, std::ostream& os) {
  resolve_all_locked(s);
  bool first = true;
  auto open = [&] {
    os << (first ? "\n" : ",\n");
    first = false;
  };
  std::map<std::string, int> pids;  // one process per device, so tracks group by device
  auto pid_of = [&](const std::string& dev) {
    auto [it, fresh] = pids.try_emplace(dev, static_cast<int>(pids.size()) + 1);
    if (fresh) {
      open();
      os << R"({"ph":"M","name":"process_name","pid":)" << it->second << R"(,"args":{"name":)";
      put_string(os, dev);
      os << "}}";
      open();
      os << R"({"ph":"M","name":"thread_name","pid":)" << it->second
         << R"(,"tid":1000,"args":{"name":"device timeline"}})";
    }
    return it->second;
  };
  std::map<std::string, long long> live = s.evicted_live;  // bytes per device, for the memory counter track
  std::map<int, double> device_cursor;                     // per device: its stream runs one op at a time
  os << R"({"displayTimeUnit":"ms","otherData":{"events":)" << s.events << R"(,"kept_events":)" << kept_count(s)
     << R"(,"dropped_events":)" << s.events - kept_count(s) << R"(,"max_events":)" << s.opt.max_events
     << R"(,"overflow":")" << overflow_name(s.opt.overflow) << R"("},"traceEvents":[)";
  const std::uint64_t from = first_kept(s), to = from + kept_count(s);
  for (std::uint64_t seq = from; seq < to; ++seq) {
    const Record& r = *kept(s, seq);
    const int pid = pid_of(r.device.empty() ? "host" : r.device);
    switch (r.kind) {
      case Record::Kind::Op:
      case Record::Kind::Scope: {
        open();
        os << R"({"name":)";
        put_string(os, r.name);
        os << R"(,"cat":")" << (r.kind == Record::Kind::Op ? "op" : "scope") << R"(","ph":"X","ts":)";
        put_number(os, r.host_start_us);
        os << R"(,"dur":)";
        put_number(os, r.host_dur_us);
        os << R"(,"pid":)" << pid << R"(,"tid":)" << r.thread;
        if (!r.shapes.empty()) {
          os << R"(,"args":{"shapes":)";
          put_string(os, r.shapes);
          os << "}";
        }
        os << "}";
        if (r.device_dur_us >= 0) {
          // Device work is serialised on the stream: lay it out after the previous op.
          const double ts = std::max(device_cursor[pid], r.host_start_us);
          open();
          os << R"({"name":)";
          put_string(os, r.name);
          os << R"(,"cat":"device","ph":"X","ts":)";
          put_number(os, ts);
          os << R"(,"dur":)";
          put_number(os, r.device_dur_us);
          os << R"(,"pid":)" << pid << R"(,"tid":1000,"args":{"shapes":)";
          put_string(os, r.shapes);
          os << "}}";
          device_cursor[pid] = ts + r.device_dur_us;
        }
        break;
      }
      case Record::Kind::Alloc:
      case Record::Kind::Free: {
        auto& l = live[r.device];
        l += r.kind == Record::Kind::Alloc ? static_cast<long long>(r.bytes) : -static_cast<long long>(r.bytes);
        open();
        os << R"({"name":)";
        put_string(os, r.name);
        os << R"(,"cat":"memory","ph":"i","s":"t","ts":)";
        put_number(os, r.host_start_us);
        os << R"(,"pid":)" << pid << R"(,"tid":)" << r.thread << R"(,"args":{"bytes":)" << r.bytes << "}}";
        open();
        os << R"({"name":"live bytes","ph":"C","ts":)";
        put_number(os, r.host_start_us);
        os << R"(,"pid":)" << pid << R"(,"args":{"bytes":)" << l << "}}";
        break;
      }
    }
  }
  os << "\n]}\n";
}
}  // namespace

double now_us() { return std::chrono::duration<double, std::micro>(Clock::now() - session().t0).count(); }

void record_op(std::string name, std::string device, std::string shapes, double host_start_us, double host_dur_us,
               std::unique_ptr<rt::EventImpl> begin, std::unique_ptr<rt::EventImpl> end) {
  Session& s = session();
  std::lock_guard lk(s.mu);
  Agg& agg = s.agg[{name, device}];
  agg.calls++;
  const bool timed = begin && end;
  if (!timed) agg.total_ms += host_dur_us / 1000.0;
  Record r;
  r.kind = Record::Kind::Op;
  r.name = std::move(name);
  r.device = std::move(device);
  r.shapes = std::move(shapes);
  r.host_start_us = host_start_us;
  r.host_dur_us = host_dur_us;
  r.thread = thread_number(s);
  const std::uint64_t seq = push(s, std::move(r));
  if (timed) {
    s.pending.push_back({seq, &agg, host_dur_us, std::move(begin), std::move(end)});
    if (s.pending.size() >= 2 * kResolveBatch) resolve_locked(s, kResolveBatch);
  }
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
  push(s, std::move(r));
}

}  // namespace detail

void start(const Options& options) {
  auto& s = detail::session();
  {
    std::lock_guard lk(s.mu);
    s.opt = options;
    s.records.clear();
    s.records.shrink_to_fit();
    s.events = 0;
    s.pending.clear();
    s.agg.clear();
    s.evicted_live.clear();
    s.threads.clear();
    s.t0 = detail::Clock::now();
  }
  detail::g_active.store(true);
}

void stop() {
  detail::g_active.store(false);
  auto& s = detail::session();
  std::lock_guard lk(s.mu);
  detail::resolve_all_locked(s);
}

bool active() { return detail::on(); }

SessionStats session_stats() {
  auto& s = detail::session();
  std::lock_guard lk(s.mu);
  SessionStats st;
  st.events = s.events;
  st.kept = detail::kept_count(s);
  st.dropped = st.events - st.kept;
  st.options = s.opt;
  return st;
}

std::vector<Record> records() {
  auto& s = detail::session();
  std::lock_guard lk(s.mu);
  detail::resolve_all_locked(s);
  std::vector<Record> out;
  const std::uint64_t from = detail::first_kept(s), n = detail::kept_count(s);
  out.reserve(n);
  for (std::uint64_t seq = from; seq < from + n; ++seq) out.push_back(*detail::kept(s, seq));
  return out;
}

std::vector<OpSummary> summary() {
  auto& s = detail::session();
  std::vector<OpSummary> out;
  double all = 0;
  {
    std::lock_guard lk(s.mu);
    detail::resolve_all_locked(s);
    for (const auto& [key, a] : s.agg) {
      OpSummary o;
      o.name = key.first;
      o.device = key.second;
      o.calls = a.calls;
      o.total_ms = a.total_ms;
      o.device_timed = a.device_timed;
      all += a.total_ms;
      out.push_back(std::move(o));
    }
  }
  for (auto& o : out) {
    o.mean_ms = o.total_ms / static_cast<double>(o.calls);
    o.share = all > 0 ? o.total_ms / all : 0;
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.total_ms > b.total_ms; });
  return out;
}

std::string table() {
  std::string t;
  char line[256];
  std::snprintf(line, sizeof line, "%-20s %-10s %8s %12s %12s %7s  %s\n", "op", "device", "calls", "total ms",
                "mean ms", "share", "timed on");
  t += line;
  for (const auto& o : summary()) {
    std::snprintf(line, sizeof line, "%-20s %-10s %8llu %12.3f %12.4f %6.1f%%  %s\n", o.name.c_str(), o.device.c_str(),
                  static_cast<unsigned long long>(o.calls), o.total_ms, o.mean_ms, 100.0 * o.share,
                  o.device_timed ? "device" : "host");
    t += line;
  }
  const SessionStats st = session_stats();
  if (st.dropped) {
    std::snprintf(line, sizeof line,
                  "%llu of %llu events dropped from the trace (cap %llu, kept the %s); the table counts every op\n",
                  static_cast<unsigned long long>(st.dropped), static_cast<unsigned long long>(st.events),
                  static_cast<unsigned long long>(st.options.max_events),
                  st.options.overflow == Options::Overflow::KeepLast ? "latest" : "first");
    t += line;
  }
  return t;
}

std::string chrome_trace_json() {
  auto& s = detail::session();
  std::ostringstream os;
  std::lock_guard lk(s.mu);
  detail::write_trace_locked(s, os);
  return os.str();
}

void write_chrome_trace(const std::string& path) {
  auto& s = detail::session();
  std::ofstream f(path, std::ios::binary);
  if (f) {
    std::lock_guard lk(s.mu);
    detail::write_trace_locked(s, f);
    f.flush();
  }
  if (!f)
    throw Error(ErrorCode::InvalidArgument, "cannot write the trace to '" + path + "'",
                {.op = "profiler.write_chrome_trace"}, {"Check that the directory exists and is writable"});
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
  detail::push(s, std::move(r));
}

}  // namespace torsh::profiler
