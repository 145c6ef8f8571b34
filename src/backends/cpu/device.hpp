#pragma once
// The built-in CPU backend: host memory, synchronous streams, host-clock events.
#include <chrono>

#include "torsh/backend/backend_impl.hpp"

namespace torsh::cpu {

class CpuBuffer final : public rt::BufferImpl {
 public:
  explicit CpuBuffer(std::size_t bytes);
  ~CpuBuffer() override;
  std::size_t size() const override { return size_; }
  void* host_ptr() const override { return data_; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

// CPU work runs on the calling thread (ops use the pool inside), so a stream
// is in order by construction and is complete when the call returns.
class CpuStream final : public rt::StreamImpl {
 public:
  void synchronize() override {}
  void record(rt::EventImpl& e) override;
  void wait(rt::EventImpl&) override {}
};

class CpuEvent final : public rt::EventImpl {
 public:
  void synchronize() override {}
  bool query() override { return true; }
  double elapsed_ms(rt::EventImpl& later) override;
  std::chrono::steady_clock::time_point when{};
};

class CpuDevice final : public rt::DeviceImpl {
 public:
  CpuDevice();
  BackendType type() const override { return BackendType::Cpu; }
  const DeviceInfo& info() const override { return info_; }
  Capabilities capabilities() const override;
  PerformanceHints hints() const override;

  std::unique_ptr<rt::BufferImpl> allocate(std::size_t bytes) override;
  std::unique_ptr<rt::StreamImpl> create_stream() override { return std::make_unique<CpuStream>(); }
  rt::StreamImpl& default_stream() override { return stream_; }
  std::unique_ptr<rt::EventImpl> create_event() override { return std::make_unique<CpuEvent>(); }
  void synchronize() override {}

  // User kernels: the Torsh dialect built by the system C++ compiler (user_kernel/).
  std::vector<KernelDialect> kernel_dialects() const override { return {KernelDialect::Torsh}; }
  std::string kernel_compiler_id() const override;
  rt::KernelBinary build_kernel(const rt::UserKernelSpec& spec) override;
  std::unique_ptr<rt::UserKernelImpl> load_kernel(const rt::UserKernelSpec& spec,
                                                  std::span<const std::uint8_t> binary) override;

  void write(rt::BufferImpl& dst, std::size_t off, const void* src, std::size_t n, rt::StreamImpl&, bool) override;
  void read(rt::BufferImpl& src, std::size_t off, void* dst, std::size_t n, rt::StreamImpl&, bool) override;
  void copy(rt::BufferImpl& src, std::size_t soff, rt::BufferImpl& dst, std::size_t doff, std::size_t n,
            rt::StreamImpl&) override;
  void fill(rt::BufferImpl& dst, std::size_t off, std::size_t n, const void* pattern, std::size_t psize,
            rt::StreamImpl&) override;

 private:
  DeviceInfo info_;
  CpuStream stream_;
};

// The CPU backend's kernels; each op file registers its own (copy.cpp, binary.cpp, ...).
rt::KernelTable& kernel_table();
// An op file's kernel as a kernel-table entry (CPU streams need no handling:
// work runs on the calling thread).
template <rt::OpKind K, void (*Fn)(const rt::ArgsOf<K>&)>
void entry(rt::DeviceImpl&, rt::StreamImpl&, const rt::ArgsOf<K>& a) {
  Fn(a);
}

// The matmul kernel (matmul.cpp), which conv2d.cpp runs as well.
void matmul(const rt::MatmulArgs& a);
// Every dtype arithmetic takes.
inline constexpr rt::DTypes kNumeric = rt::DTypes::all().without({DType::Bool});

// Typed base address of a tensor argument (offset applied).
template <class T>
T* data_of(const rt::TensorArg& t) {
  return static_cast<T*>(t.buffer->host_ptr()) + t.offset;
}

}  // namespace torsh::cpu
