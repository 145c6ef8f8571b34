#pragma once
// The OpenCL backend: buffers are cl_mem, streams in-order command queues with
// profiling, events cl_event markers, and the ops run the shared kernels of
// src/backends/gpu/kernels compiled at run time (program.cpp) and launched one way (launch.hpp).
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cl_error.hpp"
#include "torsh/backend/backend_impl.hpp"
#include "tuning.hpp"

namespace torsh::opencl {

class OpenClDevice;
class Program;
struct Kernel;
struct CommandBufferApi;

class OpenClBuffer final : public rt::BufferImpl {
 public:
  OpenClBuffer(cl_mem mem, std::size_t size) : mem_(mem), size_(size) {}
  ~OpenClBuffer() override { clReleaseMemObject(mem_); }
  OpenClBuffer(const OpenClBuffer&) = delete;
  OpenClBuffer& operator=(const OpenClBuffer&) = delete;
  std::size_t size() const override { return size_; }
  cl_mem mem() const { return mem_; }

 private:
  cl_mem mem_;
  std::size_t size_;
};

// Host memory for Backend::allocate_pinned(): a CL_MEM_ALLOC_HOST_PTR buffer
// mapped for its whole life. Drivers back it with page-locked memory and DMA
// straight from the mapped pointer, which is what makes async copies overlap.
class OpenClHostBuffer final : public rt::BufferImpl {
 public:
  OpenClHostBuffer(cl_mem mem, cl_command_queue q, void* ptr, std::size_t size)
      : mem_(mem), q_(q), ptr_(ptr), size_(size) {}
  ~OpenClHostBuffer() override;
  OpenClHostBuffer(const OpenClHostBuffer&) = delete;
  OpenClHostBuffer& operator=(const OpenClHostBuffer&) = delete;
  std::size_t size() const override { return size_; }
  void* host_ptr() const override { return ptr_; }

 private:
  cl_mem mem_;
  cl_command_queue q_;  // the device's default queue, which outlives every pool
  void* ptr_;
  std::size_t size_;
};

// An in-order queue with profiling enabled. Work is flushed as it is enqueued
// so that other queues and event queries see it progress.
class OpenClStream final : public rt::StreamImpl {
 public:
  explicit OpenClStream(OpenClDevice& dev);
  ~OpenClStream() override;
  OpenClStream(const OpenClStream&) = delete;
  OpenClStream& operator=(const OpenClStream&) = delete;
  void synchronize() override;
  void record(rt::EventImpl& e) override;
  void wait(rt::EventImpl& e) override;

  cl_command_queue queue() const { return q_; }
  OpenClDevice& device() const { return dev_; }

  // Called after each command is enqueued. The queue is kept at most about
  // kMarkerEvery * kMarkersAhead commands ahead of the device: OpenCL queues
  // without limit, and a host loop of small ops would otherwise grow host
  // memory and the next synchronize() without bound (CUDA's launch queue
  // blocks the same way when it is full).
  void enqueued();
  static constexpr int kMarkerEvery = 256;
  static constexpr std::size_t kMarkersAhead = 4;

 private:
  void release_markers();

  OpenClDevice& dev_;
  cl_command_queue q_ = nullptr;
  std::mutex throttle_mu_;
  int since_marker_ = 0;
  std::deque<cl_event> markers_;  // oldest first
};

// A marker in a queue; its CL_PROFILING_COMMAND_END is the device time at
// which the queue passed that point.
class OpenClEvent final : public rt::EventImpl {
 public:
  explicit OpenClEvent(std::string device) : device_(std::move(device)) {}
  ~OpenClEvent() override;
  OpenClEvent(const OpenClEvent&) = delete;
  OpenClEvent& operator=(const OpenClEvent&) = delete;
  void synchronize() override;
  bool query() override;
  double elapsed_ms(rt::EventImpl& later) override;

  void reset(cl_event ev);  // takes ownership, releases the previous marker
  cl_event handle() const { return ev_; }

 private:
  cl_ulong end_time();
  std::string device_;
  cl_event ev_ = nullptr;
};

class OpenClDevice final : public rt::DeviceImpl {
 public:
  OpenClDevice(int index, cl_platform_id platform, cl_device_id device);
  ~OpenClDevice() override;
  OpenClDevice(const OpenClDevice&) = delete;
  OpenClDevice& operator=(const OpenClDevice&) = delete;

  BackendType type() const override { return BackendType::OpenCl; }
  const DeviceInfo& info() const override { return info_; }
  Capabilities capabilities() const override { return caps_; }
  PerformanceHints hints() const override;

