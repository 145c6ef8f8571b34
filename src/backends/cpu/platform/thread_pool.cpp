#include "thread_pool.hpp"

#include <sched.h>

#include <algorithm>
#include <memory>

namespace torsh::cpu {
namespace {
thread_local bool t_in_pool = false;
constexpr int kSpinIterations = 20000;  // ~tens of microseconds before sleeping
}  // namespace

ThreadPool::ThreadPool(int threads) : oversubscribed_(threads > default_threads()) {
  for (int i = 1; i < std::max(1, threads); ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  stop_ = true;
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::drain() {
  for (int t; (t = next_task_.fetch_add(1, std::memory_order_relaxed)) < tasks_;) (*fn_)(t);
}

void ThreadPool::worker_loop() {
  t_in_pool = true;
  // Generation 0 is the pool's birth: a job posted before this thread first
  // runs must still be seen as new.
  std::uint64_t seen = 0;
  const int spin_limit = oversubscribed_ ? 0 : kSpinIterations;
  while (true) {
    int spins = 0;
    std::uint64_t g;
    while ((g = generation_.load(std::memory_order_acquire)) == seen) {
      if (++spins < spin_limit) {
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
      } else {
        generation_.wait(seen);
      }
    }
    seen = g;
    if (stop_) return;
    drain();
    pending_workers_.fetch_sub(1, std::memory_order_release);
  }
}

void ThreadPool::run(int tasks, const std::function<void(int)>& fn) {
  if (tasks <= 0) return;
  std::unique_lock lk(busy_, std::try_to_lock);
  if (tasks == 1 || workers_.empty() || t_in_pool || !lk.owns_lock()) {
    for (int t = 0; t < tasks; ++t) fn(t);
    return;
  }
  fn_ = &fn;
  tasks_ = tasks;
  next_task_.store(0, std::memory_order_relaxed);
  pending_workers_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  t_in_pool = true;
  drain();
  t_in_pool = false;
  while (pending_workers_.load(std::memory_order_acquire) != 0) {
    if (oversubscribed_) {
      std::this_thread::yield();
    } else {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
  }
}

void ThreadPool::parallel_for_split(std::int64_t n, std::int64_t grain,
                                    const std::function<void(std::int64_t, std::int64_t)>& fn) {
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t max_tasks = (n + grain - 1) / grain;
  const int tasks = static_cast<int>(std::min<std::int64_t>(max_tasks, size()));
  if (tasks <= 1) {
    fn(0, n);
    return;
  }
  run(tasks, [&](int t) {
    const std::int64_t b = n * t / tasks, e = n * (t + 1) / tasks;
    if (b < e) fn(b, e);
  });
}

int default_threads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

namespace {
std::mutex g_pool_mu;
// Read on every op without a lock. Replaced pools are retired, never freed:
// an op on another thread may still be running on one, and joining threads
// during static destruction can hang.
std::atomic<ThreadPool*> g_pool{nullptr};
std::vector<ThreadPool*>& retired() {
  static auto* v = new std::vector<ThreadPool*>;
  return *v;
}
}  // namespace

ThreadPool& pool() {
  if (ThreadPool* p = g_pool.load(std::memory_order_acquire)) return *p;
  std::lock_guard lk(g_pool_mu);
  if (!g_pool.load()) g_pool.store(new ThreadPool(default_threads()), std::memory_order_release);
  return *g_pool.load();
}

void set_pool_threads(int threads) {
  pool();
  std::lock_guard lk(g_pool_mu);
  ThreadPool* old = g_pool.load();
  if (old->size() == threads) return;
  g_pool.store(new ThreadPool(threads), std::memory_order_release);
  retired().push_back(old);
}

}  // namespace torsh::cpu
