#pragma once
// Auto-tuning: where an op has several implementations or parameters, measure
// each once per (device, op, shape class, dtype) and remember the fastest in a
// JSON cache file, so later runs start tuned.
//
// Off by default (measuring costs time on first use); enable with
// autotune::set_enabled(true) or TORSH_AUTOTUNE=1. The cache lives at
// $TORSH_AUTOTUNE_CACHE, else $XDG_CACHE_HOME/torsh/autotune.json, else
// $HOME/.cache/torsh/autotune.json (an empty or relative XDG_CACHE_HOME or
// HOME is ignored; then the passwd entry's home, then
// ${TMPDIR:-/tmp}/torsh-<uid>/autotune.json: never the current directory).
// A corrupt, stale (other library version) or unwritable cache gives a
// warning and falls back to measuring.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "torsh/core/dtype.hpp"

namespace torsh::autotune {

struct Key {
  std::string device;       // "cpu:AMD EPYC x2", "opencl:pthread-skylake..."
  std::string op;           // "elementwise_threads", "work_group_1d", ...
  std::string shape_class;  // e.g. "n=2^16"
  DType dtype = DType::F32;
  std::string str() const;
};

// One implementation choice. run() must leave no trace (scratch data only):
// it is called several times while measuring.
struct Candidate {
  std::string name;
  std::function<void()> run;
};

struct Stats {
  std::size_t measured = 0;    // decisions made by measuring in this process
  std::size_t cache_hits = 0;  // decisions answered from memory or the file
};

void set_enabled(bool on);
bool enabled();
void set_cache_path(const std::string& path);  // also reloads it; "" goes back to default_cache_path()
std::string cache_path();
// Where the cache lives when no path is set, from the environment as it is now.
std::string default_cache_path();

// The remembered choice for `key`, or the fastest candidate after measuring
// each (median of `reps` runs after a warm-up), which is then remembered and
// saved. With one candidate, or when disabled, the first candidate's name.
std::string choose(const Key& key, const std::vector<Candidate>& candidates, int reps = 5);
std::optional<std::string> lookup(const Key& key);

// Forgets the in-memory decisions (the file stays) and re-reads the file.
void reload();
Stats stats();
// Warnings issued so far (each is also printed once to stderr).
std::vector<std::string> warnings();

// The library version the cache entries are stamped with.
std::string library_version();

}  // namespace torsh::autotune
