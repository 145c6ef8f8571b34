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
#include <map>
#include <mutex>
#include <span>
#include <string>

#include "torsh/core/dtype.hpp"

namespace torsh::rt {
struct MatmulArgs;
}

namespace torsh::opencl {

class OpenClDevice;
class OpenClStream;
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

// Which GEMM implementation (matmul.cpp: a register-blocked variant of
// matmul.kern.h, or CLBlast) runs a matmul of a given dtype and size class
// (log2 of m, n, k, capped: gpu::matmul_size_class). With auto-tuning on, each
// (device, dtype, class) is measured once: every candidate runs a GEMM of the
// class's representative shape on scratch buffers and a queue of its own, and
// the fastest is kept in the autotune cache under "matmul".
class MatmulTuning {
 public:
  // Runs candidate `choice` on `s` for `a` (matmul.cpp's dispatch).
  using Runner = void (*)(OpenClStream& s, const rt::MatmulArgs& a, int choice);
  struct Candidate {
    int choice;
    std::string name;
  };
  // The choice already made for this class, or -1.
  int known(DType dtype, const std::array<int, 3>& size_class);
  // The measured choice for this class, measuring it first when unknown.
  int choose(OpenClDevice& dev, DType dtype, const std::array<int, 3>& size_class,
             std::span<const Candidate> candidates, Runner run);

 private:
  std::mutex mu_;  // guards chosen_; held while measuring so a class is measured once
  std::map<std::pair<DType, std::array<int, 3>>, int> chosen_;
};

}  // namespace torsh::opencl
