#pragma once
// The WebGPU backend on wgpu-native. A device has one queue, so every stream
// of a device is that queue: work is encoded into one open command encoder
// (dispatches and buffer copies in the order they are issued) and submitted
// when something must see it (a read, an event, a synchronize) or after
// kSubmitEvery commands. Buffers are storage buffers used whole or through a
// window (bindings are limited to maxStorageBufferBindingSize); kernels are
// WGSL (kernels/*.wgsl) compiled into pipelines on first use (program.cpp).
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "torsh/backend/backend_impl.hpp"
#include "wgpu_error.hpp"

namespace torsh::webgpu {

class WebGpuDevice;

class WebGpuBuffer final : public rt::BufferImpl {
 public:
  WebGpuBuffer(WGPUBuffer buf, std::size_t size, std::size_t allocated)
      : buf_(buf), size_(size), allocated_(allocated) {}
  // wgpu keeps the memory alive while submitted or encoded work still uses it.
  ~WebGpuBuffer() override { wgpuBufferRelease(buf_); }
  WebGpuBuffer(const WebGpuBuffer&) = delete;
  WebGpuBuffer& operator=(const WebGpuBuffer&) = delete;
  std::size_t size() const override { return size_; }
  WGPUBuffer handle() const { return buf_; }
  std::size_t allocated() const { return allocated_; }  // size rounded up to whole 4-byte words

 private:
  WGPUBuffer buf_;
  std::size_t size_, allocated_;
};

// Every stream of a device is its one queue, in issue order.
class WebGpuStream final : public rt::StreamImpl {
 public:
  explicit WebGpuStream(WebGpuDevice& dev) : dev_(dev) {}
  void synchronize() override;
  void record(rt::EventImpl& e) override;
  // One queue: whatever the event marks was issued before anything issued after this call.
  void wait(rt::EventImpl&) override {}
  WebGpuDevice& device() const { return dev_; }

 private:
  WebGpuDevice& dev_;
};

// A submission index: done once the queue has finished that submission. On
// adapters with timestamp queries, recording also writes the device's clock
// (an empty compute pass that stamps its beginning), which elapsed_ms reads.
class WebGpuEvent final : public rt::EventImpl {
 public:
  explicit WebGpuEvent(WebGpuDevice& dev) : dev_(dev) {}
  ~WebGpuEvent() override;
  WebGpuEvent(const WebGpuEvent&) = delete;
  WebGpuEvent& operator=(const WebGpuEvent&) = delete;
  void synchronize() override;
  bool query() override;
  double elapsed_ms(rt::EventImpl& later) override;
  void record();

 private:
  std::uint64_t ticks();  // the stamped device time, after synchronize()
  WebGpuDevice& dev_;
  WGPUSubmissionIndex index_ = 0;
  bool recorded_ = false;
  WGPUQuerySet stamp_ = nullptr;   // one timestamp query
  WGPUBuffer resolved_ = nullptr;  // where it is resolved (8 bytes)
};

// A buffer range bound to one kernel argument.
struct Binding {
  WGPUBuffer buffer = nullptr;
  std::uint64_t offset = 0, size = 0;
};

class WebGpuDevice final : public rt::DeviceImpl {
 public:
  WebGpuDevice(int index, WGPUInstance instance, WGPUAdapter adapter);
  ~WebGpuDevice() override;
  WebGpuDevice(const WebGpuDevice&) = delete;
  WebGpuDevice& operator=(const WebGpuDevice&) = delete;

  BackendType type() const override { return BackendType::WebGpu; }
  const DeviceInfo& info() const override { return info_; }
  Capabilities capabilities() const override { return caps_; }
  PerformanceHints hints() const override;

  std::unique_ptr<rt::BufferImpl> allocate(std::size_t bytes) override;
  std::unique_ptr<rt::StreamImpl> create_stream() override { return std::make_unique<WebGpuStream>(*this); }
  rt::StreamImpl& default_stream() override { return default_stream_; }
  std::unique_ptr<rt::EventImpl> create_event() override { return std::make_unique<WebGpuEvent>(*this); }
  void synchronize() override { wait(submit()); }

