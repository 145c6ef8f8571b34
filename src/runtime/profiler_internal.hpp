#pragma once
// Hooks the op layer and the allocator call while a profiler session runs.
#include <atomic>
#include <memory>
#include <string>

#include "torsh/runtime/backend_impl.hpp"
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

}  // namespace torsh::profiler::detail
