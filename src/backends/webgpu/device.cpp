#include "device.hpp"

#include <algorithm>
#include <cstring>

namespace torsh::webgpu {

namespace {

std::string fmt_bytes(std::uint64_t b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%llu bytes (%.2f GiB)", static_cast<unsigned long long>(b),
                static_cast<double>(b) / double(1ull << 30));
  return buf;
}

constexpr std::size_t round_up4(std::size_t v) { return (v + 3) & ~std::size_t{3}; }

void on_uncaptured(WGPUDevice const*, WGPUErrorType type, WGPUStringView message, void* dev, void*) {
  static_cast<WebGpuDevice*>(dev)->report_error(type, to_string(message));
}

void on_lost(WGPUDevice const*, WGPUDeviceLostReason reason, WGPUStringView message, void* dev, void*) {
  // Destroying the device on purpose (our destructor) is not a loss.
  if (reason == WGPUDeviceLostReason_Destroyed || reason == WGPUDeviceLostReason_CallbackCancelled) return;
  static_cast<WebGpuDevice*>(dev)->report_error(WGPUErrorType_Internal, "device lost: " + to_string(message));
}

void on_device(WGPURequestDeviceStatus status, WGPUDevice d, WGPUStringView message, void* out, void* why) {
  if (status == WGPURequestDeviceStatus_Success)
    *static_cast<WGPUDevice*>(out) = d;
  else
    *static_cast<std::string*>(why) = "requestDevice: " + to_string(message);
}

void on_work_done(WGPUQueueWorkDoneStatus status, WGPUStringView, void* dev, void* index) {
  if (status == WGPUQueueWorkDoneStatus_Success)
    static_cast<WebGpuDevice*>(dev)->mark_completed(
        static_cast<WGPUSubmissionIndex>(reinterpret_cast<std::uintptr_t>(index)));
}

}  // namespace

// ---------------------------------------------------------------- stream and event

void WebGpuStream::synchronize() { dev_.synchronize(); }

void WebGpuStream::record(rt::EventImpl& e) { static_cast<WebGpuEvent&>(e).record(); }

WebGpuEvent::~WebGpuEvent() {
  if (stamp_) wgpuQuerySetRelease(stamp_);
  if (resolved_) wgpuBufferRelease(resolved_);
}

void WebGpuEvent::record() {
  if (dev_.timestamps()) {
    if (!stamp_) {
      WGPUQuerySetDescriptor qd = WGPU_QUERY_SET_DESCRIPTOR_INIT;
      qd.type = WGPUQueryType_Timestamp;
      qd.count = 1;
      stamp_ = wgpuDeviceCreateQuerySet(dev_.handle(), &qd);
      WGPUBufferDescriptor bd = WGPU_BUFFER_DESCRIPTOR_INIT;
      bd.size = 8;
      bd.usage = WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc;
      resolved_ = wgpuDeviceCreateBuffer(dev_.handle(), &bd);
    }
    dev_.stamp(stamp_, resolved_);
  }
  index_ = dev_.submit();
  recorded_ = true;
}

void WebGpuEvent::synchronize() {
  if (recorded_) dev_.wait(index_);
}

bool WebGpuEvent::query() { return !recorded_ || dev_.done(index_); }

std::uint64_t WebGpuEvent::ticks() {
  synchronize();
  std::uint64_t t = 0;
  dev_.read_raw(resolved_, 0, &t, sizeof t);
  return t;
}

double WebGpuEvent::elapsed_ms(rt::EventImpl& later) {
  auto& l = static_cast<WebGpuEvent&>(later);
  if (!dev_.timestamps())
    throw Error(ErrorCode::Unsupported, "this WebGPU adapter has no timestamp queries, so events carry no device time",
                {.op = "event.elapsed_ms", .device = "webgpu"},
                {"Time WebGPU work on the host around Stream::synchronize(), or use the profiler's host times"});
  if (!recorded_ || !l.recorded_)
    throw Error(ErrorCode::InvalidState, "elapsed_ms needs both events recorded",
                {.op = "event.elapsed_ms", .device = "webgpu"});
  const double a = static_cast<double>(ticks()), b = static_cast<double>(l.ticks());
  // Ticks times the queue's period (nanoseconds per tick); signed, as in CUDA.
  return (b - a) * wgpuQueueGetTimestampPeriod(dev_.queue()) / 1e6;
}

