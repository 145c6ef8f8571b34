#pragma once
// Configuration of the caching allocator every Backend allocates through, and
// test hooks for it. The design is described at the top of
// src/runtime/memory_pool_internal.hpp.
#include <cstddef>
#include <string>

namespace torsh {

class Backend;

enum class AllocationStrategy {
  BestFit,   // the smallest cached block that fits (ties: lowest address)
  FirstFit,  // the lowest-addressed cached block that fits: slower search, keeps high addresses free
};

// Sizes are bytes. Defaults follow PyTorch's CUDA caching allocator.
struct MemoryPoolConfig {
  // false: every buffer is its own device allocation, returned to the device when freed
  // (what PYTORCH_NO_CUDA_MEMORY_CACHING does; useful to find out-of-bounds accesses).
  bool caching = true;
  // Reserved when the backend is built, in one segment; empty_cache() keeps it.
  std::size_t initial_size = 0;
  // Hard limit on memory reserved from the device (cached blocks included); 0: none.
  // BackendBuilder::memory_pool_size() sets the same limit.
  std::size_t max_size = 0;
  AllocationStrategy strategy = AllocationStrategy::BestFit;
  // Block sizes and offsets are multiples of this (a power of two; raised to the device's
  // alignment so that a block can be any kernel's base address).
  std::size_t round_to = 512;
  // Requests up to small_limit share small_segment-sized segments; larger ones are
  // carved from large_segment-sized segments when they are at most half of one, and
  // get a segment of their own, rounded up to large_round, above that.
  std::size_t small_limit = std::size_t(1) << 20;
  std::size_t small_segment = std::size_t(2) << 20;
  std::size_t large_segment = std::size_t(20) << 20;
  std::size_t large_round = std::size_t(2) << 20;
};

namespace test_hooks {
// The next `n` raw device (or pinned host) allocations made by any pool throw
// OutOfMemory, as an exhausted device would; 0 cancels what is left.
void fail_next_device_allocations(int n);
int pending_device_allocation_failures();
// Walks the backend's pools and checks their bookkeeping (block chains tile each
// segment, free lists hold exactly the free blocks, counters match); "" when consistent.
std::string check_memory_pool(const Backend& b);
}  // namespace test_hooks

}  // namespace torsh
