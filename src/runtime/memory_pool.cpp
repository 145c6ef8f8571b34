// The caching pool: allocation, splitting, coalescing and growth. The design is
// described in memory_pool_internal.hpp.
#include <algorithm>
#include <bit>

#include "memory_pool_internal.hpp"

namespace torsh::detail {

namespace {
// Rounds up to a multiple of m; SIZE_MAX when that overflows (no device can satisfy it).
std::size_t round_to_multiple(std::size_t x, std::size_t m) {
  if (x > SIZE_MAX - (m - 1)) return SIZE_MAX;
  return (x + m - 1) / m * m;
}
}  // namespace

MemoryPool::MemoryPool(std::shared_ptr<rt::DeviceImpl> dev, Device device, Kind kind, const MemoryPoolConfig& cfg)
    : dev_(std::move(dev)),
      device_(device),
      kind_(kind),
      cfg_(cfg),
      small_free_(Order{cfg.strategy == AllocationStrategy::FirstFit}, NodeAllocator<PoolBlock*>(&nodes_)),
      large_free_(Order{cfg.strategy == AllocationStrategy::FirstFit}, NodeAllocator<PoolBlock*>(&nodes_)) {
  nodes_.reserve(1024);
  // Any block may be a kernel's base address, so its offset keeps the device's alignment.
  const std::size_t device_align = kind_ == Kind::Device ? dev_->hints().alignment : 64;
  round_ = std::bit_ceil(std::max<std::size_t>({cfg_.round_to, device_align, 1}));
  round_shift_ = static_cast<unsigned>(std::countr_zero(round_));
  if (kind_ == Kind::Device) max_alloc_ = dev_->capabilities().max_allocation;
  if (cfg_.caching && cfg_.strategy == AllocationStrategy::BestFit)
    fast_.assign((cfg_.small_limit >> round_shift_) + 1, nullptr);
  if (cfg_.initial_size && cfg_.caching) {
    std::lock_guard lk(mu_);
    const std::size_t size = round_up(cfg_.initial_size);
    const bool small = size <= cfg_.small_limit;
    std::string why;
    PoolBlock* b = try_segment(size, size, small, kind_ == Kind::Device ? &dev_->default_stream() : nullptr, why);
    if (!b) out_of_memory(cfg_.initial_size, size, why);
    b->seg->keep = true;
    set_of(b).insert(b);
  }
}

MemoryPool::~MemoryPool() {
  // Buffers hold the pool, so nothing is allocated any more; blocks may still wait for events.
  try {
    wait_pending();
  } catch (...) {
  }
  small_free_.clear();
  large_free_.clear();
  for (auto& s : segments_) {
    for (PoolBlock* b = s->head; b;) {
      PoolBlock* n = b->next;
      delete b;
      b = n;
    }
  }
  for (PoolBlock* b : spare_blocks_) delete b;
}

std::size_t MemoryPool::segment_size(std::size_t rounded, bool small) const {
  if (!cfg_.caching) return rounded;
  if (small) return std::max(cfg_.small_segment, rounded);
  if (rounded <= cfg_.large_segment / 2) return cfg_.large_segment;
  return round_to_multiple(rounded, cfg_.large_round);
}

PoolBlock* MemoryPool::new_block() {
  if (spare_blocks_.empty()) return new PoolBlock;
  PoolBlock* b = spare_blocks_.back();
  spare_blocks_.pop_back();
  return b;
}

void MemoryPool::recycle(PoolBlock* b) {
  *b = PoolBlock{};
  // A pool that once split a lot keeps a bounded number of spare nodes.
  if (spare_blocks_.size() < 256) {
    try {
      spare_blocks_.push_back(b);
      return;
    } catch (...) {
    }
  }
  delete b;
}

PoolBlock* MemoryPool::find_free(FreeSet& set, rt::StreamImpl* stream, std::size_t size) {
  PoolBlock key;
  key.stream = stream;
  if (!set.key_comp().by_address) {
    key.size = size;
    auto it = set.lower_bound(&key);
    if (it == set.end() || (*it)->stream != stream) return nullptr;
    PoolBlock* b = *it;
    set.erase(it);
    return b;
  }
  for (auto it = set.lower_bound(&key); it != set.end() && (*it)->stream == stream; ++it) {
    if ((*it)->size >= size) {
      PoolBlock* b = *it;
      set.erase(it);
      return b;
    }
  }
  return nullptr;
}

PoolBlock* MemoryPool::allocate(std::size_t bytes, rt::StreamImpl* stream) {
  std::lock_guard lk(mu_);
  if (!pending_.empty()) process_events();
  const std::size_t size = round_up(bytes);
  const bool small = size <= cfg_.small_limit;
  PoolBlock* b = nullptr;
  if (small && !fast_.empty()) {
    PoolBlock*& head = fast_[size >> round_shift_];
    if (head && head->stream == stream) {
      b = head;
      head = b->fast_next;
      b->fast_next = nullptr;
      b->in_fast = false;
      fast_blocks_--;
    }
  }
  if (!b && cfg_.caching) {
    // Parked blocks merge before a search, so best fit sees every hole.
    if (fast_blocks_) flush_fast();
    b = find_free(small ? small_free_ : large_free_, stream, size);
  }
  if (b)
    st_.cache_hits++;
  else
    b = grow(size, bytes, small, stream);
  if (cfg_.caching && b->size != size) split(b, size);
  b->allocated = true;
  b->requested = bytes;
  st_.live_blocks++;
  st_.allocations++;
  st_.requested_bytes += bytes;
  st_.peak_requested_bytes = std::max(st_.peak_requested_bytes, st_.requested_bytes);
  st_.allocated_bytes += b->size;
  st_.peak_allocated_bytes = std::max(st_.peak_allocated_bytes, st_.allocated_bytes);
  return b;
}

PoolBlock* MemoryPool::grow(std::size_t size, std::size_t requested, bool small, rt::StreamImpl* stream) {
  const std::size_t want = segment_size(size, small);
  std::string why;
  // A tight segment before giving up on the preferred one: it may fit where the larger does not.
  auto attempt = [&]() -> PoolBlock* {
    if (PoolBlock* b = try_segment(want, size, small, stream, why)) return b;
    return want > size ? try_segment(size, size, small, stream, why) : nullptr;
  };
  if (PoolBlock* b = attempt()) return b;
  st_.oom_retries++;
  if (release_cached(true) > 0)
    if (PoolBlock* b = attempt()) return b;
  if (!pending_.empty()) {
    wait_pending();
    release_cached(true);
    if (PoolBlock* b = attempt()) return b;
  }
  st_.ooms++;
  out_of_memory(requested, size, why);
}

PoolBlock* MemoryPool::try_segment(std::size_t bytes, std::size_t rounded, bool small, rt::StreamImpl* stream,
                                   std::string& why) {
  if (const std::size_t limit = cfg_.max_size) {
    const std::size_t room = limit > st_.reserved_bytes ? limit - st_.reserved_bytes : 0;
    if (room < rounded) {
      why = "the pool's limit would be exceeded";
      return nullptr;
    }
    // Under a limit a segment shrinks to the room left rather than failing.
    bytes = std::min(bytes, room / round_ * round_);
  }
  if (max_alloc_ && bytes > max_alloc_) bytes = std::max(rounded, max_alloc_ / round_ * round_);
  segments_.reserve(segments_.size() + 1);  // nothing below throws once the memory is ours
  bool pinned = false;
  std::unique_ptr<rt::BufferImpl> mem;
  try {
    mem = raw_allocate(bytes, pinned);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::OutOfMemory) throw;
    why = e.message();
    return nullptr;
  } catch (const std::bad_alloc&) {
    why = "the host allocation failed";
    return nullptr;
  }
  auto seg = std::make_unique<PoolSegment>();
  PoolBlock* b = new_block();
  seg->mem = std::move(mem);
  seg->size = bytes;
  seg->id = next_seg_id_++;
  seg->small = small;
  seg->pinned = pinned;
  seg->head = b;
  b->seg = seg.get();
  b->stream = stream;
  b->seg_id = seg->id;
  b->size = bytes;
  segments_.push_back(std::move(seg));
  st_.segments++;
  st_.device_allocations++;
  st_.reserved_bytes += bytes;
  st_.peak_reserved_bytes = std::max(st_.peak_reserved_bytes, st_.reserved_bytes);
  return b;
}

