#include "work_group_fibers.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "fiber_context.hpp"
#include "torsh/core/error.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define TORSH_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TORSH_FIBER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TORSH_FIBER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TORSH_FIBER_TSAN 1
#endif
#endif

#if defined(TORSH_FIBER_ASAN)
extern "C" void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, std::size_t size);
extern "C" void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old, std::size_t* size_old);
extern "C" void __asan_unpoison_memory_region(const volatile void* addr, std::size_t size);
#endif
#if defined(TORSH_FIBER_TSAN)
extern "C" void* __tsan_get_current_fiber();
extern "C" void* __tsan_create_fiber(unsigned flags);
extern "C" void __tsan_destroy_fiber(void* fiber);
extern "C" void __tsan_switch_to_fiber(void* fiber, unsigned flags);
#endif

namespace torsh::cpu::uk {

namespace {

// One mapping holding `count` stacks, each above a guard page so an overflow
// faults instead of running into the neighbour's stack.
class StackArena {
 public:
  explicit StackArena(std::size_t count) : count_(count) {
    page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    stride_ = kFiberStackBytes + page_;
    bytes_ = stride_ * count;
    void* p =
        mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED)
      throw Error(ErrorCode::OutOfMemory,
                  "no address space for " + std::to_string(count) + " work-item stacks of " +
                      std::to_string(kFiberStackBytes / 1024) + " KiB",
                  {.op = "launch", .device = "cpu:0"}, {"Launch with a smaller work-group (block)"});
    base_ = static_cast<char*>(p);
    // Guards are a safety net: with very many threads the kernel's map count
    // limit could refuse them, and the stacks still work without.
    for (std::size_t i = 0; i < count; ++i) mprotect(base_ + i * stride_, page_, PROT_NONE);
  }
  ~StackArena() { munmap(base_, bytes_); }
  StackArena(const StackArena&) = delete;
  StackArena& operator=(const StackArena&) = delete;
  std::size_t count() const { return count_; }
  char* stack(std::size_t i) const { return base_ + i * stride_ + page_; }

 private:
  char* base_ = nullptr;
  std::size_t count_ = 0, page_ = 0, stride_ = 0, bytes_ = 0;
};

// Arenas are kept for the next launch (mapping and guarding 1024 stacks
// costs about a millisecond), within kStackBudget stacks in all.
struct ArenaCache {
  std::mutex mu;
  std::vector<std::unique_ptr<StackArena>> free;
  std::size_t mapped = 0;  // stacks in all arenas, leased or free
};
ArenaCache& arena_cache() {
  static auto* c = new ArenaCache;  // never destroyed: launches may run during static destruction
  return *c;
}

class ArenaLease {
 public:
  explicit ArenaLease(std::size_t count) {
    ArenaCache& c = arena_cache();
    std::vector<std::unique_ptr<StackArena>> unmap;  // unmapped outside the lock
    {
      std::lock_guard lk(c.mu);
      for (auto it = c.free.begin(); it != c.free.end(); ++it)
        if ((*it)->count() >= count) {
          arena_ = std::move(*it);
          c.free.erase(it);
          return;
        }
      // Room for a new one: give back kept arenas, largest first.
      std::sort(c.free.begin(), c.free.end(), [](const auto& a, const auto& b) { return a->count() < b->count(); });
      while (c.mapped + count > kStackBudget && !c.free.empty()) {
        c.mapped -= c.free.back()->count();
        unmap.push_back(std::move(c.free.back()));
        c.free.pop_back();
      }
      c.mapped += count;
    }
    try {
      arena_ = std::make_unique<StackArena>(count);
    } catch (...) {
      std::lock_guard lk(c.mu);
      c.mapped -= count;
      throw;
    }
  }
  ~ArenaLease() {
    ArenaCache& c = arena_cache();
    std::lock_guard lk(c.mu);
    c.free.push_back(std::move(arena_));
  }
  ArenaLease(const ArenaLease&) = delete;
  ArenaLease& operator=(const ArenaLease&) = delete;
  StackArena& operator*() const { return *arena_; }

