#pragma once
// Internal: what a Kernel handle holds, and the per-device kernel cache.
#include <atomic>
#include <memory>
#include <string>

#include "torsh/runtime/user_kernel.hpp"

namespace torsh::detail {

struct KernelState {
  std::shared_ptr<rt::DeviceImpl> dev;  // kept alive with the kernel
  Device device;
  std::shared_ptr<rt::UserKernelImpl> impl;  // shared with the in-memory cache
  std::string name, entry;
  KernelDialect dialect = KernelDialect::Torsh;
  KernelOrigin origin = KernelOrigin::Compiled;
  double build_ms = 0;
  std::string log, cache_path;
  std::atomic<std::size_t>* launches = nullptr;  // the device's launch counter (never freed)
};

}  // namespace torsh::detail
