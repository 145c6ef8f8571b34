// Handle classes: Backend, Buffer, Stream, Event, and the builder's validation.
#include "torsh/runtime/backend.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "chunk_cache.hpp"
#include "memory_pool_internal.hpp"
#include "profiler_internal.hpp"
#include "registry_internal.hpp"
#include "torsh/runtime/tensor.hpp"

namespace torsh {
namespace detail {

BufferState::~BufferState() { release(); }

void BufferState::release() {
  if (block) {
    if (profiler::detail::on()) profiler::detail::record_memory(false, size, backend->device.to_string());
    pool->free(block);
    block = nullptr;
    view = BlockView{};
  } else {
    impl.reset();
  }
}

Buffer allocate_buffer(const std::shared_ptr<BackendState>& b, std::size_t bytes, rt::StreamImpl* stream) {
  const DeviceInfo& info = b->dev->info();
  if (info.total_memory && bytes > info.total_memory)
    throw Error(
        ErrorCode::OutOfMemory,
        "requested " + format_bytes(bytes) + " but the device has " + format_bytes(info.total_memory) + " in total",
        {.op = "allocate", .device = b->device.to_string()},
        {"Check the size computation; this can never fit on " + info.name});
  // First, so that a failure here leaves no block behind.
  auto st = std::allocate_shared<BufferState>(CachedAllocator<BufferState>());
  st->backend = b;
  st->pool = b->pool.get();
  PoolBlock* blk = b->pool->allocate(bytes, stream ? stream : b->default_stream);
  st->block = blk;
  st->view.raw_ = blk->seg->mem.get();
  st->view.offset_ = blk->offset;
  st->view.size_ = bytes;
  st->size = bytes;
  if (profiler::detail::on()) profiler::detail::record_memory(true, bytes, b->device.to_string());
  Buffer out;
  Access::state(out) = std::move(st);
  return out;
}

std::shared_ptr<BackendState> make_backend_state(std::shared_ptr<rt::DeviceImpl> dev, Device device,
                                                 BackendConfig cfg) {
  auto st = std::make_shared<BackendState>();
  st->dev = dev;
  st->device = device;
  st->default_stream = &dev->default_stream();
  st->pool = std::make_shared<MemoryPool>(dev, device, MemoryPool::Kind::Device, cfg.pool);
  st->cfg = std::move(cfg);
  return st;
}

void check_host_pointer(const char* op, const void* p, std::size_t bytes, const BufferState& b) {
  if (!p && bytes)
    throw Error(ErrorCode::InvalidArgument, "null host pointer for " + std::to_string(bytes) + " bytes",
                {.op = op, .device = b.backend->device.to_string()}, {"Pass the address of host memory of that size"});
}

void check_buffer_range(const char* op, std::size_t off, std::size_t bytes, const BufferState& b) {
  if (off > b.size || bytes > b.size - off)
    throw Error(ErrorCode::OutOfRange,
                "range [" + std::to_string(off) + ", " + std::to_string(off + bytes) + ") exceeds the buffer's " +
                    std::to_string(b.size) + " bytes",
                {.op = op, .device = b.backend->device.to_string()},
                {"Check the copy size and offset against Buffer::size()"});
}

std::shared_ptr<BackendState> backend_state(const Backend& b) { return Access::state(b); }
std::shared_ptr<BackendState> buffer_backend(const Buffer& b) {
  if (!Access::state(b)) throw Error(ErrorCode::InvalidState, "empty buffer handle");
  return Access::state(b)->backend;
}
Backend backend_from_state(std::shared_ptr<BackendState> s) {
  Backend b;
  Access::state(b) = std::move(s);
  return b;
}

}  // namespace detail

// ---------------------------------------------------------------- Buffer

namespace {
[[noreturn]] void freed_error(const char* what, const detail::BufferState& s) {
  throw Error(ErrorCode::InvalidState, std::string("buffer of ") + std::to_string(s.size) + " bytes " + what,
              {.op = "buffer", .device = s.backend->device.to_string()});
}

}  // namespace

std::size_t Buffer::size() const { return s_ ? s_->size : 0; }
Device Buffer::device() const { return s_ ? s_->backend->device : Device{}; }
bool Buffer::valid() const { return s_ && !s_->freed; }

detail::BufferState& Buffer::live() const {
  if (!s_) throw Error(ErrorCode::InvalidState, "use of an empty buffer handle", {.op = "buffer"});
  if (s_->freed) freed_error("used after free()", *s_);
  return *s_;
}

rt::BufferImpl& Buffer::impl() const { return live().own(); }
void* Buffer::host_ptr() const { return live().own().host_ptr(); }

void Buffer::free() {
  if (!s_) throw Error(ErrorCode::InvalidState, "free() of an empty buffer handle", {.op = "buffer.free"});
  std::lock_guard lk(s_->mu);
  if (s_->freed) freed_error("freed twice", *s_);
  s_->freed = true;
  // No wait for queued work: the pool reuses the memory in stream order (see record_stream).
  s_->release();
}

void Buffer::copy_from_host(const void* src, std::size_t bytes, std::size_t offset) {
  auto& st = live();
  detail::check_buffer_range("copy_from_host", offset, bytes, st);
  detail::check_host_pointer("copy_from_host", src, bytes, st);
  if (!bytes) return;
  auto& dev = *st.backend->dev;
  dev.write(st.raw(), st.offset() + offset, src, bytes, dev.default_stream(), true);
}

void Buffer::copy_to_host(void* dst, std::size_t bytes, std::size_t offset) const {
  auto& st = live();
  detail::check_buffer_range("copy_to_host", offset, bytes, st);
  detail::check_host_pointer("copy_to_host", dst, bytes, st);
  if (!bytes) return;
  auto& dev = *st.backend->dev;
  dev.read(st.raw(), st.offset() + offset, dst, bytes, dev.default_stream(), true);
}

namespace {
void check_stream(const char* op, const Stream& s, const Device& d) {
  if (s.device() != d)
    throw Error(ErrorCode::DeviceMismatch,
                "stream on " + s.device().to_string() + " used for a buffer on " + d.to_string(),
                {.op = op, .device = d.to_string()});
}
}  // namespace

void Buffer::copy_from_host_async(const void* src, std::size_t bytes, Stream& s, std::size_t offset) {
  auto& st = live();
  detail::check_buffer_range("copy_from_host_async", offset, bytes, st);
  detail::check_host_pointer("copy_from_host_async", src, bytes, st);
  check_stream("copy_from_host_async", s, device());
  if (!bytes) return;
  st.backend->dev->write(st.raw(), st.offset() + offset, src, bytes, s.impl(), false);
  record_stream(s);
}

void Buffer::copy_to_host_async(void* dst, std::size_t bytes, Stream& s, std::size_t offset) const {
  auto& st = live();
  detail::check_buffer_range("copy_to_host_async", offset, bytes, st);
  detail::check_host_pointer("copy_to_host_async", dst, bytes, st);
  check_stream("copy_to_host_async", s, device());
  if (!bytes) return;
  st.backend->dev->read(st.raw(), st.offset() + offset, dst, bytes, s.impl(), false);
  record_stream(s);
}

void Buffer::copy_from(const Buffer& src, std::size_t bytes, std::size_t src_offset, std::size_t dst_offset) {
  auto& d = live();
  auto& sr = src.live();
  detail::check_buffer_range("copy_from (source)", src_offset, bytes, sr);
  detail::check_buffer_range("copy_from (destination)", dst_offset, bytes, d);
  if (!bytes) return;
  if (sr.backend->dev == d.backend->dev) {
    auto& dev = *d.backend->dev;
    dev.copy(sr.raw(), sr.offset() + src_offset, d.raw(), d.offset() + dst_offset, bytes, dev.default_stream());
    return;
  }
  // Across devices: stage through the host unless one side is host memory already.
  if (void* p = sr.own().host_ptr()) {
    copy_from_host(static_cast<char*>(p) + src_offset, bytes, dst_offset);
  } else if (void* q = d.own().host_ptr()) {
    src.copy_to_host(static_cast<char*>(q) + dst_offset, bytes, src_offset);
  } else {
    std::vector<unsigned char> staging(bytes);
    src.copy_to_host(staging.data(), bytes, src_offset);
    copy_from_host(staging.data(), bytes, dst_offset);
  }
}

void Buffer::fill_bytes(unsigned char value) { fill_pattern(&value, 1, 0, size()); }

void Buffer::fill_pattern(const void* pattern, std::size_t pattern_size, std::size_t offset, std::size_t bytes) {
  auto& st = live();
  if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8)
    throw Error(ErrorCode::InvalidArgument, "fill pattern of " + std::to_string(pattern_size) + " bytes",
                {.op = "fill", .device = device().to_string()}, {"Use a pattern of 1, 2, 4 or 8 bytes"});
  detail::check_buffer_range("fill", offset, bytes, st);
  if (bytes % pattern_size)
    throw Error(ErrorCode::InvalidArgument, "fill size is not a multiple of the pattern size",
                {.op = "fill", .device = device().to_string()});
  if (!bytes) return;
  auto& dev = *st.backend->dev;
  dev.fill(st.raw(), st.offset() + offset, bytes, pattern, pattern_size, dev.default_stream());
}