  void write(rt::BufferImpl& dst, std::size_t off, const void* src, std::size_t n, rt::StreamImpl& s,
             bool blocking) override;
  void read(rt::BufferImpl& src, std::size_t off, void* dst, std::size_t n, rt::StreamImpl& s, bool blocking) override;
  void copy(rt::BufferImpl& src, std::size_t soff, rt::BufferImpl& dst, std::size_t doff, std::size_t n,
            rt::StreamImpl& s) override;
  void fill(rt::BufferImpl& dst, std::size_t off, std::size_t n, const void* pattern, std::size_t psize,
            rt::StreamImpl& s) override;

  // User kernels in WGSL (user_kernel.cpp; the binding convention is described there).
  std::vector<KernelDialect> kernel_dialects() const override { return {KernelDialect::Wgsl}; }
  std::string kernel_compiler_id() const override;
  rt::KernelBinary build_kernel(const rt::UserKernelSpec& spec) override;
  std::unique_ptr<rt::UserKernelImpl> load_kernel(const rt::UserKernelSpec& spec,
                                                  std::span<const std::uint8_t> binary) override;

  // For the op files.
  const std::string& label() const { return label_; }  // "webgpu:0 (adapter name)"
  const WGPULimits& limits() const { return limits_; }
  // The loop iterations one invocation may run here, all its loops together.
  // llvmpipe (lavapipe) counts every loop iteration of an invocation against
  // one budget of 65535 and silently leaves the loops once it is spent: a
  // 70000-term dot product summed 65535 terms, a tiled one left tiles
  // unwritten, a sum of 8.4M values lost half of them, and softmax left the
  // tail of long rows zero. Ops decline (the CPU runs them) what would pass
  // half of that budget, a margin for the iterations the bounds below do
  // not count (loops an invocation skips still cost a few; nested loops
  // about outer x (inner + 2)). Elsewhere no limit.
  std::int64_t max_loop_trip() const { return info_.software ? 32768 : INT64_MAX; }
  // Runs `entry` of kernels/<module>.wgsl over groups_x * groups_y * groups_z work-groups
  // with `bindings` in binding order and `params` (u32 words) as the last binding.
  void dispatch(const char* module, const char* entry, std::span<const Binding> bindings,
                std::span<const std::uint32_t> params, std::uint32_t groups_x, std::uint32_t groups_y = 1,
                std::uint32_t groups_z = 1);
  // Submits everything encoded so far; its index.
  WGPUSubmissionIndex submit();
  // Blocks until submission `index` has finished; throws what the device reported meanwhile.
  void wait(WGPUSubmissionIndex index);
  bool done(WGPUSubmissionIndex index);
  // Timestamp queries (for events): whether the device has them, and the tools.
  bool timestamps() const { return timestamps_; }
  void stamp(WGPUQuerySet set, WGPUBuffer resolved);
  // Blocking read of raw buffer bytes (n and off multiples of 4 not required).
  void read_raw(WGPUBuffer src, std::size_t off, void* dst, std::size_t n);
  WGPUDevice handle() const { return device_; }
  WGPUQueue queue() const { return queue_; }
  // Compiles a whole WGSL module and drops it: KernelCompile with wgpu's diagnostic when it fails.
  void check_wgsl(const std::string& source, const std::string& label);
  // A copy between buffers at any byte offsets, encoded in issue order.
  struct ByteCopy {
    WGPUBuffer src = nullptr;
    std::uint64_t src_offset = 0;
    WGPUBuffer dst = nullptr;
    std::uint64_t dst_offset = 0, bytes = 0;
  };
  // Encodes `before`, one dispatch of `pipeline` with the bind group `group` describes, then
  // `after`, with nothing of another thread in between (user kernels' staged tensors go in and
  // out so). With `validate`, the dispatch is checked before anything is submitted: what WebGPU
  // refuses (a binding smaller than the shader needs, ...) throws InvalidArgument naming
  // `what`, and the copies and the dispatch are dropped.
  void dispatch_checked(WGPUComputePipeline pipeline, const WGPUBindGroupDescriptor& group,
                        std::span<const ByteCopy> before, std::span<const ByteCopy> after, std::uint32_t groups_x,
                        std::uint32_t groups_y, std::uint32_t groups_z, bool validate, const std::string& what);
  // A buffer of this device (OutOfMemory with the device's limits when it cannot be made).
  WGPUBuffer make_buffer(std::uint64_t bytes, WGPUBufferUsage usage, const char* what);
  // Runs f() in an error scope of `filter` and returns what it caught. Scopes are a
  // stack per device, so one thread at a time pushes and pops.
  template <class F>
  ScopeResult scoped(WGPUErrorFilter filter, F&& f) {
    std::lock_guard lk(scope_mu_);
    wgpuDevicePushErrorScope(device_, filter);
    f();
    return pop_scope(instance_, device_);
  }
  // Called by wgpu's error callbacks.
  void report_error(WGPUErrorType type, const std::string& message);
  void mark_completed(WGPUSubmissionIndex index);

