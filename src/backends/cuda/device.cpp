#include "device.hpp"

#include <algorithm>
#include <cstdio>

namespace torsh::cuda {

namespace {
// What the stream-ordered pool keeps between uses (see the constructor).
constexpr std::uint64_t kPoolKeepBytes = std::uint64_t{256} << 20;

std::string fmt_bytes(std::uint64_t b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%llu bytes (%.2f GiB)", static_cast<unsigned long long>(b),
                static_cast<double>(b) / double(1ull << 30));
  return buf;
}
}  // namespace

// ---------------------------------------------------------------- buffer

// Errors are dropped: a destructor must not throw, and at process exit the
// runtime may already be unloading (cudaErrorCudartUnloading).
CudaBuffer::~CudaBuffer() {
  if (!ptr_) return;
  int previous = -1;
  const bool switched =
      cudaGetDevice(&previous) == cudaSuccess && previous != ordinal_ && cudaSetDevice(ordinal_) == cudaSuccess;
  (void)cudaFree(ptr_);
  if (switched) (void)cudaSetDevice(previous);
  (void)cudaGetLastError();
}

// cudaFreeHost waits for the device, so copies still queued from this memory complete first.
CudaHostBuffer::~CudaHostBuffer() {
  (void)cudaFreeHost(ptr_);
  (void)cudaGetLastError();
}

// ---------------------------------------------------------------- stream

CudaStream::CudaStream(CudaDevice& dev) : dev_(dev) {
  DeviceGuard g(dev.ordinal(), dev.label());
  check_cuda(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", dev.label());
}

// cudaStreamDestroy returns at once; the stream's pending work still completes.
CudaStream::~CudaStream() {
  blas_.reset();  // a library handle bound to the stream goes first
  (void)cudaStreamDestroy(s_);
  (void)cudaGetLastError();
}

void CudaStream::synchronize() { check_cuda(cudaStreamSynchronize(s_), "cudaStreamSynchronize", dev_.label()); }

void CudaStream::record(rt::EventImpl& e) { static_cast<CudaEvent&>(e).record(*this); }

void CudaStream::wait(rt::EventImpl& e) {
  auto& ev = static_cast<CudaEvent&>(e);
  if (!ev.recorded()) return;  // never recorded: nothing to wait for
  DeviceGuard g(dev_.ordinal(), dev_.label());
  check_cuda(cudaStreamWaitEvent(s_, ev.handle(), 0), "cudaStreamWaitEvent", dev_.label());
}

// ---------------------------------------------------------------- event

CudaEvent::CudaEvent(CudaDevice& dev) : dev_(dev) {
  DeviceGuard g(dev.ordinal(), dev.label());
  check_cuda(cudaEventCreate(&ev_), "cudaEventCreate", dev.label());
}

CudaEvent::~CudaEvent() {
  (void)cudaEventDestroy(ev_);
  (void)cudaGetLastError();
}

const std::string& CudaEvent::label() const { return dev_.label(); }

void CudaEvent::record(CudaStream& s) {
  DeviceGuard g(dev_.ordinal(), label());
  check_cuda(cudaEventRecord(ev_, s.handle()), "cudaEventRecord", label());
  recorded_ = true;
}

void CudaEvent::synchronize() {
  if (recorded_) check_cuda(cudaEventSynchronize(ev_), "cudaEventSynchronize", label());
}

bool CudaEvent::query() {
  if (!recorded_) return true;
  const cudaError_t err = cudaEventQuery(ev_);
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();  // "not ready" is an answer, not a failure to report later
    return false;
  }
  check_cuda(err, "cudaEventQuery (work before the event failed)", label());
  return true;
}