// ---------------------------------------------------------------- Stream / Event

void Stream::synchronize() { impl().synchronize(); }
void Stream::record(Event& e) {
  if (e.device() != device())
    throw Error(ErrorCode::DeviceMismatch,
                "event of " + e.device().to_string() + " recorded on a stream of " + device().to_string(),
                {.op = "stream.record"});
  impl().record(e.impl());
  e.s_->recorded = true;
}
void Stream::wait(const Event& e) {
  if (e.device() != device())
    throw Error(ErrorCode::DeviceMismatch,
                "stream of " + device().to_string() + " waits on an event of " + e.device().to_string(),
                {.op = "stream.wait"}, {"Synchronize the event on the host instead"});
  impl().wait(e.impl());
}
Device Stream::device() const { return s_ ? s_->device : Device{}; }
rt::StreamImpl& Stream::impl() const {
  if (!s_) throw Error(ErrorCode::InvalidState, "use of an empty stream handle", {.op = "stream"});
  return *s_->impl;
}

void Event::synchronize() { impl().synchronize(); }
bool Event::query() { return impl().query(); }
double Event::elapsed_ms(const Event& later) const {
  if (!s_->recorded || !later.s_ || !later.s_->recorded)
    throw Error(ErrorCode::InvalidState, "elapsed_ms needs both events recorded on a stream",
                {.op = "event.elapsed_ms", .device = device().to_string()});
  return s_->impl->elapsed_ms(*later.s_->impl);
}
rt::EventImpl& Event::impl() const {
  if (!s_) throw Error(ErrorCode::InvalidState, "use of an empty event handle", {.op = "event"});
  return *s_->impl;
}
Device Event::device() const { return s_ ? s_->device : Device{}; }

