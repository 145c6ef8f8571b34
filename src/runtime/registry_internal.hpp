#pragma once
// Internal: the process-wide table of backend drivers and the handle states.
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "torsh/backend/backend_impl.hpp"
#include "torsh/runtime/backend.hpp"
#include "torsh/runtime/registry.hpp"

namespace torsh::rt {

struct DriverEntry {
  std::shared_ptr<Driver> driver;  // null when unavailable
  BackendStatus status;
  bool probed = false;  // plugin looked for and status filled since the table was built or rescanned
};

// Plugins load on demand, one backend type at a time: a process that names
// one backend maps only that backend's plugin (the OpenCL one alone pulls in
// the ICD loader and PoCL/LLVM, tens of MB resident). An entry, once probed,
// is not changed again until rescan(), so the references handed out stay
// valid and readable without the lock.
class Registry {
 public:
  static Registry& get();
  // Entries for every concrete backend type, in auto-selection priority order;
  // loads every plugin not loaded yet.
  const std::vector<DriverEntry>& entries();
  // One type's entry; loads only that type's plugin (the CPU is built in).
  DriverEntry& entry(BackendType t);
  // Re-scans the plugin path (tests change TORSH_BACKEND_PATH); loaded plugins
  // stay loaded. The path is read now; each plugin is looked for when next asked.
  void rescan();
  // Whether `t`'s plugin has been looked for since the table was built or rescanned.
  bool probed(BackendType t);

 private:
  void init_locked();
  void probe_locked(DriverEntry& e);
  std::mutex mu_;
  std::vector<DriverEntry> entries_;  // built once, in priority order; never resized after
  std::vector<std::string> path_;     // the plugin search path when the table was built or rescanned
};

std::shared_ptr<Driver> make_cpu_driver();
// Resizes the CPU backend's worker pool (process-wide, like omp_set_num_threads).
void cpu_set_num_threads(DeviceImpl& cpu, int threads);

struct PluginLoad {
  std::shared_ptr<Driver> driver;
  std::string error;
  std::string note;  // with a driver: what the plugin said about its environment
};
// Loads one plugin file; never throws, reports every failure in `error` (valid UTF-8).
PluginLoad load_plugin(const std::string& path, BackendType expected);
// Text from outside the library (a plugin's words, driver strings, file paths)
// as valid UTF-8 without control characters: what is not becomes U+FFFD.
std::string valid_utf8(std::string_view text);

int auto_priority(BackendType t);  // lower is preferred

// Why `path` is not a loadable ELF shared library for this process (wrong
// architecture or class, no ELF header, unreadable), or empty when its header
// matches: dlopen's own message says less (glibc answers "No such file or
// directory" for another architecture).
std::string elf_mismatch(const std::string& path);

// Why the plugin file of `t` is in none of `dirs` (":"-joined): whether this
// libtorsh's build left the plugin out ("not built", with the CMake option
// that decides it) or built it without it being installed beside libtorsh
// ("not shipped").
std::string missing_plugin_reason(BackendType t, const std::string& file, const std::string& dirs);

}  // namespace torsh::rt

namespace torsh::detail {

struct Access {
  template <class Handle>
  static auto& state(Handle& h) {
    return h.s_;
  }
  template <class Handle>
  static const auto& state(const Handle& h) {
    return h.s_;
  }
  // A contiguous tensor over b, which was allocated for exactly its shape (Tensor's unchecked constructor).
  static Tensor fresh_tensor(Buffer&& b, DType dtype, const Shape& shape);
};

class MemoryPool;
struct PoolBlock;

struct BackendState {
  std::shared_ptr<rt::DeviceImpl> dev;
  Device device;
  BackendConfig cfg;
  rt::StreamImpl* default_stream = nullptr;  // dev->default_stream(), the key of ordinary allocations
  std::shared_ptr<MemoryPool> pool;          // device memory
  std::shared_ptr<MemoryPool> host_pool;     // allocate_pinned(); made on first use
  std::mutex host_pool_mu;
};

// What Buffer::impl() hands out for pooled memory: the buffer's own identity
// and host address. Device calls get the segment and offset instead (raw()).
class BlockView final : public rt::BufferImpl {
 public:
  std::size_t size() const override { return size_; }
  void* host_ptr() const override {
    void* base = raw_ ? raw_->host_ptr() : nullptr;
    return base ? static_cast<char*>(base) + offset_ : nullptr;
  }
  rt::BufferImpl* raw_ = nullptr;
  std::size_t offset_ = 0;
  std::size_t size_ = 0;
};

// A buffer is a pool block (pool + block) or memory of its own (impl), e.g. a
// wrapper of external host memory.
struct BufferState {
  std::shared_ptr<BackendState> backend;   // the device it lives on, for ops and copies (keeps its pool alive)
  MemoryPool* pool = nullptr;              // owns `block`
  std::shared_ptr<MemoryPool> pool_owner;  // when that is not backend->pool (pinned memory)
  PoolBlock* block = nullptr;
  BlockView view;
  std::unique_ptr<rt::BufferImpl> impl;
  std::size_t size = 0;
  std::mutex mu;
  bool freed = false;
  BufferState() {}  // user-provided: make_shared then skips zeroing the whole state first
  ~BufferState();
  void release();  // gives the memory back
  // The storage device calls address and this buffer's byte offset in it.
  rt::BufferImpl& raw() const { return block ? *view.raw_ : *impl; }
  std::size_t offset() const { return block ? view.offset_ : 0; }
  rt::BufferImpl& own() { return block ? static_cast<rt::BufferImpl&>(view) : *impl; }
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

// Allocates from the backend's pool for use on `stream` (null: the default
// stream); bytes may be 0 (empty tensors).
Buffer allocate_buffer(const std::shared_ptr<BackendState>& b, std::size_t bytes, rt::StreamImpl* stream = nullptr);
// Backend::empty for the backend behind a state pointer (no handle copy).
Tensor empty_on(const std::shared_ptr<BackendState>& b, const Shape& shape, DType dtype);
// A backend state for `dev` with its pool (the pool's initial reserve is allocated here).
std::shared_ptr<BackendState> make_backend_state(std::shared_ptr<rt::DeviceImpl> dev, Device device, BackendConfig cfg);
std::shared_ptr<BackendState> backend_state(const Backend& b);
// Throws OutOfRange unless [off, off + bytes) lies in the buffer.
void check_buffer_range(const char* op, std::size_t off, std::size_t bytes, const BufferState& b);
// Throws InvalidArgument for a null host pointer with bytes to copy.
void check_host_pointer(const char* op, const void* p, std::size_t bytes, const BufferState& b);
std::shared_ptr<BackendState> buffer_backend(const Buffer& b);
Backend backend_from_state(std::shared_ptr<BackendState> s);

}  // namespace torsh::detail