 private:
  WGPUComputePipeline pipeline(const char* module, const char* entry);
  // The open encoder (created on demand); mu_ must be held.
  WGPUCommandEncoder encoder_locked();
  WGPUSubmissionIndex submit_locked();
  // Finishes the open encoder into finished_ (submitted next, in order).
  void finish_encoder_locked();
  void encode_dispatch_locked(WGPUComputePipeline p, WGPUBindGroup bg, std::uint32_t x, std::uint32_t y,
                              std::uint32_t z);
  void after_command_locked();
  void throw_pending_error();
  // Copies [soff, soff + n) to [doff, doff + n) at any byte offsets (a kernel where copyBufferToBuffer cannot).
  void copy_bytes(WGPUBuffer src, std::size_t soff, WGPUBuffer dst, std::size_t doff, std::size_t n);

  WGPUInstance instance_;
  WGPUAdapter adapter_;
  WGPUDevice device_ = nullptr;
  WGPUQueue queue_ = nullptr;
  WGPULimits limits_{};
  bool timestamps_ = false;
  DeviceInfo info_;
  Capabilities caps_;
  std::string label_;
  WebGpuStream default_stream_{*this};

  std::recursive_mutex mu_;
  WGPUCommandEncoder encoder_ = nullptr;
  std::vector<WGPUCommandBuffer> finished_;  // command buffers ahead of encoder_'s, not yet submitted
  int encoded_ = 0;
  WGPUSubmissionIndex last_submitted_ = 0;
  std::deque<WGPUSubmissionIndex> in_flight_;  // oldest first, at most kMaxInFlight

  std::mutex error_mu_;
  std::mutex scope_mu_;  // held from a push of an error scope to its pop
  std::string pending_error_;
  bool lost_ = false;

  // A compiled kernels/<name>.wgsl: its module and the layout of its bindings.
  struct Module {
    WGPUShaderModule shader = nullptr;
    WGPUBindGroupLayout group = nullptr;
    WGPUPipelineLayout layout = nullptr;
    std::size_t bindings = 0;  // tensor bindings, the params buffer after them
  };
  const Module& module(const char* name);  // pipeline_mu_ held
  std::mutex pipeline_mu_;
  std::map<std::string, Module> modules_;
  std::map<std::string, WGPUComputePipeline> pipelines_;
  std::atomic<WGPUSubmissionIndex> completed_{0};  // every submission up to this one has finished

  // The last user kernel build_kernel compiled, for the load_kernel that follows it to take
  // instead of compiling the same text again.
  struct BuiltKernel {
    std::string text, entry;
    WGPUComputePipeline pipeline = nullptr;
    WGPUBindGroupLayout group = nullptr;
    void release();
  };
  std::mutex built_mu_;
  BuiltKernel built_;
  mutable std::once_flag compiler_id_once_;
  mutable std::string compiler_id_;
  std::string make_compiler_id() const;
  // Compiles a user module and makes its pipeline; KernelCompile with the user's line numbers on failure.
  BuiltKernel build_user(const rt::UserKernelSpec& spec, const std::string& text);

 public:
  static constexpr int kSubmitEvery = 64;
  static constexpr std::size_t kMaxInFlight = 4;
};

inline WebGpuStream& stream_of(rt::StreamImpl& s) { return static_cast<WebGpuStream&>(s); }
inline WGPUBuffer buffer_of(const rt::BufferImpl& b) { return static_cast<const WebGpuBuffer&>(b).handle(); }

// The WebGPU backend's kernels; each op file registers its own.
rt::KernelTable& kernel_table();
// The text of kernels/<name>.wgsl (wgsl_sources.cpp, generated), or null.
const char* wgsl_source(const char* name);

}  // namespace torsh::webgpu