// ---------------------------------------------------------------- Backend

BackendType Backend::type() const { return s_->device.type; }
Device Backend::device() const { return s_->device; }
std::string Backend::name() const {
  return std::string(backend_name(type())) + ":" + std::to_string(s_->device.index) + " (" + info().name + ")";
}
const DeviceInfo& Backend::info() const { return s_->dev->info(); }
Capabilities Backend::capabilities() const {
  Capabilities c = s_->dev->capabilities();
  c.kernel_dialects = s_->dev->kernel_dialects();  // one source of truth: what build_kernel takes
  return c;
}
PerformanceHints Backend::hints() const { return s_->dev->hints(); }
const BackendConfig& Backend::config() const { return s_->cfg; }
bool Backend::supports(rt::OpKind op, DType dtype) const { return s_->dev->supports(op, dtype); }
rt::DeviceImpl& Backend::impl() const { return *s_->dev; }

Buffer Backend::allocate(std::size_t bytes) {
  if (bytes == 0)
    throw Error(ErrorCode::InvalidArgument, "allocation of 0 bytes", {.op = "allocate", .device = device().to_string()},
                {"Allocate at least one byte; empty tensors do not need a raw buffer"});
  return detail::allocate_buffer(s_, bytes);
}

Buffer Backend::allocate(std::size_t bytes, const Stream& stream) {
  if (bytes == 0)
    throw Error(ErrorCode::InvalidArgument, "allocation of 0 bytes", {.op = "allocate", .device = device().to_string()},
                {"Allocate at least one byte; empty tensors do not need a raw buffer"});
  if (stream.device() != device())
    throw Error(ErrorCode::DeviceMismatch,
                "allocation on " + device().to_string() + " for a stream of " + stream.device().to_string(),
                {.op = "allocate", .device = device().to_string()});
  return detail::allocate_buffer(s_, bytes, &stream.impl());
}

Stream Backend::default_stream() const {
  Stream s;
  s.s_ = std::make_shared<detail::StreamState>();
  s.s_->dev = s_->dev;
  s.s_->device = s_->device;
  s.s_->impl = &s_->dev->default_stream();
  return s;
}

