#include "torsh/runtime/autotune.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "cache_dir.hpp"
#include "torsh/version.hpp"

namespace torsh::autotune {
namespace {

using nlohmann::json;

struct Entry {
  std::string choice;
  std::map<std::string, double> ms;  // what each candidate measured
};

struct State {
  std::recursive_mutex mu;           // candidates may run ops that consult the tuner
  std::atomic<bool> enabled{false};  // read on every tuned op without the lock
  bool loaded = false;
  std::string path;
  std::map<std::string, Entry> entries;
  std::vector<std::string> warnings;
  Stats stats;
};

State& state() {
  static auto* s = [] {
    auto* st = new State;
    const char* e = std::getenv("TORSH_AUTOTUNE");
    st->enabled = e && std::string(e) != "0" && std::string(e) != "";
    st->path = default_cache_path();
    return st;
  }();
  return *s;
}

void warn(State& s, const std::string& w) {
  s.warnings.push_back(w);
  std::fprintf(stderr, "torsh: autotune: %s\n", w.c_str());
}

void load_locked(State& s) {
  s.loaded = true;
  s.entries.clear();
  std::ifstream f(s.path);
  if (!f) return;  // no cache yet: nothing to warn about
  json j;
  try {
    j = json::parse(f);
  } catch (const std::exception& e) {
    warn(s, "cache file " + s.path + " is corrupt (" + e.what() + "); ignoring it and measuring again");
    return;
  }
  try {
    const std::string version = j.at("library").get<std::string>();
    if (version != library_version()) {
      warn(s, "cache file " + s.path + " was written by " + version + ", this is " + library_version() +
                  "; its choices are stale, measuring again");
      return;
    }
    for (const auto& [k, v] : j.at("entries").items()) {
      Entry e;
      e.choice = v.at("choice").get<std::string>();
      if (v.contains("ms")) e.ms = v.at("ms").get<std::map<std::string, double>>();
      s.entries[k] = std::move(e);
    }
  } catch (const std::exception& e) {
    s.entries.clear();
    warn(s, "cache file " + s.path + " has an unexpected layout (" + e.what() + "); ignoring it and measuring again");
  }
}

// Written to a temporary file and renamed, so a crash or a concurrent process
// never leaves a half-written cache behind.
void save_locked(State& s) {
  json entries = json::object();
  for (const auto& [k, e] : s.entries) entries[k] = {{"choice", e.choice}, {"ms", e.ms}};
  const json j = {{"format", 1}, {"library", library_version()}, {"entries", entries}};
  std::error_code ec;
  const std::filesystem::path p(s.path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  const std::string tmp = s.path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (f) f << j.dump(2) << '\n';
    if (!f) {
      warn(s, "cannot write the cache file " + s.path + "; choices are kept for this process only");
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, s.path, ec);
  if (ec) {
    warn(s,
         "cannot replace the cache file " + s.path + " (" + ec.message() + "); choices are kept for this process only");
    std::filesystem::remove(tmp, ec);
  }
}

double median_ms(const std::function<void()>& fn, int reps) {
  fn();  // warm-up: caches, page faults, kernel compilation
  std::vector<double> t;
  for (int i = 0; i < std::max(1, reps); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

std::string Key::str() const { return device + "|" + op + "|" + shape_class + "|" + std::string(dtype_name(dtype)); }

std::string library_version() { return TORSH_BUILD_ID; }

void set_enabled(bool on) { state().enabled.store(on); }

bool enabled() { return state().enabled.load(std::memory_order_relaxed); }

std::string default_cache_path() {
  if (const char* p = std::getenv("TORSH_AUTOTUNE_CACHE"); p && *p) return p;
  return torsh::detail::user_cache_root() + "/autotune.json";
}

void set_cache_path(const std::string& path) {
  auto& s = state();
  std::lock_guard lk(s.mu);
  s.path = path.empty() ? default_cache_path() : path;
  load_locked(s);
}

std::string cache_path() {
  auto& s = state();
  std::lock_guard lk(s.mu);
  return s.path;
}

void reload() {
  auto& s = state();
  std::lock_guard lk(s.mu);
  load_locked(s);
}

std::optional<std::string> lookup(const Key& key) {
  auto& s = state();
  std::lock_guard lk(s.mu);
  if (!s.loaded) load_locked(s);
  auto it = s.entries.find(key.str());
  if (it == s.entries.end()) return std::nullopt;
  return it->second.choice;
}

std::string choose(const Key& key, const std::vector<Candidate>& candidates, int reps) {
  if (candidates.empty()) return {};
  auto& s = state();
  std::lock_guard lk(s.mu);
  if (!s.enabled || candidates.size() == 1) return candidates.front().name;
  if (!s.loaded) load_locked(s);
  const std::string k = key.str();
  if (auto it = s.entries.find(k); it != s.entries.end()) {
    // A remembered choice that is no longer offered (a candidate was renamed) is measured anew.
    const bool offered = std::any_of(candidates.begin(), candidates.end(),
                                     [&](const Candidate& c) { return c.name == it->second.choice; });
    if (offered) {
      s.stats.cache_hits++;
      return it->second.choice;
    }
  }
  Entry e;
  double best = 0;
  for (const auto& c : candidates) {
    const double ms = median_ms(c.run, reps);
    e.ms[c.name] = ms;
    if (e.choice.empty() || ms < best) {
      best = ms;
      e.choice = c.name;
    }
  }
  s.stats.measured++;
  s.entries[k] = e;
  save_locked(s);
  return e.choice;
}

Stats stats() {
  auto& s = state();
  std::lock_guard lk(s.mu);
  return s.stats;
}

std::vector<std::string> warnings() {
  auto& s = state();
  std::lock_guard lk(s.mu);
  return s.warnings;
}

}  // namespace torsh::autotune