double CudaEvent::elapsed_ms(rt::EventImpl& later) {
  auto& l = static_cast<CudaEvent&>(later);
  if (!recorded_ || !l.recorded_)
    throw Error(ErrorCode::InvalidState, "elapsed_ms needs both events recorded",
                {.op = "event.elapsed_ms", .device = label()});
  // cudaEventElapsedTime answers cudaErrorNotReady until both have completed.
  synchronize();
  l.synchronize();
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, ev_, l.ev_), "cudaEventElapsedTime", label());
  return ms;
}

// ---------------------------------------------------------------- device

CudaDevice::CudaDevice(int index, int ordinal) : rt::DeviceImpl(kernel_table()), ordinal_(ordinal) {
  label_ = Device{vendor::kBackend, index}.to_string();
  DeviceGuard g(ordinal, label_);
  cudaDeviceProp p{};
  check_cuda(cudaGetDeviceProperties(&p, ordinal), "cudaGetDeviceProperties", label_);
  info_ = query_device_info(index, ordinal, p);
  caps_ = query_capabilities(p, info_);
  hints_ = query_hints(ordinal, info_);
  memory_pools_ = vendor::memory_pools(p, ordinal);
  // Ops take short-lived scratch from the stream-ordered pool (fft rows,
  // int8 copies, memmove). By default the pool hands its memory back to the
  // driver at every synchronisation, so the next op maps it afresh, which
  // can cost as much as a mid-sized op itself (src/backends/gpu/README.md,
  // cuda/device.cpp). Keeping a bounded amount between uses removes that.
  // Best effort: without it ops are only slower.
  if (memory_pools_) (void)vendor::keep_pool_memory(ordinal, kPoolKeepBytes);
  limits_.threads_per_block = p.maxThreadsPerBlock;
  for (int d = 0; d < 3; ++d) {
    limits_.block[d] = p.maxThreadsDim[d];
    limits_.grid[d] = p.maxGridSize[d];
  }
  rtc_arch_ = vendor::rtc_arch(p);
  label_ += " (" + info_.name + ")";
  default_stream_ = std::make_unique<CudaStream>(*this);
}

// Devices live as long as the process (the registry never destroys drivers);
// this only runs for a device whose construction failed half way.
CudaDevice::~CudaDevice() = default;

std::unique_ptr<rt::BufferImpl> CudaDevice::allocate(std::size_t bytes) {
  DeviceGuard g(ordinal_, label_);
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    std::size_t free = 0, total = 0;
    const bool known = cudaMemGetInfo(&free, &total) == cudaSuccess;
    throw Error(ErrorCode::OutOfMemory,
                "cudaMalloc of " + fmt_bytes(bytes) + " failed with " + cuda_error_text(err) + "; " +
                    (known ? info_.name + " has " + fmt_bytes(free) + " free of " + fmt_bytes(total)
                           : std::string("free memory unknown")),
                {.op = "cudaMalloc", .device = label_},
                {"Free buffers or use smaller tensors", "Split the data over several buffers or devices"});
  }
  check_cuda(err, "cudaMalloc", label_);
  return std::make_unique<CudaBuffer>(ordinal_, p, bytes);
}

std::unique_ptr<rt::BufferImpl> CudaDevice::allocate_host(std::size_t bytes) {
  DeviceGuard g(ordinal_, label_);
  void* p = nullptr;
  // Portable: page-locked for every device's copies, not only this context's.
  const cudaError_t err = cudaHostAlloc(&p, std::max<std::size_t>(bytes, 1), cudaHostAllocPortable);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    throw Error(
        ErrorCode::OutOfMemory,
        "cudaHostAlloc of " + fmt_bytes(bytes) + " of page-locked host memory failed with " + cuda_error_text(err),
        {.op = "cudaHostAlloc", .device = label_},
        {"Pin less memory (page-locked memory is limited by RAM and ulimit -l)", "Use ordinary host memory"});
  }
  check_cuda(err, "cudaHostAlloc", label_);
  return std::make_unique<CudaHostBuffer>(p, bytes);
}

std::unique_ptr<rt::StreamImpl> CudaDevice::create_stream() { return std::make_unique<CudaStream>(*this); }

