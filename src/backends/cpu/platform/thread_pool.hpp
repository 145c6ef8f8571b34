#pragma once
// A persistent pool for the CPU kernels. The calling thread works too; idle
// workers spin briefly before sleeping, so back-to-back ops do not pay a wake-up.
// A pool larger than the cores this process may run on does not spin at all:
// spinning threads would take the cores from the ones with work, and an op
// would wait for hundreds of time slices instead of a few microseconds.
// Nested or concurrent calls run serially on the caller instead of deadlocking.
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace torsh::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // Runs fn(task) for task in [0, tasks), spread over the pool.
  void run(int tasks, const std::function<void(int)>& fn);
  // Runs fn(begin, end) over [0, n) in chunks of at least `grain` elements.
  // Work that fits one chunk runs inline: no std::function, no pool traffic.
  template <class F>
  void parallel_for(std::int64_t n, std::int64_t grain, F&& fn) {
    if (n <= 0) return;
    if (n <= grain || size() == 1) {
      fn(std::int64_t{0}, n);
      return;
    }
    parallel_for_split(n, grain, fn);
  }

 private:
  void parallel_for_split(std::int64_t n, std::int64_t grain,
                          const std::function<void(std::int64_t, std::int64_t)>& fn);
  void worker_loop();
  void drain();

  std::vector<std::thread> workers_;
  std::mutex busy_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> pending_workers_{0};
  std::atomic<int> next_task_{0};
  std::atomic<bool> stop_{false};
  bool oversubscribed_ = false;  // more threads than cores: sleep and yield, never spin
  int tasks_ = 0;
  const std::function<void(int)>* fn_ = nullptr;
};

// The process-wide pool used by CPU ops; resized by BackendBuilder::num_threads.
ThreadPool& pool();
void set_pool_threads(int threads);
int default_threads();

}  // namespace torsh::cpu
