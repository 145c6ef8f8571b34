#pragma once
// The caching memory pool behind every Buffer.
//
// Device allocations (cudaMalloc, clCreateBuffer, page-faulting host memory)
// cost microseconds to milliseconds and synchronise; ops allocate their outputs
// on every call. So a pool per Backend keeps what buffers give back and hands it
// out again. It sits above rt::DeviceImpl and knows nothing of the device: a
// backend supplies raw allocate/free (BufferImpl's destructor), streams and
// events, and gets pooling, limits and statistics.
//
// - Segments are raw device allocations. Blocks tile a segment (a doubly linked
//   list in address order); a Buffer is one block: (segment, byte offset, size).
//   Kernels get (segment's BufferImpl, offset) through TensorArg, so no backend
//   needs sub-buffers.
// - Sizes round up to round_to (512 B, or the device's base alignment if larger).
//   Requests up to small_limit (1 MiB) come from the small pool's 2 MiB
//   segments; larger ones from the large pool: 20 MiB segments, or a segment of
//   their own rounded to 2 MiB when above half of that. Keeping small blocks out
//   of large segments stops them from pinning large segments.
// - A request takes the best-fitting cached block (or the first by address, a
//   configurable strategy) of its pool and stream and splits off the rest when
//   the rest is useful (small pool: >= round_to; large pool: > small_limit).
//   A block that comes back merges with free neighbours.
// - Stream-aware reuse: a segment belongs to the stream it was allocated for and
//   its blocks are reused only for that stream, which orders the next user after
//   the last. A block also used on other streams (Buffer::record_stream, or the
//   runtime's own async copies) is held back until an event recorded on each of
//   those streams at free time has completed. Host pools (pinned memory) have no
//   owning stream: the host touches their memory directly, so every stream use
//   holds the block back.
// - When the device (or the hard limit) refuses a segment: release the cached
//   segments that are entirely free and retry; then wait for held-back blocks,
//   release again and retry with an exact-size segment; then throw OutOfMemory
//   naming requested, allocated, reserved, largest free block and the limit.
// - empty_cache() returns every entirely free segment except the initial reserve.
//   Blocks cannot move (buffers hold their addresses), so this is the
//   defragmentation there is: the next allocations get fresh, right-sized segments.
//
// One mutex per pool. The common cache hit -- a small block of a size just
// freed -- pops a per-size list (see fast_); other hits are a lookup in a small
// ordered set whose nodes are recycled. Neither allocates.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "pool_lock.hpp"
#include "torsh/backend/backend_impl.hpp"
#include "torsh/core/device.hpp"
#include "torsh/runtime/backend.hpp"
#include "torsh/runtime/memory_pool.hpp"

namespace torsh::detail {

struct PoolSegment;

struct PoolBlock {
  PoolSegment* seg = nullptr;
  rt::StreamImpl* stream = nullptr;  // the segment's stream (free-list key)
  std::uint64_t seg_id = 0;          // the segment's age (address order across segments)
  std::size_t offset = 0;            // bytes into the segment
  std::size_t size = 0;              // bytes, a multiple of the pool's rounding
  std::size_t requested = 0;         // bytes asked for, while allocated
  PoolBlock* prev = nullptr;         // neighbours in the segment
  PoolBlock* next = nullptr;
  bool allocated = false;
  bool in_fast = false;  // parked in a fast list, not yet merged
  PoolBlock* fast_next = nullptr;
  int pending_events = 0;  // events still to complete before it can be reused
  // Streams besides `stream` that used the block; kept alive until free() records on them.
  std::vector<std::shared_ptr<rt::StreamImpl>> uses;
};

struct PoolSegment {
  std::unique_ptr<rt::BufferImpl> mem;
  std::size_t size = 0;
  std::uint64_t id = 0;
  bool small = false;
  bool keep = false;    // the initial reserve: empty_cache() leaves it
  bool pinned = false;  // host pools: the device supplied the memory (page-locked / mapped)
  PoolBlock* head = nullptr;
};

struct PoolStats {
  std::size_t live_blocks = 0, requested_bytes = 0, peak_requested_bytes = 0, allocations = 0;
  std::size_t allocated_bytes = 0, peak_allocated_bytes = 0;
  std::size_t reserved_bytes = 0, peak_reserved_bytes = 0;
  std::size_t segments = 0, cache_hits = 0, device_allocations = 0, device_frees = 0;
  std::size_t oom_retries = 0, ooms = 0, pending_blocks = 0, pending_bytes = 0;
  std::size_t free_bytes = 0, largest_free_block = 0;
};

// Recycles the free lists' tree nodes (all of one size): std::pmr's pool
// resource searches its chunks on every deallocation, which cost more than the
// rest of a cache hit.
class NodeCache {
 public:
  NodeCache() = default;
  NodeCache(const NodeCache&) = delete;
  NodeCache& operator=(const NodeCache&) = delete;
  ~NodeCache() {
    for (void* p : free_) ::operator delete(p);
  }
  void* get(std::size_t bytes) {
    if (bytes != node_ || free_.empty()) return ::operator new(bytes);
    void* p = free_.back();
    free_.pop_back();
    return p;
  }
  void put(void* p, std::size_t bytes) noexcept {
    if (!node_) node_ = bytes;
    if (bytes == node_ && free_.size() < free_.capacity()) {
      free_.push_back(p);
      return;
    }
    ::operator delete(p);
  }
  void reserve(std::size_t n) { free_.reserve(n); }