std::unique_ptr<rt::EventImpl> CudaDevice::create_event() { return std::make_unique<CudaEvent>(*this); }

void CudaDevice::synchronize() {
  DeviceGuard g(ordinal_, label_);
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize", label_);
}

// Pageable host memory: the runtime stages it, so an async copy may return
// before or after the transfer; the caller keeps `src`/`dst` alive until the
// stream passes this point either way.
void CudaDevice::write(rt::BufferImpl& dst, std::size_t off, const void* src, std::size_t n, rt::StreamImpl& s,
                       bool blocking) {
  if (n == 0) return;
  DeviceGuard g(ordinal_, label_);
  const cudaStream_t q = stream_of(s).handle();
  check_cuda(cudaMemcpyAsync(bytes_of(dst) + off, src, n, cudaMemcpyHostToDevice, q), "cudaMemcpyAsync(host to device)",
             label_);
  if (blocking) check_cuda(cudaStreamSynchronize(q), "cudaStreamSynchronize", label_);
}

void CudaDevice::read(rt::BufferImpl& src, std::size_t off, void* dst, std::size_t n, rt::StreamImpl& s,
                      bool blocking) {
  if (n == 0) return;
  DeviceGuard g(ordinal_, label_);
  const cudaStream_t q = stream_of(s).handle();
  check_cuda(cudaMemcpyAsync(dst, bytes_of(src) + off, n, cudaMemcpyDeviceToHost, q), "cudaMemcpyAsync(device to host)",
             label_);
  if (blocking) check_cuda(cudaStreamSynchronize(q), "cudaStreamSynchronize", label_);
}

void CudaDevice::copy(rt::BufferImpl& src, std::size_t soff, rt::BufferImpl& dst, std::size_t doff, std::size_t n,
                      rt::StreamImpl& s) {
  if (n == 0) return;
  DeviceGuard g(ordinal_, label_);
  const cudaStream_t q = stream_of(s).handle();
  unsigned char* from = bytes_of(src) + soff;
  unsigned char* to = bytes_of(dst) + doff;
  const bool overlap = &src == &dst && soff < doff + n && doff < soff + n;
  if (!overlap) {
    check_cuda(cudaMemcpyAsync(to, from, n, cudaMemcpyDeviceToDevice, q), "cudaMemcpyAsync(device to device)", label_);
    return;
  }
  // cudaMemcpy* leave overlapping ranges undefined: go through scratch (memmove).
  void* tmp = nullptr;
  if (memory_pools_) {
    // Stream-ordered: allocated, used and freed in stream order, no host synchronisation.
    check_cuda(cudaMallocAsync(&tmp, n, q), "cudaMallocAsync (overlap scratch)", label_);
  } else {
    check_cuda(cudaMalloc(&tmp, n), "cudaMalloc (overlap scratch)", label_);
  }
  cudaError_t err = cudaMemcpyAsync(tmp, from, n, cudaMemcpyDeviceToDevice, q);
  if (err == cudaSuccess) err = cudaMemcpyAsync(to, tmp, n, cudaMemcpyDeviceToDevice, q);
  if (memory_pools_) {
    (void)cudaFreeAsync(tmp, q);
  } else {
    if (err == cudaSuccess) err = cudaStreamSynchronize(q);  // tmp must outlive the copies
    (void)cudaFree(tmp);
  }
  check_cuda(err, "cudaMemcpyAsync(device to device, overlapping)", label_);
}

void CudaDevice::fill(rt::BufferImpl& dst, std::size_t off, std::size_t n, const void* pattern, std::size_t psize,
                      rt::StreamImpl& s) {
  if (n == 0) return;
  DeviceGuard g(ordinal_, label_);
  cuda::fill(stream_of(s), bytes_of(dst) + off, n, pattern, psize);
}

rt::KernelTable& kernel_table() {
  static rt::KernelTable t;
  return t;
}

}  // namespace torsh::cuda
