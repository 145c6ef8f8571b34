// Pinned host memory (Backend::allocate_pinned) and stream-ordered copies
// between it and device buffers (Buffer::copy_from_async).
#include <cstdlib>

#include "memory_pool_internal.hpp"
#include "registry_internal.hpp"

namespace torsh {

namespace detail {
namespace {
class HostMemory final : public rt::BufferImpl {
 public:
  explicit HostMemory(std::size_t bytes) : size_(bytes) {
    constexpr std::size_t kAlign = 64;
    data_ = std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
    if (!data_)
      throw Error(ErrorCode::OutOfMemory, "host allocation of " + format_bytes(bytes) + " failed",
                  {.op = "allocate_pinned"});
  }
  ~HostMemory() override { std::free(data_); }
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  std::size_t size() const override { return size_; }
  void* host_ptr() const override { return data_; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};
}  // namespace

std::unique_ptr<rt::BufferImpl> make_host_memory(std::size_t bytes) { return std::make_unique<HostMemory>(bytes); }
}  // namespace detail

Buffer Backend::allocate_pinned(std::size_t bytes) {
  if (bytes == 0)
    throw Error(ErrorCode::InvalidArgument, "pinned allocation of 0 bytes",
                {.op = "allocate_pinned", .device = device().to_string()});
  std::shared_ptr<detail::MemoryPool> hp;
  {
    std::lock_guard lk(s_->host_pool_mu);
    if (!s_->host_pool) {
      // Host memory is the machine's, not the device's: no limit and no reserve.
      MemoryPoolConfig c;
      c.caching = s_->cfg.pool.caching;
      c.strategy = s_->cfg.pool.strategy;
      s_->host_pool = std::make_shared<detail::MemoryPool>(s_->dev, s_->device, detail::MemoryPool::Kind::Host, c);
    }
    hp = s_->host_pool;
  }
  auto st = std::make_shared<detail::BufferState>();
  st->backend = detail::backend_state(Backend::create(BackendType::Cpu));
  st->pool = hp.get();
  st->pool_owner = hp;
  detail::PoolBlock* blk = hp->allocate(bytes, nullptr);
  st->block = blk;
  st->view.raw_ = blk->seg->mem.get();
  st->view.offset_ = blk->offset;
  st->view.size_ = bytes;
  st->size = bytes;
  Buffer out;
  out.s_ = std::move(st);
  return out;
}

void Buffer::copy_from_async(const Buffer& src, std::size_t bytes, Stream& s, std::size_t src_offset,
                             std::size_t dst_offset) {
  auto& d = live();
  auto& sr = src.live();
  detail::check_buffer_range("copy_from_async (source)", src_offset, bytes, sr);
  detail::check_buffer_range("copy_from_async (destination)", dst_offset, bytes, d);
  const auto& ss = detail::Access::state(s);
  if (!ss) throw Error(ErrorCode::InvalidState, "copy_from_async on an empty stream handle", {.op = "copy_from_async"});
  const Device sd = ss->device;
  auto on_s = [&](const detail::BufferState& b) { return b.backend->device == sd; };
  auto pinned_for_s = [&](const detail::BufferState& b) {
    return b.block && b.pool->kind() == detail::MemoryPool::Kind::Host && b.pool->device() == sd;
  };
  if (!on_s(d) && !on_s(sr))
    throw Error(
        ErrorCode::DeviceMismatch,
        "copy from " + src.device().to_string() + " to " + device().to_string() + " on a stream of " + sd.to_string(),
        {.op = "copy_from_async", .device = sd.to_string()},
        {"Use a stream of the device that holds one of the buffers"});
  if (!bytes) return;
  rt::DeviceImpl& dev = *ss->dev;
  if (on_s(d) && on_s(sr)) {
    dev.copy(sr.raw(), sr.offset() + src_offset, d.raw(), d.offset() + dst_offset, bytes, *ss->impl);
  } else if (on_s(d) && pinned_for_s(sr)) {
    dev.write(d.raw(), d.offset() + dst_offset, static_cast<const char*>(sr.own().host_ptr()) + src_offset, bytes,
              *ss->impl, false);
  } else if (on_s(sr) && pinned_for_s(d)) {
    dev.read(sr.raw(), sr.offset() + src_offset, static_cast<char*>(d.own().host_ptr()) + dst_offset, bytes, *ss->impl,
             false);
  } else {
    // Pageable host memory or another device: the host side could change under an
    // async copy, so copy now, after the work already queued on the stream.
    ss->impl->synchronize();
    copy_from(src, bytes, src_offset, dst_offset);
    return;
  }
  for (const Buffer* b : {static_cast<const Buffer*>(this), &src})
    if (b->s_->block && b->s_->pool->device() == sd) b->record_stream(s);
}

}  // namespace torsh