 private:
  std::size_t node_ = 0;
  std::vector<void*> free_;
};

template <class T>
struct NodeAllocator {
  using value_type = T;
  NodeCache* cache;
  explicit NodeAllocator(NodeCache* c) : cache(c) {}
  template <class U>
  NodeAllocator(const NodeAllocator<U>& o) : cache(o.cache) {}
  T* allocate(std::size_t n) { return static_cast<T*>(cache->get(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { cache->put(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const NodeAllocator<U>& o) const {
    return cache == o.cache;
  }
};

class MemoryPool {
 public:
  // Device pools hand out dev->allocate() memory; host pools dev->allocate_host()
  // (pinned memory for allocate_pinned), or the runtime's own host memory.
  enum class Kind { Device, Host };
  MemoryPool(std::shared_ptr<rt::DeviceImpl> dev, Device device, Kind kind, const MemoryPoolConfig& cfg);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // A block of at least `bytes` (0 allowed) for use on `stream` (nullptr in host pools).
  PoolBlock* allocate(std::size_t bytes, rt::StreamImpl* stream);
  // Never throws: it runs in destructors.
  void free(PoolBlock* b) noexcept;
  // `s` must be a stream of this pool's device.
  void record_stream(PoolBlock* b, std::shared_ptr<rt::StreamImpl> s);
  // Returns the bytes given back to the device.
  std::size_t empty_cache();
  PoolStats stats();  // merges parked blocks first, so free bytes and the largest block are true
  void reset_peaks();
  std::string check() const;

  rt::DeviceImpl& device_impl() const { return *dev_; }
  const Device& device() const { return device_; }
  Kind kind() const { return kind_; }
  std::size_t limit() const { return cfg_.max_size; }
  std::size_t rounding() const { return round_; }

 private:
  // (stream, size, address) for best fit, (stream, address) for first fit.
  struct Order {
    bool by_address;
    bool operator()(const PoolBlock* a, const PoolBlock* b) const {
      if (a->stream != b->stream) return std::less<>{}(a->stream, b->stream);
      if (!by_address && a->size != b->size) return a->size < b->size;
      if (a->seg_id != b->seg_id) return a->seg_id < b->seg_id;
      return a->offset < b->offset;
    }
  };
  using FreeSet = std::set<PoolBlock*, Order, NodeAllocator<PoolBlock*>>;

  // SIZE_MAX when rounding overflows: no device can satisfy that.
  std::size_t round_up(std::size_t bytes) const {
    if (bytes > SIZE_MAX - round_) return SIZE_MAX;
    return bytes ? (bytes + round_ - 1) & ~(round_ - 1) : round_;
  }
  std::size_t segment_size(std::size_t rounded, bool small) const;
  PoolBlock* find_free(FreeSet& set, rt::StreamImpl* stream, std::size_t size);
  PoolBlock* grow(std::size_t rounded, std::size_t requested, bool small, rt::StreamImpl* stream);
  PoolBlock* try_segment(std::size_t bytes, std::size_t rounded, bool small, rt::StreamImpl* stream, std::string& why);
  void split(PoolBlock* b, std::size_t size);
  void return_block(PoolBlock* b);
  void release_segment(PoolSegment* s);
  std::size_t release_cached(bool including_reserve);
  void process_events();
  void flush_fast();
  void wait_pending();
  [[noreturn]] void out_of_memory(std::size_t requested, std::size_t rounded, const std::string& why);
  FreeSet& set_of(const PoolBlock* b) { return b->seg->small ? small_free_ : large_free_; }
  const FreeSet& set_of(const PoolBlock* b) const { return b->seg->small ? small_free_ : large_free_; }
  PoolBlock* new_block();
  void recycle(PoolBlock* b);
  std::unique_ptr<rt::BufferImpl> raw_allocate(std::size_t bytes, bool& pinned);

  std::shared_ptr<rt::DeviceImpl> dev_;
  Device device_;
  Kind kind_;
  MemoryPoolConfig cfg_;
  std::size_t round_ = 512;
  unsigned round_shift_ = 9;  // log2(round_): sizes are divided on the hot path
  std::size_t max_alloc_ = 0;

  mutable PoolLock mu_;
  NodeCache nodes_;
  FreeSet small_free_, large_free_;
  std::vector<std::unique_ptr<PoolSegment>> segments_;
  std::vector<PoolBlock*> spare_blocks_;
  struct Pending {
    std::unique_ptr<rt::EventImpl> event;
    PoolBlock* block;
  };
  std::vector<Pending> pending_;
  std::vector<std::unique_ptr<rt::EventImpl>> spare_events_;
  // Fast lists (best fit only): small blocks that come back are parked per exact
  // size, unmerged, and the next request of that size takes them in O(1) -- the
  // alloc/free pair of an op's output. Any other request merges them all first,
  // as do growing, emptying and reporting, so best fit and the statistics see
  // the same blocks as without them.
  std::vector<PoolBlock*> fast_;          // by size / round_; empty when disabled
  std::vector<std::uint32_t> fast_used_;  // classes that may be non-empty
  std::size_t fast_blocks_ = 0;
  std::uint64_t next_seg_id_ = 1;
  PoolStats st_;
};

// Checks a pool configuration; throws InvalidArgument naming the fields in conflict.
void validate_pool_config(const MemoryPoolConfig& c, std::uint64_t device_total);

// The memory_pool.hpp fault-injection hook: true when this raw allocation must fail.
bool take_injected_failure();

// Host memory from the runtime itself, for devices without host memory of their own.
std::unique_ptr<rt::BufferImpl> make_host_memory(std::size_t bytes);

std::string format_bytes(std::size_t b);  // "3072 bytes", "20971520 bytes (20.00 MiB)"

}  // namespace torsh::detail
