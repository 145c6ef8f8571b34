#pragma once
// Work-groups whose kernel uses BARRIER(): each item is a fiber on its own
// small stack; BARRIER() switches to the next item of the group, round robin,
// and every item is resumed once all of them reached the barrier. One group
// runs at a time per thread, start to end, so the dialect's per-thread
// LOCAL_ARRAYs are per-work-group memory.
#include <atomic>
#include <cstddef>
#include <string>

#include "kernel_abi.hpp"

namespace torsh::cpu::uk {

// Each item's stack. A kernel's own locals fit many times over; the items of
// the largest work-group (kMaxWorkGroup) take 64 MiB of address space per
// thread, touched only as deep as the kernel goes.
inline constexpr std::size_t kFiberStackBytes = 64 * 1024;

struct BarrierLaunch {
  RunItemFn run = nullptr;
  void** args = nullptr;
  Item geometry{};  // local_size and num_groups
  std::string kernel;
  std::string device;
  const std::atomic<bool>* abort = nullptr;  // another thread failed: stop early
};

// Every item's stack lies above a guard page, a memory mapping of its own:
// the process's map count limit (vm.max_map_count, 65530 by default) bounds
// the stacks there can be. At most this many are mapped at once (live or kept
// for the next launch), so at most kStackBudget / block-volume work-groups
// with barriers run at a time.
inline constexpr std::size_t kStackBudget = 8192;
inline std::size_t max_concurrent_groups(std::size_t items_per_group) {
  return items_per_group >= kStackBudget ? 1 : kStackBudget / items_per_group;
}

// Runs work-groups (linear index, x fastest) on the calling thread, claiming
// them from `next` until `total`. Throws Error(InvalidArgument) when some
// items return while others wait at a barrier, and rethrows what the kernel threw.
void run_groups_with_barriers(const BarrierLaunch& launch, std::atomic<long>& next, long total);

}  // namespace torsh::cpu::uk
