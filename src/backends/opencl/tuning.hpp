#pragma once
// Tuned launch parameters of the OpenCL kernels (the counterpart of
// backends/cpu/platform/tuning.cpp). The grid-stride kernels (binary, strided copy)
// run with any 1-D work-group size; which is fastest depends on the device,
// the kernel and the element count. With auto-tuning on, each (device,
// kernel, size class log2(n)) is measured once on scratch buffers and the
// choice kept in the autotune cache; with it off, grid_1d's built-in default
// (the device's preferred work-group size) stands.
#include <array>
#include <atomic>
#include <cstdint>

namespace torsh::opencl {

class OpenClDevice;
struct Kernel;

class WorkGroupTuning {
 public:
  // Below 2^kLo elements a launch is too short for the group size to matter;
  // from 2^kHi up the grid is saturated, so the top class decides for all.
  static constexpr int kLo = 10, kHi = 22;
  static constexpr int kDefault = -1, kDriverChoice = 0;

  // The 1-D local size for `k` over n elements: a size (at most max_local),
  // kDriverChoice (enqueue with a NULL local size) or kDefault (tuning is
  // off, or the kernel is not one this tunes).
  int local_size(OpenClDevice& dev, const Kernel& k, std::int64_t n, std::size_t max_local);

 private:
  static constexpr int kKernels = 3;  // binary_f32_contig, binary_f32_strided, copy_b32_strided
  // Read on every launch without a lock: 0 unknown, -1 the driver's choice, else the size.
  std::array<std::array<std::atomic<int>, kHi - kLo + 1>, kKernels> choice_{};
};

}  // namespace torsh::opencl
