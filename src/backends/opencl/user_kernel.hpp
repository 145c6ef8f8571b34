#pragma once
// User kernels on OpenCL: Backend::compile_kernel's sources (OpenCL C, or the
// Torsh dialect, which is OpenCL C behind the dialect header) built with
// clBuildProgram, kept as program binaries, and launched through the backend's
// one launch idiom (launch.hpp) so that the profiler and graph capture see them.
//
// user_kernel_build.cpp builds and loads, user_kernel_bytes.cpp packs the
// bytes, user_kernel_params.cpp reads the parameters the driver reports, and
// user_kernel_launch.cpp checks the geometry and binds the arguments.
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "device.hpp"
#include "program.hpp"

namespace torsh::opencl {

// What load_kernel() reads: build_kernel's bytes in a small container that
// names the compiler that made them (kernel_compiler_id) and checksums them.
// Bytes that were never ours, were cut short or flipped on disk, or come from
// another driver or device are refused here with an Error, before a driver
// parses them: PoCL 3.1, for one, crashes on a truncated program binary. Only
// bytes this driver produced for this device reach it; a forged container
// (right header and checksum over a damaged binary) is not defended against.
struct UserKernelBytes {
  enum class Kind : std::uint8_t { Binary = 'B', Source = 'S' };
  Kind kind = Kind::Binary;
  std::span<const std::uint8_t> payload;  // the program binary, or the translation unit's text
};
std::vector<std::uint8_t> pack_user_kernel(UserKernelBytes::Kind kind, std::span<const std::uint8_t> payload,
                                           const std::string& compiler_id);
// Throws InvalidArgument saying what is wrong (not ours, another compiler, truncated, corrupt).
UserKernelBytes unpack_user_kernel(std::span<const std::uint8_t> bytes, const std::string& compiler_id,
                                   const std::string& device);

inline std::span<const std::uint8_t> text_bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Refuses the parameters a launch cannot bind: __local pointers (they take a
// size, not data) and images, pipes, samplers. False when the driver keeps no
// argument information, so nothing could be checked. `what` names the kernel.
bool check_param_kinds(cl_kernel k, const std::string& what, const std::string& device);

// The geometry limits a launch is checked against.
struct LaunchLimits {
  std::size_t device_group = 0;           // CL_DEVICE_MAX_WORK_GROUP_SIZE
  std::size_t kernel_group = 0;           // CL_KERNEL_WORK_GROUP_SIZE of this kernel
  std::size_t item_sizes[3] = {1, 1, 1};  // CL_DEVICE_MAX_WORK_ITEM_SIZES
  std::size_t required[3] = {0, 0, 0};    // CL_KERNEL_COMPILE_WORK_GROUP_SIZE (reqd_work_group_size), 0: none
  std::uint64_t max_global = 0;           // largest global size per dimension (the device's size_t)
};

class UserKernel final : public rt::UserKernelImpl {
 public:
  // Takes ownership of `program` and `kernel`.
  UserKernel(OpenClDevice& dev, const rt::UserKernelSpec& spec, cl_program program, cl_kernel kernel);
  ~UserKernel() override;
  UserKernel(const UserKernel&) = delete;
  UserKernel& operator=(const UserKernel&) = delete;

  const std::vector<KernelParam>& params() const override { return params_; }
  bool params_known() const override { return params_known_; }
  void launch(rt::StreamImpl& s, const Dim3& grid, const Dim3& block, std::span<const rt::LaunchArg> args) override;

  const LaunchLimits& limits() const { return limits_; }

 private:
  void refine_params(const rt::UserKernelSpec& spec);
  std::string what() const;  // "kernel 'entry' on opencl:0 (...)"

  OpenClDevice& dev_;
  cl_program program_;
  cl_kernel kernel_;
  std::string entry_;
  std::mutex launch_mu_;  // clSetKernelArg + clEnqueueNDRangeKernel of one launch do not interleave
  std::vector<KernelParam> params_;
  bool params_known_ = false;
  cl_uint num_args_ = 0;
  LaunchLimits limits_;
};

}  // namespace torsh::opencl
