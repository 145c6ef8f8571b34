#pragma once
// The user-facing handles: Backend (one device of one backend type), Buffer,
// Stream, Event. Handles are cheap to copy and share their state.
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "torsh/core/device.hpp"
#include "torsh/core/dtype.hpp"
#include "torsh/core/error.hpp"
#include "torsh/core/shape.hpp"
#include "torsh/runtime/device_info.hpp"
#include "torsh/runtime/kernel_source.hpp"
#include "torsh/runtime/memory_pool.hpp"
#include "torsh/runtime/op_kinds.hpp"

namespace torsh {

// What a backend implements (torsh/backend/backend_impl.hpp); the handles
// below expose them for code that talks to a device directly.
namespace rt {
class BufferImpl;
class EventImpl;
class StreamImpl;
class DeviceImpl;
}  // namespace rt

class Tensor;
class BackendBuilder;
class Kernel;
class KernelArg;
struct KernelStats;
namespace detail {
struct BackendState;
struct BufferState;
struct StreamState;
struct EventState;
struct Access;  // grants the runtime's internals access to handle state
}  // namespace detail

class Event {
 public:
  void synchronize();
  bool query();
  double elapsed_ms(const Event& later) const;  // needs both recorded
  rt::EventImpl& impl() const;
  Device device() const;

 private:
  friend struct detail::Access;
  friend class Backend;
  friend class Stream;
  std::shared_ptr<detail::EventState> s_;
};

class Stream {
 public:
  void synchronize();
  void record(Event& e);
  void wait(const Event& e);
  Device device() const;
  rt::StreamImpl& impl() const;

  // Runs a user kernel (user_kernel.hpp) on this stream: `grid` work-groups of
  // `block` items. The arguments are checked against the kernel's parameters
  // first; tensors must live on the stream's device and are recorded as used
  // by this stream.
  void launch(const Kernel& k, Dim3 grid, Dim3 block, std::span<const KernelArg> args);
  void launch(const Kernel& k, Dim3 grid, Dim3 block, std::initializer_list<KernelArg> args);
  template <class... A>
  requires(std::is_constructible_v<KernelArg, const A&>&&...) void launch(
      const Kernel& k, Dim3 grid, Dim3 block, const A&... args);  // defined in user_kernel.hpp

 private:
  friend struct detail::Access;
  friend class Backend;
  std::shared_ptr<detail::StreamState> s_;
};

class Buffer {
 public:
  Buffer() = default;
  std::size_t size() const;
  Device device() const;
  bool valid() const;  // false once freed (or default-constructed)

  void copy_from_host(const void* src, std::size_t bytes, std::size_t offset = 0);
  void copy_to_host(void* dst, std::size_t bytes, std::size_t offset = 0) const;
  // Stream-ordered; `src` / `dst` must stay valid until the stream passes this point.
  void copy_from_host_async(const void* src, std::size_t bytes, Stream& s, std::size_t offset = 0);
  void copy_to_host_async(void* dst, std::size_t bytes, Stream& s, std::size_t offset = 0) const;
  // Device -> device; across devices the bytes go through the host.
  void copy_from(const Buffer& src, std::size_t bytes, std::size_t src_offset = 0, std::size_t dst_offset = 0);
  // Stream-ordered copy between buffers of s's device, or between one of them and
  // host memory of Backend::allocate_pinned() for that device; both buffers are
  // recorded as used on `s`. Other host memory is copied before this returns.
  void copy_from_async(const Buffer& src, std::size_t bytes, Stream& s, std::size_t src_offset = 0,
                       std::size_t dst_offset = 0);
  void fill_bytes(unsigned char value);
  void fill_pattern(const void* pattern, std::size_t pattern_size, std::size_t offset, std::size_t bytes);
  // Gives the memory back now; any later use (or a second free) throws InvalidState.
  // Freed memory is reused for work on the stream it was allocated for, which runs
  // after the work already queued there.
  void free();
  // Marks the buffer as used by work on `s` besides the stream it was allocated
  // for: once freed, its memory is reused only after `s` has passed the point of
  // the free (as torch.Tensor.record_stream). The runtime's own async copies
  // record their stream; call this for work queued through DeviceImpl directly.
  void record_stream(const Stream& s) const;
  // The host address of the bytes when the host can address them (CPU and pinned memory), else null.
  void* host_ptr() const;
  // True for page-locked / mapped host memory from allocate_pinned() on a device that has it.
  bool pinned() const;

  // This buffer's own BufferImpl (its identity; host_ptr() at its first byte).
  // Device calls take the pool segment and offset behind it instead. Throws InvalidState after free.
  rt::BufferImpl& impl() const;

