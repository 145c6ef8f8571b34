#pragma once
// Run-time compilation: one cl_program per source and device, its kernels
// created on first use and kept. The embedded kernels (src/backends/gpu/kernels, through
// cmake/EmbedKernels.cmake) are built once per device by OpenClDevice::kernel().
#include <map>
#include <mutex>
#include <string>

#include "cl_error.hpp"

namespace torsh::opencl {

// A kernel ready to launch. clSetKernelArg + clEnqueueNDRangeKernel on one
// cl_kernel must not interleave between threads, so launches hold `mu`.
struct Kernel {
  cl_kernel handle = nullptr;
  std::mutex* mu = nullptr;
  const char* name = "";
  const std::string* device = nullptr;  // label for error messages
  void set_arg(cl_uint index, std::size_t size, const void* value) const;
};

class Program {
 public:
  // Builds `source` for `dev`. A failed build throws ErrorCode::KernelCompile
  // whose message carries the complete build log.
  Program(cl_context ctx, cl_device_id dev, std::string label, const char* source, const char* options);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  Kernel kernel(const char* name);
  int num_kernels() const;

 private:
  cl_program prog_ = nullptr;
  std::string label_;
  std::mutex mu_;         // guards kernels_
  std::mutex launch_mu_;  // held by launches (see Kernel)
  std::map<std::string, cl_kernel, std::less<>> kernels_;
};

}  // namespace torsh::opencl
