#pragma once
// What a device is and what it can do, as reported by its backend.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "torsh/core/device.hpp"
#include "torsh/runtime/kernel_source.hpp"

namespace torsh {

enum class DeviceKind { Cpu, Gpu, Accelerator };

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string vendor;
  DeviceKind kind = DeviceKind::Cpu;
  // A device that runs on the host CPU through a software implementation
  // (PoCL's CPU device, lavapipe/llvmpipe). Never auto-selected over the native CPU backend.
  bool software = false;
  std::uint64_t total_memory = 0;
  std::optional<std::uint64_t> free_memory;
  int compute_units = 0;
  std::string compute_capability;  // "8.0" for CUDA, "OpenCL C 1.2" for OpenCL, SIMD level for CPU
  bool unified_memory = false;
  double peak_gflops = 0;  // f32 FMA peak estimate
  std::string driver_version;
  std::vector<std::string> features;  // "avx2", "avx512f", "fp16", "cl_khr_fp64", ...
  // CPU: cpuid family and model, and the microarchitecture where known
  // ("family 25 model 17 (Zen 4)"); empty for other devices.
  std::string architecture;
  // The variant of each kernel family this device runs, as (family, variant):
  // on the CPU the instruction set and tile of each hand-written kernel
  // ("gemm f32", "avx512-14x32"), so a figure says where it came from.
  std::vector<std::pair<std::string, std::string>> kernel_variants;
};

struct Capabilities {
  bool f16 = false, bf16 = false, f64 = false, int8 = true;
  bool async_copy = false;       // copies can overlap host work
  bool event_timing = false;     // events measure device time
  bool runtime_kernels = false;  // kernels compiled from source at run time
  // The dialects Backend::compile_kernel() accepts on this device (empty: none).
  std::vector<KernelDialect> kernel_dialects;
  bool accepts(KernelDialect d) const {
    for (KernelDialect k : kernel_dialects)
      if (k == d) return true;
    return false;
  }
  bool unified_memory = false;
  std::uint64_t max_allocation = 0;
  std::uint64_t max_work_group = 0;
};

struct PerformanceHints {
  std::size_t alignment = 64;             // preferred buffer alignment (bytes)
  std::size_t preferred_work_group = 0;   // 0: backend decides
  int threads = 1;                        // CPU: worker threads used by ops
  std::size_t min_parallel_elements = 0;  // below this, ops run serially / are not worth a launch
  double memory_bandwidth_gbps = 0;       // estimate, 0 if unknown
};

}  // namespace torsh
