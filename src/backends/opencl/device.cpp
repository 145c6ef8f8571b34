#include "device.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "graph.hpp"
#include "program.hpp"

extern const char* const torsh_opencl_kernel_source;  // kernels_embedded.cpp (cmake/EmbedKernels.cmake)

namespace torsh::opencl {

namespace {
std::string fmt_bytes(std::uint64_t b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%llu bytes (%.2f GiB)", static_cast<unsigned long long>(b),
                static_cast<double>(b) / double(1ull << 30));
  return buf;
}
}  // namespace

// ---------------------------------------------------------------- stream

OpenClStream::OpenClStream(OpenClDevice& dev) : dev_(dev) {
  cl_int err = CL_SUCCESS;
  q_ = clCreateCommandQueue(dev.context(), dev.id(), CL_QUEUE_PROFILING_ENABLE, &err);
  check_cl(err, "clCreateCommandQueue", dev.label());
  dev.register_queue(q_);
}

OpenClStream::~OpenClStream() {
  dev_.unregister_queue(q_);
  clFinish(q_);
  release_markers();
  clReleaseCommandQueue(q_);
}

void OpenClStream::synchronize() {
  check_cl(clFinish(q_), "clFinish", dev_.label());
  std::lock_guard lk(throttle_mu_);
  release_markers();
}

void OpenClStream::release_markers() {
  for (cl_event ev : markers_) clReleaseEvent(ev);
  markers_.clear();
  since_marker_ = 0;
}

void OpenClStream::enqueued() {
  std::lock_guard lk(throttle_mu_);
  if (++since_marker_ < kMarkerEvery) return;
  since_marker_ = 0;
  cl_event ev = nullptr;
  check_cl(clEnqueueMarkerWithWaitList(q_, 0, nullptr, &ev), "clEnqueueMarkerWithWaitList", dev_.label());
  check_cl(clFlush(q_), "clFlush", dev_.label());
  markers_.push_back(ev);
  if (markers_.size() <= kMarkersAhead) return;
  // The device is still kMarkersAhead batches behind after this wait, so it stays busy.
  cl_event oldest = markers_.front();
  markers_.pop_front();
  const cl_int err = clWaitForEvents(1, &oldest);
  clReleaseEvent(oldest);
  check_cl(err, "clWaitForEvents (queue depth bound)", dev_.label());
}

void OpenClStream::record(rt::EventImpl& e) {
  cl_event ev = nullptr;
  check_cl(clEnqueueMarkerWithWaitList(q_, 0, nullptr, &ev), "clEnqueueMarkerWithWaitList", dev_.label());
  static_cast<OpenClEvent&>(e).reset(ev);
  check_cl(clFlush(q_), "clFlush", dev_.label());
}

void OpenClStream::wait(rt::EventImpl& e) {
  cl_event ev = static_cast<OpenClEvent&>(e).handle();
  if (!ev) return;  // never recorded: nothing to wait for (as in CUDA)
  check_cl(clEnqueueBarrierWithWaitList(q_, 1, &ev, nullptr), "clEnqueueBarrierWithWaitList", dev_.label());
  check_cl(clFlush(q_), "clFlush", dev_.label());
}

// ---------------------------------------------------------------- event

OpenClEvent::~OpenClEvent() {
  if (ev_) clReleaseEvent(ev_);
}

void OpenClEvent::reset(cl_event ev) {
  if (ev_) clReleaseEvent(ev_);
  ev_ = ev;
}

void OpenClEvent::synchronize() {
  if (ev_) check_cl(clWaitForEvents(1, &ev_), "clWaitForEvents", device_);
}

bool OpenClEvent::query() {
  if (!ev_) return true;
  cl_int status = CL_COMPLETE;
  check_cl(clGetEventInfo(ev_, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr), "clGetEventInfo",
           device_);
  if (status < 0) throw_cl(status, "event (a command before the marker failed)", device_);
  return status == CL_COMPLETE;
}

cl_ulong OpenClEvent::end_time() {
  synchronize();  // profiling data exists once the marker completed
  cl_ulong t = 0;
  check_cl(clGetEventProfilingInfo(ev_, CL_PROFILING_COMMAND_END, sizeof t, &t, nullptr),
           "clGetEventProfilingInfo(CL_PROFILING_COMMAND_END)", device_);
  return t;
}

double OpenClEvent::elapsed_ms(rt::EventImpl& later) {
  auto& l = static_cast<OpenClEvent&>(later);
  if (!ev_ || !l.ev_)
    throw Error(ErrorCode::InvalidState, "elapsed_ms needs both events recorded",
                {.op = "event.elapsed_ms", .device = device_});
  const cl_ulong a = end_time(), b = l.end_time();
  // Device nanoseconds; signed so that events recorded in reverse order give a negative time, as in CUDA.
  return (static_cast<double>(b) - static_cast<double>(a)) / 1e6;
}