// ---------------------------------------------------------------- device

WebGpuDevice::WebGpuDevice(int index, WGPUInstance instance, WGPUAdapter adapter)
    : rt::DeviceImpl(kernel_table()), instance_(instance), adapter_(adapter) {
  WGPUAdapterInfo ai = WGPU_ADAPTER_INFO_INIT;
  wgpuAdapterGetInfo(adapter_, &ai);
  info_.index = index;
  info_.name = to_string(ai.device);
  info_.vendor = to_string(ai.vendor);
  info_.driver_version = to_string(ai.description);
  const char* backend = ai.backendType == WGPUBackendType_Vulkan   ? "Vulkan"
                        : ai.backendType == WGPUBackendType_Metal  ? "Metal"
                        : ai.backendType == WGPUBackendType_D3D12  ? "D3D12"
                        : ai.backendType == WGPUBackendType_OpenGL ? "OpenGL"
                                                                   : "other";
  info_.compute_capability = std::string("WebGPU on ") + backend;
  info_.kind = ai.adapterType == WGPUAdapterType_CPU ? DeviceKind::Cpu : DeviceKind::Gpu;
  info_.unified_memory = ai.adapterType != WGPUAdapterType_DiscreteGPU;
  // lavapipe / llvmpipe and other CPU adapters run on the host CPU: usable by name, never auto-selected.
  info_.software = ai.adapterType == WGPUAdapterType_CPU || info_.name.find("llvmpipe") != std::string::npos ||
                   info_.name.find("lavapipe") != std::string::npos;
  wgpuAdapterInfoFreeMembers(ai);
  label_ = Device{BackendType::WebGpu, index}.to_string() + " (" + info_.name + ")";

  WGPULimits supported = WGPU_LIMITS_INIT;
  if (wgpuAdapterGetLimits(adapter_, &supported) != WGPUStatus_Success)
    throw_wgpu(ErrorCode::DeviceError, "wgpuAdapterGetLimits", "no limits", label_);
  std::vector<WGPUFeatureName> features;
  if (wgpuAdapterHasFeature(adapter_, WGPUFeatureName_ShaderF16)) {
    features.push_back(WGPUFeatureName_ShaderF16);
    info_.features.emplace_back("shader-f16");
  }
  if (wgpuAdapterHasFeature(adapter_, WGPUFeatureName_TimestampQuery)) {
    features.push_back(WGPUFeatureName_TimestampQuery);
    info_.features.emplace_back("timestamp-query");
    timestamps_ = true;
  }

  // Ask for everything the adapter allows: the defaults cap bindings at 128 MiB and buffers at 256 MiB.
  WGPUDeviceDescriptor dd = WGPU_DEVICE_DESCRIPTOR_INIT;
  dd.requiredLimits = &supported;
  dd.requiredFeatureCount = features.size();
  dd.requiredFeatures = features.data();
  dd.uncapturedErrorCallbackInfo.callback = on_uncaptured;
  dd.uncapturedErrorCallbackInfo.userdata1 = this;
  dd.deviceLostCallbackInfo.mode = WGPUCallbackMode_AllowSpontaneous;
  dd.deviceLostCallbackInfo.callback = on_lost;
  dd.deviceLostCallbackInfo.userdata1 = this;
  std::string why;
  WGPURequestDeviceCallbackInfo cb = WGPU_REQUEST_DEVICE_CALLBACK_INFO_INIT;
  cb.mode = WGPUCallbackMode_AllowProcessEvents;
  cb.callback = on_device;
  cb.userdata1 = &device_;
  cb.userdata2 = &why;
  wgpuAdapterRequestDevice(adapter_, &dd, cb);
  while (!device_ && why.empty()) wgpuInstanceProcessEvents(instance_);
  if (!device_) throw_wgpu(ErrorCode::DeviceError, "wgpuAdapterRequestDevice", why, label_);
  queue_ = wgpuDeviceGetQueue(device_);
  limits_ = WGPU_LIMITS_INIT;
  wgpuDeviceGetLimits(device_, &limits_);

  info_.total_memory = 0;  // WebGPU does not expose memory sizes
  info_.compute_units = 0;
  info_.features.push_back("max buffer " + fmt_bytes(limits_.maxBufferSize));
  info_.features.push_back("max storage binding " + fmt_bytes(limits_.maxStorageBufferBindingSize));
  info_.features.push_back("max workgroup " + std::to_string(limits_.maxComputeInvocationsPerWorkgroup) +
                           " invocations, " + std::to_string(limits_.maxComputeWorkgroupStorageSize) + " bytes shared");
  caps_.f16 = std::find(features.begin(), features.end(), WGPUFeatureName_ShaderF16) != features.end();
  caps_.bf16 = false;
  caps_.f64 = false;  // WGSL has no doubles
  caps_.int8 = true;
  caps_.async_copy = false;
  caps_.event_timing = timestamps_;
  caps_.runtime_kernels = true;
  caps_.unified_memory = info_.unified_memory;
  caps_.max_allocation = limits_.maxBufferSize;
  caps_.max_work_group = limits_.maxComputeInvocationsPerWorkgroup;
}