Stream Backend::create_stream() {
  Stream s;
  s.s_ = std::make_shared<detail::StreamState>();
  s.s_->dev = s_->dev;
  s.s_->device = s_->device;
  s.s_->owned = s_->dev->create_stream();
  s.s_->impl = s.s_->owned.get();
  return s;
}

Event Backend::create_event() {
  Event e;
  e.s_ = std::make_shared<detail::EventState>();
  e.s_->dev = s_->dev;
  e.s_->device = s_->device;
  e.s_->impl = s_->dev->create_event();
  return e;
}

void Backend::synchronize() { s_->dev->synchronize(); }

namespace {
std::size_t checked_nbytes(const Shape& shape, DType dtype, const Device& d) {
  std::size_t n = dtype_size(dtype);
  for (auto dim : shape.dims()) {
    // A multiply with an overflow flag, not a division: this runs on every op.
    if (__builtin_mul_overflow(n, static_cast<std::size_t>(dim), &n))
      throw Error(ErrorCode::InvalidArgument,
                  "tensor size overflows: " + shape.to_string() + " of " + std::string(dtype_name(dtype)),
                  {.op = "empty",
                   .shapes = {shape.to_string()},
                   .dtypes = {std::string(dtype_name(dtype))},
                   .device = d.to_string()});
  }
  return n;
}
}  // namespace

Tensor detail::empty_on(const std::shared_ptr<BackendState>& b, const Shape& shape, DType dtype) {
  return Access::fresh_tensor(allocate_buffer(b, checked_nbytes(shape, dtype, b->device)), dtype, shape);
}

Tensor Backend::empty(const Shape& shape, DType dtype) { return detail::empty_on(s_, shape, dtype); }

Tensor Backend::zeros(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  if (t.nbytes()) t.buffer().impl();  // validity
  if (t.nbytes()) const_cast<Buffer&>(t.buffer()).fill_bytes(0);
  return t;
}

Tensor Backend::from_host(const void* data, const Shape& shape, DType dtype) {
  // Only an empty tensor may come from no memory; checked before the allocation.
  if (!data && shape.numel() != 0)
    throw Error(ErrorCode::InvalidArgument, "null host pointer for " + std::to_string(shape.numel()) + " elements",
                {.op = "from_host",
                 .shapes = {shape.to_string()},
                 .dtypes = {std::string(dtype_name(dtype))},
                 .device = device().to_string()},
                {"Pass the address of numel() * dtype size readable bytes"});
  Tensor t = empty(shape, dtype);
  t.copy_from_host(data, t.nbytes());
  return t;
}

// ---------------------------------------------------------------- creation

namespace {
std::map<const rt::DeviceImpl*, std::shared_ptr<detail::BackendState>>& default_states() {
  static std::map<const rt::DeviceImpl*, std::shared_ptr<detail::BackendState>> m;
  return m;
}
std::mutex& default_states_mu() {
  static std::mutex m;
  return m;
}

std::shared_ptr<rt::DeviceImpl> open_device(BackendType type, int index) {
  auto& e = rt::Registry::get().entry(type);
  if (!e.driver)
    throw Error(ErrorCode::BackendUnavailable,
                std::string(backend_name(type)) + " backend is not available: " + e.status.reason,
                {.op = "create", .device = Device{type, index}.to_string()});
  const int n = e.driver->device_count();
  if (index < 0 || index >= n)
    throw Error(ErrorCode::OutOfRange,
                "device index " + std::to_string(index) + " is out of range: " + std::string(backend_name(type)) +
                    " has " + std::to_string(n) + " device(s)",
                {.op = "create", .device = Device{type, index}.to_string()},
                {"Use an index in [0, " + std::to_string(n) + "); `torsh info` lists the devices"});
  return e.driver->device(index);
}
}  // namespace

std::vector<BackendType> Backend::available() {
  std::vector<BackendType> out;
  for (auto& e : rt::Registry::get().entries())
    if (e.status.available) out.push_back(e.status.type);
  return out;
}