// ---------------------------------------------------------------- device

OpenClDevice::OpenClDevice(int index, cl_platform_id platform, cl_device_id device)
    : rt::DeviceImpl(kernel_table()), platform_(platform), dev_(device), info_(query_device_info(index, device)) {
  label_ = Device{BackendType::OpenCl, index}.to_string() + " (" + info_.name + ")";
  caps_ = query_capabilities(device, info_);
  cl_uint align_bits = 1024;
  check_cl(clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, nullptr),
           "clGetDeviceInfo(CL_DEVICE_MEM_BASE_ADDR_ALIGN)", label_);
  base_align_ = std::max<std::size_t>(1, align_bits / 8);
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform), 0};
  cl_int err = CL_SUCCESS;
  ctx_ = clCreateContext(props, 1, &device, nullptr, nullptr, &err);
  check_cl(err, "clCreateContext", label_);
  try {
    default_stream_ = std::make_unique<OpenClStream>(*this);
  } catch (...) {
    clReleaseContext(ctx_);
    throw;
  }
}

OpenClDevice::~OpenClDevice() {
  program_.reset();
  default_stream_.reset();
  clReleaseContext(ctx_);
}

PerformanceHints OpenClDevice::hints() const {
  PerformanceHints h;
  h.alignment = base_align_;
  h.preferred_work_group = preferred_group_;
  h.threads = 1;
  // A launch costs microseconds; below this many elements the CPU backend is faster.
  h.min_parallel_elements = info_.software ? (1 << 16) : (1 << 12);
  return h;
}

void OpenClDevice::register_queue(cl_command_queue q) {
  std::lock_guard lk(queues_mu_);
  queues_.push_back(q);
}

void OpenClDevice::unregister_queue(cl_command_queue q) {
  std::lock_guard lk(queues_mu_);
  queues_.erase(std::remove(queues_.begin(), queues_.end(), q), queues_.end());
}

void OpenClDevice::synchronize() {
  std::lock_guard lk(queues_mu_);
  for (cl_command_queue q : queues_) check_cl(clFinish(q), "clFinish", label_);
}

std::unique_ptr<rt::NativeGraph> OpenClDevice::begin_native_capture(rt::StreamImpl& s) {
  std::call_once(command_buffer_once_, [&] {
    command_buffer_ = std::make_unique<CommandBufferApi>(load_command_buffer_api(platform_, dev_));
  });
  return std::make_unique<CommandBufferGraph>(stream_of(s), *command_buffer_);
}

// Unmapping is queued; OpenCL releases the object once the unmap has run.
OpenClHostBuffer::~OpenClHostBuffer() {
  clEnqueueUnmapMemObject(q_, mem_, ptr_, 0, nullptr, nullptr);
  clFlush(q_);
  clReleaseMemObject(mem_);
}

std::unique_ptr<rt::BufferImpl> OpenClDevice::allocate_host(std::size_t bytes) {
  if (bytes > caps_.max_allocation)
    throw Error(ErrorCode::OutOfMemory,
                "requested " + fmt_bytes(bytes) + " of pinned host memory in one buffer, but " + info_.name +
                    " allows at most " + fmt_bytes(caps_.max_allocation) + " (CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                {.op = "allocate_pinned", .device = label_});
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(ctx_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &err);
  if (err != CL_SUCCESS)
    throw_cl(
        err, ("clCreateBuffer(CL_MEM_ALLOC_HOST_PTR, " + std::to_string(bytes) + " bytes)").c_str(), label_,
        is_allocation_failure(err) || err == CL_INVALID_BUFFER_SIZE ? ErrorCode::OutOfMemory : ErrorCode::DeviceError);
  cl_command_queue q = default_stream_->queue();
  void* p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) {
    clReleaseMemObject(m);
    throw_cl(err, "clEnqueueMapBuffer (pinned host memory)", label_,
             is_allocation_failure(err) ? ErrorCode::OutOfMemory : ErrorCode::DeviceError);
  }
  return std::make_unique<OpenClHostBuffer>(m, q, p, bytes);
}

std::unique_ptr<OpenClBuffer> OpenClDevice::make_buffer(std::size_t bytes) {
  if (bytes > caps_.max_allocation)
    throw Error(ErrorCode::OutOfMemory,
                "requested " + fmt_bytes(bytes) + " in one buffer, but " + info_.name + " allows at most " +
                    fmt_bytes(caps_.max_allocation) + " per allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                {.op = "allocate", .device = label_},
                {"Split the data over several buffers of at most " + fmt_bytes(caps_.max_allocation)});
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  if (err != CL_SUCCESS)
    throw_cl(
        err, ("clCreateBuffer(" + std::to_string(bytes) + " bytes)").c_str(), label_,
        is_allocation_failure(err) || err == CL_INVALID_BUFFER_SIZE ? ErrorCode::OutOfMemory : ErrorCode::DeviceError);
  return std::make_unique<OpenClBuffer>(m, bytes);
}

