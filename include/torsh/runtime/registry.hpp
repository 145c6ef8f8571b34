#pragma once
// Which backends exist on this machine, why the others do not, and which one
// auto-selection picks (with its reasons).
#include <cstdint>
#include <string>
#include <vector>

#include "torsh/core/device.hpp"
#include "torsh/runtime/device_info.hpp"

namespace torsh {

struct BackendStatus {
  BackendType type = BackendType::Cpu;
  bool available = false;
  std::string reason;   // why unavailable, or notes when available
  std::string source;   // "built-in" or the plugin path
  std::string version;  // driver / runtime version when loaded
  std::vector<DeviceInfo> devices;
};

// Every concrete backend type, in auto-selection priority order.
std::vector<BackendStatus> backend_statuses();

struct SelectionReport {
  Device chosen;
  std::vector<std::string> reasons;  // one line per backend considered
};
// Explains auto-selection; with min_free_bytes > 0 only devices with that much free memory qualify.
SelectionReport explain_selection(std::uint64_t min_free_bytes = 0);

// The summary `torsh info` prints.
std::string backend_summary();

// Directories searched for plugins: TORSH_BACKEND_PATH entries, then the directory of libtorsh.
std::vector<std::string> plugin_search_path();

}  // namespace torsh