Backend Backend::create(BackendType type, int device) {
  if (type == BackendType::Auto) {
    if (device != 0)
      throw Error(ErrorCode::InvalidArgument, "a device index needs an explicit backend type", {.op = "create"},
                  {"Name the backend, e.g. Backend::create(BackendType::OpenCl, 1)"});
    return auto_select();
  }
  auto dev = open_device(type, device);
  std::lock_guard lk(default_states_mu());
  auto& st = default_states()[dev.get()];
  if (!st) {
    BackendConfig cfg;
    cfg.type = type;
    cfg.device_id = device;
    st = detail::make_backend_state(dev, Device{type, device}, cfg);
  }
  return detail::backend_from_state(st);
}

Backend Backend::auto_select() {
  auto r = explain_selection(0);
  return create(r.chosen.type, r.chosen.index);
}

Backend Backend::with_free_memory(std::size_t bytes, BackendType preference) {
  if (preference != BackendType::Auto) {
    auto& e = rt::Registry::get().entry(preference);
    for (auto& d : e.status.devices) {
      const std::uint64_t free = d.free_memory.value_or(d.total_memory);
      if (free >= bytes) return create(preference, d.index);
    }
    throw Error(ErrorCode::OutOfMemory,
                "no " + std::string(backend_name(preference)) + " device has " + std::to_string(bytes) + " bytes free",
                {.op = "with_free_memory"}, {"Use BackendType::Auto to consider every backend"});
  }
  auto r = explain_selection(bytes);
  return create(r.chosen.type, r.chosen.index);
}

BackendBuilder Backend::builder() { return BackendBuilder(); }

Backend BackendBuilder::build() const {
  BackendConfig c = cfg_;
  auto bad = [&](const std::string& msg, const std::string& fix) {
    throw Error(ErrorCode::InvalidArgument, msg, {.op = "BackendBuilder::build"}, {fix});
  };
  if (c.device_id < 0) bad("device_id " + std::to_string(c.device_id) + " is negative", "Use a device index >= 0");
  if (c.num_threads < 0)
    bad("num_threads " + std::to_string(c.num_threads) + " is negative", "Use 0 (one per core) or a positive count");
  BackendType t = c.type;
  if (t == BackendType::Auto) {
    if (c.device_id != 0) bad("device_id needs an explicit backend type", "Set backend_type() as well");
    t = explain_selection(0).chosen.type;
  }
  const bool gpu_vendor = t == BackendType::Cuda || t == BackendType::Rocm;
  if (c.enable_tensor_cores && !gpu_vendor)
    bad("enable_tensor_cores applies to CUDA and ROCm, not " + std::string(backend_name(t)),
        "Drop enable_tensor_cores or choose BackendType::Cuda / Rocm");
  if (c.enable_cudnn && t != BackendType::Cuda)
    bad("enable_cudnn applies to CUDA only, not " + std::string(backend_name(t)),
        "Drop enable_cudnn or choose BackendType::Cuda");
  if (c.num_threads > 0 && t != BackendType::Cpu)
    bad("num_threads applies to the CPU backend, not " + std::string(backend_name(t)),
        "Drop num_threads for device backends");
  if (!c.enable_simd && t != BackendType::Cpu)
    bad("enable_simd(false) applies to the CPU backend only", "Drop enable_simd for device backends");
  if (c.num_threads > 4096)
    bad("num_threads " + std::to_string(c.num_threads) + " is absurd", "Use at most the core count");

  // One limit, settable from either place.
  if (c.memory_pool_size && c.pool.max_size && c.memory_pool_size != c.pool.max_size)
    bad("memory_pool_size of " + std::to_string(c.memory_pool_size) + " bytes and MemoryPoolConfig::max_size of " +
            std::to_string(c.pool.max_size) + " bytes disagree",
        "Set the limit in one place");
  c.memory_pool_size = c.pool.max_size = std::max(c.memory_pool_size, c.pool.max_size);

  auto dev = open_device(t, c.device_id);
  const auto total = dev->info().total_memory;
  if (c.memory_pool_size && total && c.memory_pool_size > total)
    bad("memory_pool_size of " + std::to_string(c.memory_pool_size) + " bytes exceeds the device's " +
            std::to_string(total) + " bytes",
        "Use at most the device's total memory (see `torsh info`)");
  detail::validate_pool_config(c.pool, total);

  c.type = t;
  auto st = detail::make_backend_state(dev, Device{t, c.device_id}, c);
  if (t == BackendType::Cpu && c.num_threads > 0) rt::cpu_set_num_threads(*dev, c.num_threads);
  return detail::backend_from_state(st);
}

}  // namespace torsh