std::unique_ptr<rt::BufferImpl> OpenClDevice::allocate(std::size_t bytes) { return make_buffer(bytes); }

void OpenClDevice::write(rt::BufferImpl& dst, std::size_t off, const void* src, std::size_t n, rt::StreamImpl& s,
                         bool blocking) {
  cl_command_queue q = stream_of(s).queue();
  if (CommandBufferGraph* g = recording(stream_of(s))) g->invalidate("an op wrote host memory to the device");
  check_cl(clEnqueueWriteBuffer(q, mem_of(dst), blocking ? CL_TRUE : CL_FALSE, off, n, src, 0, nullptr, nullptr),
           "clEnqueueWriteBuffer", label_);
  if (!blocking) {
    check_cl(clFlush(q), "clFlush", label_);
    stream_of(s).enqueued();
  }
}

void OpenClDevice::read(rt::BufferImpl& src, std::size_t off, void* dst, std::size_t n, rt::StreamImpl& s,
                        bool blocking) {
  cl_command_queue q = stream_of(s).queue();
  if (CommandBufferGraph* g = recording(stream_of(s))) g->invalidate("an op read device memory to the host");
  check_cl(clEnqueueReadBuffer(q, mem_of(src), blocking ? CL_TRUE : CL_FALSE, off, n, dst, 0, nullptr, nullptr),
           "clEnqueueReadBuffer", label_);
  if (!blocking) {
    check_cl(clFlush(q), "clFlush", label_);
    stream_of(s).enqueued();
  }
}

void OpenClDevice::copy(rt::BufferImpl& src, std::size_t soff, rt::BufferImpl& dst, std::size_t doff, std::size_t n,
                        rt::StreamImpl& s) {
  cl_command_queue q = stream_of(s).queue();
  CommandBufferGraph* g = recording(stream_of(s));
  const auto copy_one = [&](cl_mem from, std::size_t from_off, cl_mem to, std::size_t to_off) {
    check_cl(clEnqueueCopyBuffer(q, from, to, from_off, to_off, n, 0, nullptr, nullptr), "clEnqueueCopyBuffer", label_);
    if (g) g->copy(from, to, from_off, to_off, n);
  };
  const bool overlap = &src == &dst && soff < doff + n && doff < soff + n;
  if (!overlap) {
    copy_one(mem_of(src), soff, mem_of(dst), doff);
  } else {
    // clEnqueueCopyBuffer rejects overlapping ranges (CL_MEM_COPY_OVERLAP); go through a scratch buffer (memmove).
    auto tmp = make_buffer(n);
    if (g) g->keep(tmp->mem());
    copy_one(mem_of(src), soff, tmp->mem(), 0);
    copy_one(tmp->mem(), 0, mem_of(dst), doff);
  }
  check_cl(clFlush(q), "clFlush", label_);
  stream_of(s).enqueued();
}

void OpenClDevice::fill(rt::BufferImpl& dst, std::size_t off, std::size_t n, const void* pattern, std::size_t psize,
                        rt::StreamImpl& s) {
  cl_command_queue q = stream_of(s).queue();
  if (off % psize == 0 && n % psize == 0) {
    // The pattern is copied at enqueue time; the caller's memory may go away.
    check_cl(clEnqueueFillBuffer(q, mem_of(dst), pattern, psize, off, n, 0, nullptr, nullptr), "clEnqueueFillBuffer",
             label_);
    if (CommandBufferGraph* g = recording(stream_of(s))) g->fill(mem_of(dst), pattern, psize, off, n);
    check_cl(clFlush(q), "clFlush", label_);
    stream_of(s).enqueued();
    return;
  }
  // clEnqueueFillBuffer needs offsets that are multiples of the pattern size: write the repeated pattern instead.
  std::vector<unsigned char> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<const unsigned char*>(pattern)[i % psize];
  write(dst, off, host.data(), n, s, true);
}

rt::KernelTable& kernel_table() {
  static rt::KernelTable t;
  return t;
}

// ---------------------------------------------------------------- programs

std::unique_ptr<Program> OpenClDevice::build(const char* source, const char* options) {
  return std::make_unique<Program>(ctx_, dev_, label_, source, options);
}

Kernel OpenClDevice::kernel(const char* name) {
  std::lock_guard lk(program_mu_);
  // Built once per device; a failure is not cached, so the next op reports it again.
  if (!program_) program_ = build(torsh_opencl_kernel_source, "");
  return program_->kernel(name);
}

}  // namespace torsh::opencl