WebGpuDevice::~WebGpuDevice() {
  try {
    synchronize();
  } catch (...) {
    // a device that failed has nothing left to finish
  }
  built_.release();
  for (auto& [name, p] : pipelines_) wgpuComputePipelineRelease(p);
  for (auto& [name, m] : modules_) {
    wgpuPipelineLayoutRelease(m.layout);
    wgpuBindGroupLayoutRelease(m.group);
    wgpuShaderModuleRelease(m.shader);
  }
  if (encoder_) wgpuCommandEncoderRelease(encoder_);
  for (WGPUCommandBuffer cb : finished_) wgpuCommandBufferRelease(cb);
  wgpuQueueRelease(queue_);
  wgpuDeviceRelease(device_);
  wgpuAdapterRelease(adapter_);
}

PerformanceHints WebGpuDevice::hints() const {
  PerformanceHints h;
  h.alignment = std::max<std::size_t>(4, limits_.minStorageBufferOffsetAlignment);
  h.preferred_work_group = 256;
  h.threads = 1;
  // A submission costs tens of microseconds; small ops are not worth it.
  h.min_parallel_elements = info_.software ? (1 << 16) : (1 << 12);
  return h;
}

void WebGpuDevice::report_error(WGPUErrorType type, const std::string& message) {
  std::lock_guard lk(error_mu_);
  if (message.rfind("device lost", 0) == 0) lost_ = true;
  if (pending_error_.empty()) pending_error_ = std::string(error_type_name(type)) + ": " + message;
}

void WebGpuDevice::throw_pending_error() {
  std::string e;
  {
    std::lock_guard lk(error_mu_);
    e.swap(pending_error_);
    if (lost_ && e.empty()) e = "device lost";
  }
  if (!e.empty()) throw_wgpu(ErrorCode::DeviceError, "queued WebGPU work", e, label_);
}

void WebGpuDevice::mark_completed(WGPUSubmissionIndex index) {
  WGPUSubmissionIndex seen = completed_.load();
  while (seen < index && !completed_.compare_exchange_weak(seen, index)) {
  }
}