void MemoryPool::split(PoolBlock* b, std::size_t size) {
  const std::size_t rest = b->size - size;
  // A large-pool remainder of at most small_limit could only serve small requests, which never look there.
  if (b->seg->small ? rest < round_ : rest <= cfg_.small_limit) return;
  PoolBlock* r = new_block();
  r->seg = b->seg;
  r->stream = b->stream;
  r->seg_id = b->seg_id;
  r->offset = b->offset + size;
  r->size = rest;
  r->prev = b;
  r->next = b->next;
  if (b->next) b->next->prev = r;
  b->next = r;
  b->size = size;
  set_of(r).insert(r);
}

void MemoryPool::free(PoolBlock* b) noexcept {
  std::lock_guard lk(mu_);
  st_.live_blocks--;
  st_.requested_bytes -= b->requested;
  st_.allocated_bytes -= b->size;
  b->allocated = false;
  b->requested = 0;
  if (!b->uses.empty()) {
    for (auto& s : b->uses) {
      try {
        std::unique_ptr<rt::EventImpl> ev;
        if (!spare_events_.empty()) {
          ev = std::move(spare_events_.back());
          spare_events_.pop_back();
        } else {
          ev = dev_->create_event();
        }
        s->record(*ev);
        pending_.push_back({std::move(ev), b});
        b->pending_events++;
      } catch (...) {
        // No event to wait on: wait for the stream here instead.
        try {
          s->synchronize();
        } catch (...) {
        }
      }
    }
    b->uses.clear();
    if (b->pending_events) {
      st_.pending_blocks++;
      st_.pending_bytes += b->size;
      return;
    }
  }
  if (!fast_.empty() && b->seg->small && b->size <= cfg_.small_limit) {
    PoolBlock*& head = fast_[b->size >> round_shift_];
    if (!head) {
      try {
        fast_used_.push_back(static_cast<std::uint32_t>(b->size >> round_shift_));
      } catch (...) {
        return_block(b);
        return;
      }
    }
    b->in_fast = true;
    b->fast_next = head;
    head = b;
    fast_blocks_++;
    return;
  }
  return_block(b);
}