 private:
  friend struct detail::Access;
  friend class Backend;
  friend class Tensor;
  detail::BufferState& live() const;  // throws InvalidState for empty or freed handles
  std::shared_ptr<detail::BufferState> s_;
};

struct BackendConfig {
  BackendType type = BackendType::Auto;
  int device_id = 0;
  std::size_t memory_pool_size = 0;  // hard limit on reserved memory; 0: the device's memory
  MemoryPoolConfig pool;             // pool.max_size and memory_pool_size are the same limit
  int num_threads = 0;               // CPU only; 0: one per core
  bool enable_simd = true;           // CPU only
  bool enable_tensor_cores = false;  // CUDA / ROCm only
  bool enable_cudnn = false;         // CUDA only
  bool enable_profiling = false;
};

// Sizes in bytes. "Allocated" counts the pool blocks in use (sizes rounded up),
// "reserved" the memory held from the device, cached blocks included.
struct MemoryStats {
  std::size_t live_buffers = 0;
  std::size_t live_bytes = 0;  // as requested
  std::size_t peak_bytes = 0;
  std::size_t total_allocations = 0;
  std::size_t allocated_bytes = 0, peak_allocated_bytes = 0;
  std::size_t reserved_bytes = 0, peak_reserved_bytes = 0;
  std::size_t segments = 0;            // device allocations held
  std::size_t cache_hits = 0;          // allocations served from cached blocks
  std::size_t device_allocations = 0;  // segments allocated from the device, ever
  std::size_t device_frees = 0;        // segments given back to the device, ever
  std::size_t oom_retries = 0;         // refusals answered by freeing cached blocks and retrying
  std::size_t ooms = 0;                // allocations that failed with OutOfMemory
  std::size_t pending_bytes = 0;       // freed, waiting for other streams to pass the free
  std::size_t free_bytes = 0;          // cached and reusable
  std::size_t largest_free_block = 0;
  std::size_t limit = 0;                  // 0: none
  std::size_t pinned_reserved_bytes = 0;  // host memory held for allocate_pinned()
  std::size_t pinned_allocated_bytes = 0;
  double hit_rate() const { return total_allocations ? double(cache_hits) / double(total_allocations) : 0.0; }
  // External fragmentation of the cache: 0 when the free bytes are one block, towards 1 as they scatter.
  double fragmentation() const { return free_bytes ? 1.0 - double(largest_free_block) / double(free_bytes) : 0.0; }
};

class Backend {
 public:
  // Backend types with at least one usable device, in auto-selection order.
  static std::vector<BackendType> available();
  // Explicit type and device; Auto picks as auto_select() does.
  static Backend create(BackendType type, int device = 0);
  // The best device: CUDA > ROCm > Metal > OpenCL (GPU) > WebGPU > CPU,
  // never a software device over the native CPU backend.
  static Backend auto_select();
  // The best device with at least `bytes` free memory.
  static Backend with_free_memory(std::size_t bytes, BackendType preference = BackendType::Auto);
  static BackendBuilder builder();

  BackendType type() const;
  Device device() const;
  std::string name() const;  // "OpenCL:0 (pthread-skylake...)"
  const DeviceInfo& info() const;
  Capabilities capabilities() const;
  PerformanceHints hints() const;
  const BackendConfig& config() const;
  bool supports(rt::OpKind op, DType dtype) const;

  Buffer allocate(std::size_t bytes);
  // For work on `stream`: the pool reuses memory per stream (see Buffer::free()).
  // Ops run on the default stream; a buffer of another stream that ops use
  // needs record_stream(default_stream()) before it is freed.
  Buffer allocate(std::size_t bytes, const Stream& stream);
  // Host memory this device copies to and from asynchronously (page-locked or
  // mapped; ordinary host memory on the CPU backend), cached like device memory.
  // The buffer lives on the host (device() is cpu:0), so CPU tensors can wrap it.
  Buffer allocate_pinned(std::size_t bytes);
  Stream default_stream() const;
  Stream create_stream();
  Event create_event();
  void synchronize();
  MemoryStats memory_stats() const;
  void reset_peak_memory_stats();
  // Gives every cached, entirely free segment back to the device (the initial
  // reserve stays) and returns how many bytes that was. Blocks never move, so
  // this is also the defragmentation step: later allocations get fresh segments.
  std::size_t empty_cache();

  // Compiles a kernel of the user's own (user_kernel.hpp), or finds it in the
  // in-memory or disk cache. Throws KernelCompile with the build log, or
  // Unsupported when this device does not take the dialect
  // (capabilities().kernel_dialects lists those it takes).
  Kernel compile_kernel(const KernelSource& src);
  KernelStats kernel_stats() const;

  Tensor empty(const Shape& shape, DType dtype);
  Tensor zeros(const Shape& shape, DType dtype);
  Tensor from_host(const void* data, const Shape& shape, DType dtype);

  rt::DeviceImpl& impl() const;

 private:
  friend struct detail::Access;
  friend class BackendBuilder;
  std::shared_ptr<detail::BackendState> s_;
};

class BackendBuilder {
 public:
  BackendBuilder& backend_type(BackendType t) {
    cfg_.type = t;
    return *this;
  }
  BackendBuilder& device_id(int id) {
    cfg_.device_id = id;
    return *this;
  }
  BackendBuilder& memory_pool_size(std::size_t bytes) {
    cfg_.memory_pool_size = bytes;
    return *this;
  }
  BackendBuilder& memory_pool(const MemoryPoolConfig& pool) {
    cfg_.pool = pool;
    return *this;
  }
  BackendBuilder& num_threads(int n) {
    cfg_.num_threads = n;
    return *this;
  }
  BackendBuilder& enable_simd(bool on) {
    cfg_.enable_simd = on;
    return *this;
  }
  BackendBuilder& enable_tensor_cores(bool on) {
    cfg_.enable_tensor_cores = on;
    return *this;
  }
  BackendBuilder& enable_cudnn(bool on) {
    cfg_.enable_cudnn = on;
    return *this;
  }
  BackendBuilder& enable_profiling(bool on) {
    cfg_.enable_profiling = on;
    return *this;
  }
  // Validates the combination, then creates the backend; throws InvalidArgument naming the conflict.
  Backend build() const;

 private:
  BackendConfig cfg_;
};

}  // namespace torsh