WGPUBuffer WebGpuDevice::make_buffer(std::uint64_t bytes, WGPUBufferUsage usage, const char* what) {
  if (bytes > limits_.maxBufferSize)
    throw Error(ErrorCode::OutOfMemory,
                std::string(what) + ": " + fmt_bytes(bytes) + " in one buffer, but " + info_.name + " allows at most " +
                    fmt_bytes(limits_.maxBufferSize) + " per buffer (maxBufferSize)",
                {.op = "allocate", .device = label_},
                {"Split the data over several tensors of at most " + fmt_bytes(limits_.maxBufferSize)});
  WGPUBufferDescriptor d = WGPU_BUFFER_DESCRIPTOR_INIT;
  d.size = std::max<std::uint64_t>(4, round_up4(bytes));
  d.usage = usage;
  WGPUBuffer b = nullptr;
  const ScopeResult r = scoped(WGPUErrorFilter_OutOfMemory, [&] { b = wgpuDeviceCreateBuffer(device_, &d); });
  if (r.type != WGPUErrorType_NoError || !b) {
    if (b) wgpuBufferRelease(b);
    throw_wgpu(ErrorCode::OutOfMemory, std::string("wgpuDeviceCreateBuffer (") + what + ", " + fmt_bytes(bytes) + ")",
               r.message.empty() ? "no buffer" : r.message, label_);
  }
  return b;
}

std::unique_ptr<rt::BufferImpl> WebGpuDevice::allocate(std::size_t bytes) {
  const WGPUBuffer b =
      make_buffer(bytes, WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst, "allocate");
  return std::make_unique<WebGpuBuffer>(b, bytes, std::max<std::size_t>(4, round_up4(bytes)));
}

// ---------------------------------------------------------------- submission

WGPUCommandEncoder WebGpuDevice::encoder_locked() {
  if (!encoder_) encoder_ = wgpuDeviceCreateCommandEncoder(device_, nullptr);
  return encoder_;
}

void WebGpuDevice::finish_encoder_locked() {
  if (!encoder_) return;
  finished_.push_back(wgpuCommandEncoderFinish(encoder_, nullptr));
  wgpuCommandEncoderRelease(encoder_);
  encoder_ = nullptr;
}

WGPUSubmissionIndex WebGpuDevice::submit_locked() {
  finish_encoder_locked();
  const WGPUSubmissionIndex idx = wgpuQueueSubmitForIndex(queue_, finished_.size(), finished_.data());
  for (WGPUCommandBuffer cb : finished_) wgpuCommandBufferRelease(cb);
  finished_.clear();
  encoded_ = 0;
  last_submitted_ = idx;
  WGPUQueueWorkDoneCallbackInfo done = WGPU_QUEUE_WORK_DONE_CALLBACK_INFO_INIT;
  done.mode = WGPUCallbackMode_AllowSpontaneous;
  done.callback = on_work_done;
  done.userdata1 = this;
  done.userdata2 = reinterpret_cast<void*>(static_cast<std::uintptr_t>(idx));
  wgpuQueueOnSubmittedWorkDone(queue_, done);
  // Bound how far the queue runs ahead of the device (host memory for queued work grows otherwise).
  in_flight_.push_back(idx);
  while (in_flight_.size() > kMaxInFlight) {
    WGPUSubmissionIndex oldest = in_flight_.front();
    in_flight_.pop_front();
    if (completed_.load() < oldest) {
      wgpuDevicePoll(device_, true, &oldest);
      mark_completed(oldest);
    }
  }
  return idx;
}

WGPUSubmissionIndex WebGpuDevice::submit() {
  std::lock_guard lk(mu_);
  return submit_locked();
}

void WebGpuDevice::after_command_locked() {
  if (++encoded_ >= kSubmitEvery) submit_locked();
}

void WebGpuDevice::wait(WGPUSubmissionIndex index) {
  if (completed_.load() < index) {
    wgpuDevicePoll(device_, true, &index);
    mark_completed(index);
  }
  wgpuInstanceProcessEvents(instance_);
  throw_pending_error();
}

bool WebGpuDevice::done(WGPUSubmissionIndex index) {
  if (completed_.load() >= index) return true;
  wgpuDevicePoll(device_, false, nullptr);
  wgpuInstanceProcessEvents(instance_);
  throw_pending_error();
  return completed_.load() >= index;
}

// ---------------------------------------------------------------- transfers

