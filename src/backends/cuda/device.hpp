#pragma once
// The CUDA backend: buffers are cudaMalloc allocations, streams non-blocking
// cudaStream_t, events timing cudaEvent_t, and the ops run the shared kernels
// of src/backends/gpu/kernels compiled by nvcc (the .cu files) and launched one way
// (launch.hpp). Every public entry point selects its device first (DeviceGuard).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cuda_error.hpp"
#include "torsh/backend/backend_impl.hpp"

namespace torsh::cuda {

class CudaDevice;

class CudaBuffer final : public rt::BufferImpl {
 public:
  CudaBuffer(int ordinal, void* ptr, std::size_t size) : ordinal_(ordinal), ptr_(ptr), size_(size) {}
  ~CudaBuffer() override;
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  std::size_t size() const override { return size_; }
  void* ptr() const { return ptr_; }

 private:
  int ordinal_;
  void* ptr_;
  std::size_t size_;
};

// Page-locked host memory (Backend::allocate_pinned): cudaMemcpyAsync moves it
// by DMA without staging through a driver buffer, so async copies overlap host work.
class CudaHostBuffer final : public rt::BufferImpl {
 public:
  CudaHostBuffer(void* ptr, std::size_t size) : ptr_(ptr), size_(size) {}
  ~CudaHostBuffer() override;
  CudaHostBuffer(const CudaHostBuffer&) = delete;
  CudaHostBuffer& operator=(const CudaHostBuffer&) = delete;
  std::size_t size() const override { return size_; }
  void* host_ptr() const override { return ptr_; }

 private:
  void* ptr_;
  std::size_t size_;
};

// Non-blocking, so it never serialises against the legacy default stream of
// other CUDA code in the process.
class CudaStream final : public rt::StreamImpl {
 public:
  explicit CudaStream(CudaDevice& dev);
  ~CudaStream() override;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  void synchronize() override;
  void record(rt::EventImpl& e) override;
  void wait(rt::EventImpl& e) override;

  cudaStream_t handle() const { return s_; }
  CudaDevice& device() const { return dev_; }

  // Library state bound to this stream, made on first use and released
  // before the stream: the cuBLAS handle of cublas_gemm.cpp.
  struct Extension {
    virtual ~Extension() = default;
  };
  std::unique_ptr<Extension>& blas() { return blas_; }

 private:
  CudaDevice& dev_;
  cudaStream_t s_ = nullptr;
  std::unique_ptr<Extension> blas_;
};

class CudaEvent final : public rt::EventImpl {
 public:
  explicit CudaEvent(CudaDevice& dev);
  ~CudaEvent() override;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  void synchronize() override;
  bool query() override;
  double elapsed_ms(rt::EventImpl& later) override;

  void record(CudaStream& s);
  cudaEvent_t handle() const { return ev_; }
  bool recorded() const { return recorded_; }

 private:
  const std::string& label() const;
  CudaDevice& dev_;
  cudaEvent_t ev_ = nullptr;
  bool recorded_ = false;
};

class CudaDevice final : public rt::DeviceImpl {
 public:
  // `index` as torsh numbers its CUDA devices, `ordinal` as the CUDA runtime
  // does (after CUDA_VISIBLE_DEVICES); they differ only after a device failed to open.
  CudaDevice(int index, int ordinal);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  BackendType type() const override { return vendor::kBackend; }
  const DeviceInfo& info() const override { return info_; }
  Capabilities capabilities() const override { return caps_; }
  PerformanceHints hints() const override { return hints_; }

  std::unique_ptr<rt::BufferImpl> allocate(std::size_t bytes) override;
  std::unique_ptr<rt::BufferImpl> allocate_host(std::size_t bytes) override;
  std::unique_ptr<rt::StreamImpl> create_stream() override;
  rt::StreamImpl& default_stream() override { return *default_stream_; }
  std::unique_ptr<rt::EventImpl> create_event() override;
  void synchronize() override;

  void write(rt::BufferImpl& dst, std::size_t off, const void* src, std::size_t n, rt::StreamImpl& s,
             bool blocking) override;
  void read(rt::BufferImpl& src, std::size_t off, void* dst, std::size_t n, rt::StreamImpl& s, bool blocking) override;
  void copy(rt::BufferImpl& src, std::size_t soff, rt::BufferImpl& dst, std::size_t doff, std::size_t n,
            rt::StreamImpl& s) override;
  void fill(rt::BufferImpl& dst, std::size_t off, std::size_t n, const void* pattern, std::size_t psize,
            rt::StreamImpl& s) override;

  // User kernels (user_kernel.cpp): compiled by NVRTC / hiprtc for this
  // device's architecture, loaded and launched through the module API.
  std::vector<KernelDialect> kernel_dialects() const override { return {KernelDialect::Torsh, KernelDialect::Cuda}; }
  std::string kernel_compiler_id() const override;
  rt::KernelBinary build_kernel(const rt::UserKernelSpec& spec) override;
  std::unique_ptr<rt::UserKernelImpl> load_kernel(const rt::UserKernelSpec& spec,
                                                  std::span<const std::uint8_t> binary) override;

  int ordinal() const { return ordinal_; }
  const std::string& label() const { return label_; }  // "cuda:0 (device name)"

  // What a launch may ask of this device (cudaDeviceProp).
  struct LaunchLimits {
    int threads_per_block = 0;  // maxThreadsPerBlock
    int block[3] = {};          // maxThreadsDim
    int grid[3] = {};           // maxGridSize
  };
  const LaunchLimits& launch_limits() const { return limits_; }

 private:
  int ordinal_;
  LaunchLimits limits_;
  std::string rtc_arch_;  // what NVRTC / hiprtc compiles for: "compute_90", "gfx90a:sramecc+:xnack-"
  DeviceInfo info_;
  Capabilities caps_;
  PerformanceHints hints_;
  std::string label_;
  bool memory_pools_ = false;  // cudaMallocAsync usable (stream-ordered scratch)
  std::unique_ptr<CudaStream> default_stream_;
};

// The stream behind a StreamImpl handed to this device (the runtime only hands a device its own streams).
inline CudaStream& stream_of(rt::StreamImpl& s) { return static_cast<CudaStream&>(s); }
inline void* ptr_of(const rt::BufferImpl& b) { return static_cast<const CudaBuffer&>(b).ptr(); }
inline unsigned char* bytes_of(const rt::BufferImpl& b) { return static_cast<unsigned char*>(ptr_of(b)); }

// Device facts from cudaGetDeviceProperties and friends (driver.cpp). The
// calling thread's current device must be `ordinal` (cudaMemGetInfo asks it).
DeviceInfo query_device_info(int index, int ordinal, const cudaDeviceProp& p);
Capabilities query_capabilities(const cudaDeviceProp& p, const DeviceInfo& info);
PerformanceHints query_hints(int ordinal, const DeviceInfo& info);

// Repeats `pattern` (psize bytes) over n bytes at dst, stream-ordered (fill.cu).
void fill(CudaStream& s, unsigned char* dst, std::size_t n, const void* pattern, std::size_t psize);

// The CUDA backend's kernels; each op file registers its own (copy.cu, binary.cu, ...).
rt::KernelTable& kernel_table();

}  // namespace torsh::cuda