void MemoryPool::flush_fast() {
  for (std::uint32_t c : fast_used_) {
    PoolBlock* b = fast_[c];
    fast_[c] = nullptr;
    while (b) {
      PoolBlock* n = b->fast_next;
      b->fast_next = nullptr;
      b->in_fast = false;
      return_block(b);
      b = n;
    }
  }
  fast_used_.clear();
  fast_blocks_ = 0;
}

void MemoryPool::return_block(PoolBlock* b) {
  if (!cfg_.caching) {
    release_segment(b->seg);
    return;
  }
  auto mergeable = [](const PoolBlock* n) { return n && !n->allocated && n->pending_events == 0 && !n->in_fast; };
  if (PoolBlock* p = b->prev; mergeable(p)) {
    set_of(p).erase(p);
    p->size += b->size;
    p->next = b->next;
    if (b->next) b->next->prev = p;
    recycle(b);
    b = p;
  }
  if (PoolBlock* n = b->next; mergeable(n)) {
    set_of(n).erase(n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    recycle(n);
  }
  set_of(b).insert(b);
}

void MemoryPool::release_segment(PoolSegment* s) {
  PoolBlock* h = s->head;
  set_of(h).erase(h);
  recycle(h);
  st_.segments--;
  st_.device_frees++;
  st_.reserved_bytes -= s->size;
  auto it = std::find_if(segments_.begin(), segments_.end(), [s](const auto& p) { return p.get() == s; });
  std::swap(*it, segments_.back());
  segments_.pop_back();  // the device memory goes here
}

std::size_t MemoryPool::release_cached(bool including_reserve) {
  flush_fast();
  std::size_t released = 0;
  for (std::size_t i = 0; i < segments_.size();) {
    PoolSegment* s = segments_[i].get();
    const PoolBlock* h = s->head;
    if (!h->next && !h->allocated && h->pending_events == 0 && !h->in_fast && (including_reserve || !s->keep)) {
      released += s->size;
      release_segment(s);  // moves the last segment into slot i
    } else {
      ++i;
    }
  }
  return released;
}

void MemoryPool::record_stream(PoolBlock* b, std::shared_ptr<rt::StreamImpl> s) {
  std::lock_guard lk(mu_);
  if (s.get() == b->stream) return;
  for (const auto& u : b->uses)
    if (u == s) return;
  b->uses.push_back(std::move(s));
}

void MemoryPool::process_events() {
  std::size_t keep = 0;
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    bool done = true;
    try {
      done = pending_[i].event->query();
    } catch (...) {
      // A failed command will not touch the block again.
    }
    if (!done) {
      if (keep != i) pending_[keep] = std::move(pending_[i]);
      ++keep;
      continue;
    }
    PoolBlock* b = pending_[i].block;
    if (spare_events_.size() < 64) spare_events_.push_back(std::move(pending_[i].event));
    if (--b->pending_events == 0) {
      st_.pending_blocks--;
      st_.pending_bytes -= b->size;
      return_block(b);
    }
  }
  pending_.resize(keep);
}

void MemoryPool::wait_pending() {
  for (auto& p : pending_) {
    try {
      p.event->synchronize();
    } catch (...) {
    }
  }
  process_events();
}

std::size_t MemoryPool::empty_cache() {
  std::lock_guard lk(mu_);
  wait_pending();
  flush_fast();
  return release_cached(false);
}

std::unique_ptr<rt::BufferImpl> MemoryPool::raw_allocate(std::size_t bytes, bool& pinned) {
  if (take_injected_failure())
    throw Error(ErrorCode::OutOfMemory,
                "injected device allocation failure (torsh::test_hooks::fail_next_device_allocations)",
                {.op = "allocate", .device = device_.to_string()});
  if (kind_ == Kind::Host) {
    if (auto m = dev_->allocate_host(bytes)) {
      pinned = true;
      return m;
    }
    return make_host_memory(bytes);
  }
  return dev_->allocate(bytes);
}

}  // namespace torsh::detail