void WebGpuDevice::write(rt::BufferImpl& dst, std::size_t off, const void* src, std::size_t n, rt::StreamImpl&, bool) {
  if (n == 0) return;
  WGPUBuffer b = buffer_of(dst);
  std::lock_guard lk(mu_);
  // queue.writeBuffer runs before the next submission: what is encoded so far must be submitted first.
  submit_locked();
  const std::size_t lo = off & ~std::size_t{3}, hi = round_up4(off + n);
  if (lo == off && hi == off + n) {
    // wgpu copies the data into its staging memory before returning, so `src` may go away (blocking either way).
    wgpuQueueWriteBuffer(queue_, b, off, src, n);
    return;
  }
  // writeBuffer moves whole 4-byte words: keep the bytes of the edge words outside the range.
  std::vector<unsigned char> words(hi - lo);
  if (lo != off) read(dst, lo, words.data(), 4, default_stream_, true);
  if (hi != off + n && (hi - 4 >= lo + 4 || lo == off))
    read(dst, hi - 4, words.data() + (hi - 4 - lo), 4, default_stream_, true);
  std::memcpy(words.data() + (off - lo), src, n);
  wgpuQueueWriteBuffer(queue_, b, lo, words.data(), words.size());
}

void WebGpuDevice::read(rt::BufferImpl& src, std::size_t off, void* dst, std::size_t n, rt::StreamImpl&, bool) {
  read_raw(buffer_of(src), off, dst, n);
}

void WebGpuDevice::read_raw(WGPUBuffer src, std::size_t off, void* dst, std::size_t n) {
  if (n == 0) return;
  // Device memory is not mappable: copy the words holding the range into a staging buffer and map that.
  const std::size_t lo = off & ~std::size_t{3}, hi = round_up4(off + n);
  WGPUBuffer staging = make_buffer(hi - lo, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst, "read staging");
  WGPUSubmissionIndex idx = 0;
  {
    std::lock_guard lk(mu_);
    wgpuCommandEncoderCopyBufferToBuffer(encoder_locked(), src, lo, staging, 0, hi - lo);
    idx = submit_locked();
  }
  int mapped = 0;
  WGPUBufferMapCallbackInfo cb = WGPU_BUFFER_MAP_CALLBACK_INFO_INIT;
  cb.mode = WGPUCallbackMode_AllowProcessEvents;
  cb.callback = [](WGPUMapAsyncStatus st, WGPUStringView, void* out, void*) {
    *static_cast<int*>(out) = st == WGPUMapAsyncStatus_Success ? 1 : -1;
  };
  cb.userdata1 = &mapped;
  wgpuBufferMapAsync(staging, WGPUMapMode_Read, 0, hi - lo, cb);
  wgpuDevicePoll(device_, true, &idx);
  mark_completed(idx);
  while (mapped == 0) {
    wgpuInstanceProcessEvents(instance_);
    if (mapped == 0) wgpuDevicePoll(device_, true, nullptr);
  }
  if (mapped < 0) {
    wgpuBufferRelease(staging);
    throw_pending_error();
    throw_wgpu(ErrorCode::DeviceError, "wgpuBufferMapAsync (read)", "mapping the staging buffer failed", label_);
  }
  const void* p = wgpuBufferGetConstMappedRange(staging, 0, hi - lo);
  std::memcpy(dst, static_cast<const unsigned char*>(p) + (off - lo), n);
  wgpuBufferUnmap(staging);
  wgpuBufferRelease(staging);
  throw_pending_error();
}

void WebGpuDevice::stamp(WGPUQuerySet set, WGPUBuffer resolved) {
  std::lock_guard lk(mu_);
  WGPUPassTimestampWrites tw = WGPU_PASS_TIMESTAMP_WRITES_INIT;
  tw.querySet = set;
  tw.beginningOfPassWriteIndex = 0;
  WGPUComputePassDescriptor pd = WGPU_COMPUTE_PASS_DESCRIPTOR_INIT;
  pd.timestampWrites = &tw;
  WGPUCommandEncoder enc = encoder_locked();
  WGPUComputePassEncoder pass = wgpuCommandEncoderBeginComputePass(enc, &pd);
  wgpuComputePassEncoderEnd(pass);
  wgpuComputePassEncoderRelease(pass);
  wgpuCommandEncoderResolveQuerySet(enc, set, 0, 1, resolved, 0);
  after_command_locked();
}

