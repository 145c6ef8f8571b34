#pragma once
// The memory pool's lock. Its hot critical sections (a bin pop or push and
// the statistics) are a few dozen instructions, where std::mutex's lock and
// unlock cost two locked instructions and two calls, and an allocate-and-free
// pays them twice. Here taking the lock is one exchange and releasing it a
// plain release store, under half the cost (src/backends/cpu/README.md,
// src/runtime/pool_lock.hpp). Waiters spin briefly, then yield, then sleep,
// so a holder that grows the pool (a device allocation, which can take
// milliseconds) does not have them burn a core.
#include <atomic>
#include <chrono>
#include <thread>

namespace torsh::detail {

class PoolLock {
 public:
  void lock() noexcept {
    if (!held_.exchange(true, std::memory_order_acquire)) return;
    contended();
  }
  bool try_lock() noexcept {
    return !held_.load(std::memory_order_relaxed) && !held_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  static void relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  void contended() noexcept {
    for (unsigned waits = 0;;) {
      while (held_.load(std::memory_order_relaxed)) {
        if (waits < 128)
          relax();
        else if (waits < 1024)
          std::this_thread::yield();
        else
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        ++waits;
      }
      if (!held_.exchange(true, std::memory_order_acquire)) return;
    }
  }
  std::atomic<bool> held_{false};
};

}  // namespace torsh::detail