  std::unique_ptr<rt::BufferImpl> allocate(std::size_t bytes) override;
  std::unique_ptr<rt::BufferImpl> allocate_host(std::size_t bytes) override;
  std::unique_ptr<rt::StreamImpl> create_stream() override { return std::make_unique<OpenClStream>(*this); }
  rt::StreamImpl& default_stream() override { return *default_stream_; }
  std::unique_ptr<rt::EventImpl> create_event() override { return std::make_unique<OpenClEvent>(label_); }
  void synchronize() override;
  // A cl_khr_command_buffer recording (graph.hpp); an invalid one where the extension cannot be used.
  std::unique_ptr<rt::NativeGraph> begin_native_capture(rt::StreamImpl& s) override;

  // User kernels (user_kernel_build.cpp): OpenCL C and the Torsh dialect, built by the driver's compiler.
  std::vector<KernelDialect> kernel_dialects() const override;
  std::string kernel_compiler_id() const override;
  rt::KernelBinary build_kernel(const rt::UserKernelSpec& spec) override;
  std::unique_ptr<rt::UserKernelImpl> load_kernel(const rt::UserKernelSpec& spec,
                                                  std::span<const std::uint8_t> binary) override;

  void write(rt::BufferImpl& dst, std::size_t off, const void* src, std::size_t n, rt::StreamImpl& s,
             bool blocking) override;
  void read(rt::BufferImpl& src, std::size_t off, void* dst, std::size_t n, rt::StreamImpl& s, bool blocking) override;
  void copy(rt::BufferImpl& src, std::size_t soff, rt::BufferImpl& dst, std::size_t doff, std::size_t n,
            rt::StreamImpl& s) override;
  void fill(rt::BufferImpl& dst, std::size_t off, std::size_t n, const void* pattern, std::size_t psize,
            rt::StreamImpl& s) override;

  // For the op files and the program cache.
  const std::string& label() const { return label_; }  // "opencl:0 (device name)"
  cl_context context() const { return ctx_; }
  cl_device_id id() const { return dev_; }
  cl_platform_id platform() const { return platform_; }
  std::size_t base_align() const { return base_align_; }  // sub-buffer origin alignment, bytes
  // A kernel of the embedded program (src/backends/gpu/kernels), built for this device on first use.
  Kernel kernel(const char* name);
  // Builds arbitrary OpenCL C for this device (run-time kernels); KernelCompile with the build log on failure.
  std::unique_ptr<Program> build(const char* source, const char* options);
  // A fresh device buffer for internal staging (not counted in the runtime's memory stats).
  std::unique_ptr<OpenClBuffer> scratch(std::size_t bytes) { return make_buffer(bytes); }
  // The work-group sizes chosen for this device by auto-tuning.
  WorkGroupTuning& work_groups() { return work_groups_; }
  // The GEMM implementations chosen for this device by auto-tuning.
  MatmulTuning& matmul_tuning() { return matmul_tuning_; }

  void register_queue(cl_command_queue q);
  void unregister_queue(cl_command_queue q);

 private:
  std::unique_ptr<OpenClBuffer> make_buffer(std::size_t bytes);

  cl_platform_id platform_;
  cl_device_id dev_;
  cl_context ctx_ = nullptr;
  DeviceInfo info_;
  Capabilities caps_;
  std::string label_;
  std::size_t base_align_ = 128;
  std::size_t preferred_group_ = 64;

  std::mutex queues_mu_;
  std::vector<cl_command_queue> queues_;
  std::unique_ptr<OpenClStream> default_stream_;

  std::mutex program_mu_;
  std::unique_ptr<Program> program_;

  WorkGroupTuning work_groups_;
  MatmulTuning matmul_tuning_;

  std::once_flag command_buffer_once_;
  std::unique_ptr<CommandBufferApi> command_buffer_;
};

// The queue behind a stream handed to this device (the runtime only hands a device its own streams).
inline OpenClStream& stream_of(rt::StreamImpl& s) { return static_cast<OpenClStream&>(s); }
inline cl_mem mem_of(const rt::BufferImpl& b) { return static_cast<const OpenClBuffer&>(b).mem(); }

// Device facts from clGetDeviceInfo (driver.cpp).
DeviceInfo query_device_info(int index, cl_device_id dev);
Capabilities query_capabilities(cl_device_id dev, const DeviceInfo& info);

// The OpenCL backend's kernels; each op file registers its own (copy.cpp, binary.cpp, ...).
rt::KernelTable& kernel_table();

}  // namespace torsh::opencl
