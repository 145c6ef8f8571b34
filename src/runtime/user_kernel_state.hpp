#pragma once
// Internal: what a Kernel handle holds, and the per-device kernel cache.
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
};

// Counts one launch on `dev` in the kernel statistics.
void count_kernel_launch(const rt::DeviceImpl* dev);

}  // namespace torsh::detail
