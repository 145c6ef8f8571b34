#pragma once
// The one way a failed CUDA runtime call becomes a torsh::Error: the call, the
// CUDA error name and description, and the device.

#include <string>

#include "torsh/core/error.hpp"
#include "vendor.hpp"

namespace torsh::cuda {

// "cudaErrorMemoryAllocation (out of memory)"
std::string cuda_error_text(cudaError_t err);

// Throws Error naming `call`, the CUDA error and `device` ("cuda:0 (name)"):
// OutOfMemory for allocation failures, DeviceError for the rest.
[[noreturn]] void throw_cuda(cudaError_t err, const std::string& call, const std::string& device);

inline void check_cuda(cudaError_t err, const char* call, const std::string& device) {
  if (err != cudaSuccess) throw_cuda(err, call, device);
}

// The calling thread's current device is `ordinal` while a guard lives, and
// the previous one afterwards. The current device is per host thread and the
// runtime calls devices from any thread, so every entry point that creates or
// enqueues work takes one.
class DeviceGuard {
 public:
  DeviceGuard(int ordinal, const std::string& device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  int ordinal_;
};

}  // namespace torsh::cuda