void WebGpuDevice::copy(rt::BufferImpl& src, std::size_t soff, rt::BufferImpl& dst, std::size_t doff, std::size_t n,
                        rt::StreamImpl&) {
  if (n == 0) return;
  WGPUBuffer s = buffer_of(src), d = buffer_of(dst);
  if (s == d) {
    // WebGPU copies never read and write one buffer: go through a fresh one (which also makes overlap safe).
    WGPUBuffer tmp =
        make_buffer(n + 4, WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst, "copy staging");
    const std::size_t t = soff % 4;  // same word phase as the source, so the first leg can be a plain copy
    copy_bytes(s, soff, tmp, t, n);
    copy_bytes(tmp, t, d, doff, n);
    wgpuBufferRelease(tmp);  // encoded work keeps it alive
    return;
  }
  copy_bytes(s, soff, d, doff, n);
}

void WebGpuDevice::copy_bytes(WGPUBuffer src, std::size_t soff, WGPUBuffer dst, std::size_t doff, std::size_t n) {
  if (soff % 4 == 0 && doff % 4 == 0 && n % 4 == 0) {
    std::lock_guard lk(mu_);
    wgpuCommandEncoderCopyBufferToBuffer(encoder_locked(), src, soff, dst, doff, n);
    after_command_locked();
    return;
  }
  const std::uint32_t words = static_cast<std::uint32_t>((round_up4(doff + n) - (doff & ~std::size_t{3})) / 4);
  const std::uint32_t params[] = {static_cast<std::uint32_t>(soff), static_cast<std::uint32_t>(doff),
                                  static_cast<std::uint32_t>(n)};
  const Binding b[] = {{src, 0, wgpuBufferGetSize(src)}, {dst, 0, wgpuBufferGetSize(dst)}};
  const std::uint32_t groups = (words + 255) / 256;
  const std::uint32_t gx = std::min<std::uint32_t>(groups, limits_.maxComputeWorkgroupsPerDimension);
  dispatch("bytes", "copy_bytes", b, params, gx, (groups + gx - 1) / gx);
}

void WebGpuDevice::fill(rt::BufferImpl& dst, std::size_t off, std::size_t n, const void* pattern, std::size_t psize,
                        rt::StreamImpl&) {
  if (n == 0) return;
  if (psize != 1 && psize != 2 && psize != 4 && psize != 8)
    throw Error(ErrorCode::InvalidArgument, "fill pattern of " + std::to_string(psize) + " bytes; use 1, 2, 4 or 8",
                {.op = "fill", .device = label_});
  const auto* p = static_cast<const unsigned char*>(pattern);
  bool zero = true;
  for (std::size_t i = 0; i < psize; ++i) zero = zero && p[i] == 0;
  if (zero && off % 4 == 0 && n % 4 == 0) {
    std::lock_guard lk(mu_);
    wgpuCommandEncoderClearBuffer(encoder_locked(), buffer_of(dst), off, n);
    after_command_locked();
    return;
  }
  std::uint64_t bits = 0;
  std::memcpy(&bits, pattern, psize);
  const std::uint32_t words = static_cast<std::uint32_t>((round_up4(off + n) - (off & ~std::size_t{3})) / 4);
  const std::uint32_t params[] = {static_cast<std::uint32_t>(off), static_cast<std::uint32_t>(n),
                                  static_cast<std::uint32_t>(bits), static_cast<std::uint32_t>(bits >> 32),
                                  static_cast<std::uint32_t>(psize)};
  const Binding b[] = {{buffer_of(dst), 0, wgpuBufferGetSize(buffer_of(dst))}};
  const std::uint32_t groups = (words + 255) / 256;
  const std::uint32_t gx = std::min<std::uint32_t>(groups, limits_.maxComputeWorkgroupsPerDimension);
  dispatch("fill", "fill_bytes", b, params, gx, (groups + gx - 1) / gx);
}

rt::KernelTable& kernel_table() {
  static rt::KernelTable t;
  return t;
}

}  // namespace torsh::webgpu
