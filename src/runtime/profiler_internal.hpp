#pragma once
// Hooks the op layer and the allocator call while a profiler session runs.
#include <atomic>
#include <memory>
#include <string>
#include <tuple>

#include "torsh/backend/backend_impl.hpp"
#include "torsh/runtime/profiler.hpp"

namespace torsh::profiler::detail {

extern std::atomic<bool> g_active;
inline bool on() { return g_active.load(std::memory_order_relaxed); }

double now_us();  // since the session started

// `begin`/`end` are device events recorded around the op, or null on devices
// without event timing; they are resolved when the session stops.
void record_op(std::string name, std::string device, std::string shapes, double host_start_us, double host_dur_us,
               std::unique_ptr<rt::EventImpl> begin, std::unique_ptr<rt::EventImpl> end);
void record_memory(bool alloc, std::size_t bytes, std::string device);

// Times one op or kernel launch on `s` while a session runs: host time, and
// device events around it where the device has them. Costs one relaxed load
// when no session runs.
class OpTimer {
 public:
  OpTimer(rt::DeviceImpl& dev, rt::StreamImpl& s) : on_(on()), s_(s) {
    if (!on_) return;
    t0_ = now_us();
    if (dev.type() != BackendType::Cpu) {
      e0_ = dev.create_event();
      e1_ = dev.create_event();
      s.record(*e0_);
    }
  }
  // The work went elsewhere (a CPU fallback): device events would time the staging copies.
  void drop_device_timing() {
    e0_.reset();
    e1_.reset();
  }
  // Records the op; `describe` (called only while a session runs) returns its
  // name, device and shapes, so an op outside a session formats nothing.
  template <class Describe>
  void finish(Describe&& describe) {
    if (!on_) return;
    if (e1_) s_.record(*e1_);
    const double t1 = now_us();
    auto [name, device, shapes] = describe();
    record_op(std::move(name), std::move(device), std::move(shapes), t0_, t1 - t0_, std::move(e0_), std::move(e1_));
  }

 private:
  bool on_;
  rt::StreamImpl& s_;
  double t0_ = 0;
  std::unique_ptr<rt::EventImpl> e0_, e1_;
};

}  // namespace torsh::profiler::detail
