// What the Backend and Buffer handles expose of their pools: statistics,
// empty_cache(), record_stream() and the consistency check for tests.
#include "memory_pool_internal.hpp"
#include "registry_internal.hpp"

namespace torsh {

namespace {
std::shared_ptr<detail::MemoryPool> host_pool_of(detail::BackendState& s) {
  std::lock_guard lk(s.host_pool_mu);
  return s.host_pool;
}
}  // namespace

MemoryStats Backend::memory_stats() const {
  const detail::PoolStats p = s_->pool->stats();
  MemoryStats m;
  m.live_buffers = p.live_blocks;
  m.live_bytes = p.requested_bytes;
  m.peak_bytes = p.peak_requested_bytes;
  m.total_allocations = p.allocations;
  m.allocated_bytes = p.allocated_bytes;
  m.peak_allocated_bytes = p.peak_allocated_bytes;
  m.reserved_bytes = p.reserved_bytes;
  m.peak_reserved_bytes = p.peak_reserved_bytes;
  m.segments = p.segments;
  m.cache_hits = p.cache_hits;
  m.device_allocations = p.device_allocations;
  m.device_frees = p.device_frees;
  m.oom_retries = p.oom_retries;
  m.ooms = p.ooms;
  m.pending_bytes = p.pending_bytes;
  m.free_bytes = p.free_bytes;
  m.largest_free_block = p.largest_free_block;
  m.limit = s_->pool->limit();
  if (auto hp = host_pool_of(*s_)) {
    const detail::PoolStats h = hp->stats();
    m.pinned_reserved_bytes = h.reserved_bytes;
    m.pinned_allocated_bytes = h.allocated_bytes;
  }
  return m;
}

void Backend::reset_peak_memory_stats() { s_->pool->reset_peaks(); }

std::size_t Backend::empty_cache() {
  std::size_t n = s_->pool->empty_cache();
  if (auto hp = host_pool_of(*s_)) n += hp->empty_cache();
  return n;
}

void Buffer::record_stream(const Stream& s) const {
  auto& st = live();
  const auto& ss = detail::Access::state(s);
  if (!ss) throw Error(ErrorCode::InvalidState, "record_stream with an empty stream handle", {.op = "record_stream"});
  if (!st.block) return;  // memory of its own: nothing is reused
  if (ss->impl == st.block->stream) return;
  if (ss->device != st.pool->device())
    throw Error(ErrorCode::DeviceMismatch,
                "stream of " + ss->device.to_string() + " recorded for memory of " + st.pool->device().to_string(),
                {.op = "record_stream", .device = device().to_string()});
  // The aliasing pointer keeps the stream's handle state alive until the free records on it.
  st.pool->record_stream(st.block, std::shared_ptr<rt::StreamImpl>(ss, ss->impl));
}

bool Buffer::pinned() const {
  auto& st = live();
  return st.block && st.block->seg->pinned;
}

namespace test_hooks {
std::string check_memory_pool(const Backend& b) {
  auto s = detail::backend_state(b);
  std::string e = s->pool->check();
  if (!e.empty()) return e;
  if (auto hp = host_pool_of(*s)) {
    e = hp->check();
    if (!e.empty()) return "pinned host pool: " + e;
  }
  return "";
}
}  // namespace test_hooks

}  // namespace torsh
