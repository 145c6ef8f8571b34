#pragma once
// Internal: the process-wide table of backend drivers and the handle states.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "torsh/runtime/backend.hpp"
#include "torsh/runtime/registry.hpp"

namespace torsh::rt {

struct DriverEntry {
  std::shared_ptr<Driver> driver;  // null when unavailable
  BackendStatus status;
};

class Registry {
 public:
  static Registry& get();
  // Entries for every concrete backend type, in auto-selection priority order.
  const std::vector<DriverEntry>& entries();
  DriverEntry& entry(BackendType t);
  // Re-scans the plugin path (tests change TORSH_BACKEND_PATH); loaded plugins stay loaded.
  void rescan();

 private:
  void scan_locked();
  std::mutex mu_;
  bool scanned_ = false;
  std::vector<DriverEntry> entries_;
};

std::shared_ptr<Driver> make_cpu_driver();
// Resizes the CPU backend's worker pool (process-wide, like omp_set_num_threads).
void cpu_set_num_threads(DeviceImpl& cpu, int threads);

struct PluginLoad {
  std::shared_ptr<Driver> driver;
  std::string error;
};
// Loads one plugin file; never throws, reports every failure in `error`.
PluginLoad load_plugin(const std::string& path, BackendType expected);

int auto_priority(BackendType t);  // lower is preferred

}  // namespace torsh::rt

namespace torsh::detail {

struct Access {
  template <class Handle>
  static auto& state(Handle& h) { return h.s_; }
  template <class Handle>
  static const auto& state(const Handle& h) { return h.s_; }
};

struct MemoryCounter {
  std::mutex mu;
  MemoryStats stats;
  std::size_t limit = 0;  // 0: none
};

struct BackendState {
  std::shared_ptr<rt::DeviceImpl> dev;
  Device device;
  BackendConfig cfg;
  std::shared_ptr<MemoryCounter> mem = std::make_shared<MemoryCounter>();
};

struct BufferState {
  std::shared_ptr<BackendState> backend;
  std::unique_ptr<rt::BufferImpl> impl;
  std::size_t size = 0;
  std::mutex mu;
  bool freed = false;
  ~BufferState();
  void release();  // returns memory and updates the counters
};

struct StreamState {
  std::shared_ptr<rt::DeviceImpl> dev;
  Device device;
  std::unique_ptr<rt::StreamImpl> owned;
  rt::StreamImpl* impl = nullptr;
};

struct EventState {
  std::shared_ptr<rt::DeviceImpl> dev;
  Device device;
  std::unique_ptr<rt::EventImpl> impl;
  bool recorded = false;
};

// Allocates through a backend handle, honouring its memory limit; bytes may be 0 (empty tensors).
Buffer allocate_buffer(const std::shared_ptr<BackendState>& b, std::size_t bytes);
std::shared_ptr<BackendState> backend_state(const Backend& b);
std::shared_ptr<BackendState> buffer_backend(const Buffer& b);
Backend backend_from_state(std::shared_ptr<BackendState> s);

}  // namespace torsh::detail