 private:
  std::unique_ptr<StackArena> arena_;
};

enum class FiberState : unsigned char { Ready, Waiting, Done };

struct Group;

struct Fiber {
  Item item{};
  FiberContext ctx{};
  FiberState state = FiberState::Ready;
  std::exception_ptr error;
  Group* group = nullptr;
  char* stack = nullptr;
#if defined(TORSH_FIBER_TSAN)
  void* tsan = nullptr;
#endif
};

struct Group {
  FiberContext scheduler{};
  const BarrierLaunch* launch = nullptr;
#if defined(TORSH_FIBER_ASAN)
  const void* scheduler_stack = nullptr;
  std::size_t scheduler_stack_size = 0;
#endif
#if defined(TORSH_FIBER_TSAN)
  void* tsan_scheduler = nullptr;
#endif
};

thread_local Fiber* t_fiber = nullptr;

// From a fiber back to its group's scheduler; `final` when the fiber is done.
void to_scheduler(Fiber& f, bool final) {
  Group& g = *f.group;
#if defined(TORSH_FIBER_TSAN)
  __tsan_switch_to_fiber(g.tsan_scheduler, 0);
#endif
#if defined(TORSH_FIBER_ASAN)
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(final ? nullptr : &fake, g.scheduler_stack, g.scheduler_stack_size);
#endif
  fiber_switch(f.ctx, g.scheduler);
#if defined(TORSH_FIBER_ASAN)
  __sanitizer_finish_switch_fiber(fake, &g.scheduler_stack, &g.scheduler_stack_size);
#endif
  (void) final;
}

void fiber_main(void* p) {
  Fiber& f = *static_cast<Fiber*>(p);
#if defined(TORSH_FIBER_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, &f.group->scheduler_stack, &f.group->scheduler_stack_size);
#endif
  try {
    f.group->launch->run(f.group->launch->args, &f.item);
  } catch (...) {
    f.error = std::current_exception();
  }
  f.state = FiberState::Done;
  to_scheduler(f, true);
  __builtin_trap();  // a finished fiber is never resumed
}

// The dialect's BARRIER(): park this item until the scheduler's next round.
void barrier(Item*) {
  Fiber& f = *t_fiber;
  f.state = FiberState::Waiting;
  to_scheduler(f, false);
}

void resume(Group& g, Fiber& f) {
  t_fiber = &f;
#if defined(TORSH_FIBER_TSAN)
  __tsan_switch_to_fiber(f.tsan, 0);
#endif
#if defined(TORSH_FIBER_ASAN)
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, f.stack, kFiberStackBytes);
#endif
  fiber_switch(g.scheduler, f.ctx);
#if defined(TORSH_FIBER_ASAN)
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  t_fiber = nullptr;
}

std::string group_name(const Item& it) {
  return "(" + std::to_string(it.group_id[0]) + ", " + std::to_string(it.group_id[1]) + ", " +
         std::to_string(it.group_id[2]) + ")";
}

// Round robin until every item returned. After each round every live item
// either returned or waits at a barrier; a mix means the items disagree.
void run_group(Group& g, std::vector<Fiber>& fibers) {
  std::size_t done = 0;
  for (long round = 0;; ++round) {
    std::size_t waiting = 0;
    for (Fiber& f : fibers) {
      if (f.state == FiberState::Done) continue;
      f.state = FiberState::Ready;
      resume(g, f);
      if (f.state == FiberState::Done) {
        ++done;
        if (f.error) std::rethrow_exception(f.error);
      } else {
        ++waiting;
      }
    }
    if (waiting == 0) return;
    if (done > 0) {
      const BarrierLaunch& l = *g.launch;
      throw Error(ErrorCode::InvalidArgument,
                  "kernel '" + l.kernel + "': in work-group " + group_name(fibers.front().item) + ", " +
                      std::to_string(done) + " of " + std::to_string(fibers.size()) + " work-items returned while " +
                      std::to_string(waiting) + " wait at BARRIER() (barrier " + std::to_string(round + 1) +
                      " of the group); on a GPU this hangs or corrupts work-group memory",
                  {.op = l.kernel, .device = l.device},
                  {"Every work-item of a work-group must reach the same BARRIER() calls: move the barrier out of "
                   "conditions that differ between items, and return only after the last barrier"});
    }
  }
}

}  // namespace

void run_groups_with_barriers(const BarrierLaunch& launch, std::atomic<long>& next, long total) {
  const Item& geo = launch.geometry;
  const long bx = geo.local_size[0], by = geo.local_size[1], bz = geo.local_size[2];
  const long nx = geo.num_groups[0], ny = geo.num_groups[1];
  const auto n = static_cast<std::size_t>(bx * by * bz);
  ArenaLease arena(n);
  std::vector<Fiber> fibers(n);
  Group g;
  g.launch = &launch;
#if defined(TORSH_FIBER_TSAN)
  g.tsan_scheduler = __tsan_get_current_fiber();
#endif
  for (long grp; (grp = next.fetch_add(1, std::memory_order_relaxed)) < total;) {
    if (launch.abort && launch.abort->load(std::memory_order_relaxed)) return;
    for (std::size_t i = 0; i < n; ++i) {
      Fiber& f = fibers[i];
      f.item = geo;
      f.item.group_id[0] = grp % nx;
      f.item.group_id[1] = (grp / nx) % ny;
      f.item.group_id[2] = grp / (nx * ny);
      const long li = static_cast<long>(i);
      f.item.local_id[0] = li % bx;
      f.item.local_id[1] = (li / bx) % by;
      f.item.local_id[2] = li / (bx * by);
      f.item.barrier = &barrier;
      f.state = FiberState::Ready;
      f.error = nullptr;
      f.group = &g;
      f.stack = (*arena).stack(i);
#if defined(TORSH_FIBER_ASAN)
      // The last item on this stack ended without returning through its
      // frames, whose redzones are still poisoned.
      __asan_unpoison_memory_region(f.stack, kFiberStackBytes);
#endif
      // Tops staggered by a cache line per item: stacks a page multiple apart
      // would put every item's hot frames in the same cache sets.
      fiber_init(f.ctx, f.stack, kFiberStackBytes - (i % 64) * 64, &fiber_main, &f);
#if defined(TORSH_FIBER_TSAN)
      f.tsan = __tsan_create_fiber(0);
#endif
    }
#if defined(TORSH_FIBER_TSAN)
    struct DestroyFibers {
      std::vector<Fiber>& fs;
      ~DestroyFibers() {
        for (Fiber& f : fs) __tsan_destroy_fiber(f.tsan);
      }
    } destroy{fibers};
#endif
    run_group(g, fibers);
  }
}

}  // namespace torsh::cpu::uk
