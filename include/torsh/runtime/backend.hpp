#pragma once
// The user-facing handles: Backend (one device of one backend type), Buffer,
// Stream, Event. Handles are cheap to copy and share their state.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "torsh/core/device.hpp"
#include "torsh/core/dtype.hpp"
#include "torsh/core/shape.hpp"
#include "torsh/runtime/backend_impl.hpp"
#include "torsh/runtime/device_info.hpp"

namespace torsh {

class Tensor;
class BackendBuilder;
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
  void fill_bytes(unsigned char value);
  void fill_pattern(const void* pattern, std::size_t pattern_size, std::size_t offset, std::size_t bytes);
  // Releases the memory now; any later use (or a second free) throws InvalidState.
  void free();

  rt::BufferImpl& impl() const;  // throws InvalidState after free

 private:
  friend struct detail::Access;
  friend class Backend;
  friend class Tensor;
  std::shared_ptr<detail::BufferState> s_;
};

struct BackendConfig {
  BackendType type = BackendType::Auto;
  int device_id = 0;
  std::size_t memory_pool_size = 0;  // 0: no limit beyond the device's memory
  int num_threads = 0;               // CPU only; 0: one per core
  bool enable_simd = true;           // CPU only
  bool enable_tensor_cores = false;  // CUDA / ROCm only
  bool enable_cudnn = false;         // CUDA only
  bool enable_profiling = false;
};

struct MemoryStats {
  std::size_t live_buffers = 0;
  std::size_t live_bytes = 0;
  std::size_t peak_bytes = 0;
  std::size_t total_allocations = 0;
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
  Stream default_stream() const;
  Stream create_stream();
  Event create_event();
  void synchronize();
  MemoryStats memory_stats() const;

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
  BackendBuilder& backend_type(BackendType t) { cfg_.type = t; return *this; }
  BackendBuilder& device_id(int id) { cfg_.device_id = id; return *this; }
  BackendBuilder& memory_pool_size(std::size_t bytes) { cfg_.memory_pool_size = bytes; return *this; }
  BackendBuilder& num_threads(int n) { cfg_.num_threads = n; return *this; }
  BackendBuilder& enable_simd(bool on) { cfg_.enable_simd = on; return *this; }
  BackendBuilder& enable_tensor_cores(bool on) { cfg_.enable_tensor_cores = on; return *this; }
  BackendBuilder& enable_cudnn(bool on) { cfg_.enable_cudnn = on; return *this; }
  BackendBuilder& enable_profiling(bool on) { cfg_.enable_profiling = on; return *this; }
  // Validates the combination, then creates the backend; throws InvalidArgument naming the conflict.
  Backend build() const;

 private:
  BackendConfig cfg_;
};

}  // namespace torsh
