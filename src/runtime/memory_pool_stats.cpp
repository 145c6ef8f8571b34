// The pool's statistics, its consistency check, its out-of-memory report, the
// validation of MemoryPoolConfig and the fault-injection hook.
#include <cstdio>
#include <unordered_set>

#include "memory_pool_internal.hpp"

namespace torsh::detail {

namespace {
std::atomic<int> g_injected_failures{0};
}

std::string format_bytes(std::size_t b) {
  char buf[80];
  if (b >= (std::size_t(1) << 30))
    std::snprintf(buf, sizeof buf, "%zu bytes (%.2f GiB)", b, b / double(1ull << 30));
  else if (b >= (std::size_t(1) << 20))
    std::snprintf(buf, sizeof buf, "%zu bytes (%.2f MiB)", b, b / double(1ull << 20));
  else
    std::snprintf(buf, sizeof buf, "%zu bytes", b);
  return buf;
}

bool take_injected_failure() {
  int n = g_injected_failures.load(std::memory_order_relaxed);
  while (n > 0)
    if (g_injected_failures.compare_exchange_weak(n, n - 1)) return true;
  return false;
}

PoolStats MemoryPool::stats() {
  std::lock_guard lk(mu_);
  flush_fast();
  PoolStats s = st_;
  for (const FreeSet* set : {&small_free_, &large_free_})
    for (const PoolBlock* b : *set) {
      s.free_bytes += b->size;
      s.largest_free_block = std::max(s.largest_free_block, b->size);
    }
  return s;
}

void MemoryPool::reset_peaks() {
  std::lock_guard lk(mu_);
  st_.peak_requested_bytes = st_.requested_bytes;
  st_.peak_allocated_bytes = st_.allocated_bytes;
  st_.peak_reserved_bytes = st_.reserved_bytes;
}

void MemoryPool::out_of_memory(std::size_t requested, std::size_t rounded, const std::string& why) {
  std::size_t largest = 0;
  for (const FreeSet* set : {&small_free_, &large_free_})
    for (const PoolBlock* b : *set) largest = std::max(largest, b->size);
  const std::string what = kind_ == Kind::Host ? "pinned host memory for " + device_.to_string() : device_.to_string();
  std::string msg = "out of memory on " + what + ": requested " + format_bytes(requested);
  if (rounded != requested) msg += " (a block of " + format_bytes(rounded) + ")";
  msg += "; allocated " + format_bytes(st_.allocated_bytes) + ", reserved " + format_bytes(st_.reserved_bytes) +
         ", largest free block " + format_bytes(largest) + ", limit ";
  msg += cfg_.max_size ? format_bytes(cfg_.max_size) + " (memory_pool_size)" : std::string("none");
  msg += ". Last failure: " + why;
  std::vector<std::string> fixes{"Free buffers that are no longer needed (Buffer::free(), or drop the last handle)"};
  if (cfg_.max_size)
    fixes.push_back("Raise the limit: BackendBuilder::memory_pool_size() / MemoryPoolConfig::max_size");
  fixes.push_back(
      "Other Backend handles built for this device keep their own cached blocks: call empty_cache() on them");
  throw Error(ErrorCode::OutOfMemory, msg, {.op = "allocate", .device = device_.to_string()}, fixes);
}

std::string MemoryPool::check() const {
  std::lock_guard lk(mu_);
  auto fail = [](const std::string& what) { return what; };
  std::size_t reserved = 0, allocated = 0, requested = 0, live = 0, free_blocks = 0, pending_blocks = 0,
              pending_bytes = 0, pending_events = 0, fast_blocks = 0;
  std::unordered_set<const PoolSegment*> segs;
  for (const auto& s : segments_) {
    segs.insert(s.get());
    reserved += s->size;
    std::size_t off = 0;
    const PoolBlock* prev = nullptr;
    for (const PoolBlock* b = s->head; b; prev = b, b = b->next) {
      const std::string where = "segment " + std::to_string(s->id) + " block at " + std::to_string(b->offset);
      if (b->seg != s.get() || b->seg_id != s->id) return fail(where + " points at another segment");
      if (b->prev != prev) return fail(where + " has a broken back link");
      if (b->offset != off)
        return fail(where + " does not start where the previous block ends (" + std::to_string(off) + ")");
      if (b->size == 0 || b->size % round_) return fail(where + " has size " + std::to_string(b->size));
      if (b->stream != s->head->stream) return fail(where + " has another stream than its segment");
      off += b->size;
      const bool in_set = set_of(b).count(const_cast<PoolBlock*>(b)) != 0;
      if (b->allocated) {
        live++;
        allocated += b->size;
        requested += b->requested;
        if (in_set || b->pending_events) return fail(where + " is allocated but listed as free or pending");
      } else if (b->pending_events) {
        pending_blocks++;
        pending_bytes += b->size;
        pending_events += static_cast<std::size_t>(b->pending_events);
        if (in_set) return fail(where + " waits for events but is listed as free");
      } else if (b->in_fast) {
        fast_blocks++;
        if (in_set) return fail(where + " is parked in a fast list and in a free list");
      } else {
        free_blocks++;
        if (cfg_.caching && !in_set) return fail(where + " is free but not in a free list (leaked)");
        if (cfg_.caching && prev && !prev->allocated && !prev->pending_events && !prev->in_fast)
          return fail(where + " and its free neighbour were not merged");
      }
    }
    if (off != s->size)
      return fail("blocks of segment " + std::to_string(s->id) + " cover " + std::to_string(off) + " of its " +
                  std::to_string(s->size) + " bytes");
  }
  for (const FreeSet* set : {&small_free_, &large_free_})
    for (const PoolBlock* b : *set)
      if (!segs.count(b->seg)) return fail("a free list holds a block of a released segment");
  std::size_t listed = 0;
  for (std::size_t c = 0; c < fast_.size(); ++c)
    for (const PoolBlock* b = fast_[c]; b; b = b->fast_next, ++listed)
      if (!segs.count(b->seg) || !b->in_fast || b->size != c * round_)
        return fail("fast list " + std::to_string(c) + " holds a block that does not belong there");
  auto expect = [&](const char* name, std::size_t got, std::size_t want) {
    return got == want ? std::string()
                       : std::string(name) + " is " + std::to_string(want) + " by the counters but " +
                             std::to_string(got) + " by the blocks";
  };
  for (const std::string& e :
       {expect("reserved bytes", reserved, st_.reserved_bytes), expect("segments", segments_.size(), st_.segments),
        expect("allocated bytes", allocated, st_.allocated_bytes),
        expect("requested bytes", requested, st_.requested_bytes), expect("live blocks", live, st_.live_blocks),
        expect("pending blocks", pending_blocks, st_.pending_blocks),
        expect("pending bytes", pending_bytes, st_.pending_bytes),
        expect("pending events", pending_events, pending_.size()), expect("parked blocks", fast_blocks, fast_blocks_),
        expect("fast-list entries", listed, fast_blocks_),
        expect("free-list entries", small_free_.size() + large_free_.size(), cfg_.caching ? free_blocks : 0)})
    if (!e.empty()) return e;
  return "";
}

void validate_pool_config(const MemoryPoolConfig& c, std::uint64_t device_total) {
  auto bad = [](const std::string& msg, const std::string& fix) {
    throw Error(ErrorCode::InvalidArgument, msg, {.op = "BackendBuilder::build"}, {fix});
  };
  auto pow2 = [](std::size_t x) { return x && !(x & (x - 1)); };
  const std::string init = "MemoryPoolConfig::initial_size of " + format_bytes(c.initial_size);
  if (c.max_size && c.initial_size > c.max_size)
    bad(init + " exceeds max_size (the limit) of " + format_bytes(c.max_size),
        "Make initial_size at most max_size / memory_pool_size");
  if (device_total && c.initial_size > device_total)
    bad(init + " exceeds the device's " + format_bytes(device_total), "Reserve at most the device's memory");
  if (c.initial_size && !c.caching) bad(init + " needs caching = true", "Drop initial_size or enable caching");
  if (!pow2(c.round_to))
    bad("MemoryPoolConfig::round_to " + std::to_string(c.round_to) + " is not a power of two", "Use e.g. 512");
  if (c.small_limit == 0 || c.small_limit > c.small_segment)
    bad("MemoryPoolConfig::small_limit " + format_bytes(c.small_limit) +
            " must be in (0, small_segment = " + format_bytes(c.small_segment) + "]",
        "Small requests must fit a small segment");
  if (c.large_segment <= c.small_limit)
    bad("MemoryPoolConfig::large_segment " + format_bytes(c.large_segment) + " must exceed small_limit " +
            format_bytes(c.small_limit),
        "Use large segments bigger than the small requests");
  if (c.large_round == 0 || c.large_round % c.round_to)
    bad("MemoryPoolConfig::large_round " + std::to_string(c.large_round) + " must be a positive multiple of round_to " +
            std::to_string(c.round_to),
        "Use e.g. 2 MiB");
}

}  // namespace torsh::detail

namespace torsh::test_hooks {
void fail_next_device_allocations(int n) { detail::g_injected_failures.store(n < 0 ? 0 : n); }
int pending_device_allocation_failures() { return detail::g_injected_failures.load(); }
}  // namespace torsh::test_hooks
