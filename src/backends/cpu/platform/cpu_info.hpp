#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "torsh/runtime/device_info.hpp"

namespace torsh::cpu {
// Reads the host CPU's facts from the OS: model, cores, SIMD flags, memory.
DeviceInfo query_host_cpu();
bool has_feature(const DeviceInfo& info, const char* flag);

// The host's memory in bytes, read now: the machine's (or the cgroup's
// limit, when lower) total, and what can still be allocated and touched
// without the kernel's out-of-memory killer stepping in (MemAvailable).
struct HostMemory {
  std::uint64_t total = 0, available = 0;
};
HostMemory host_memory();

// "family 25 model 17 (Zen 4)": the cpuid family and model, with the
// microarchitecture where this table knows it.
std::string cpu_architecture(const std::string& vendor, int family, int model);

// Whether this CPU runs 512-bit vector operations as two halves on 256-bit
// units (Zen 4): its AVX-512 peak is AVX2's, and kernels block for it.
bool splits_512bit_ops();

// Whether the CPU is Intel's (cpuid vendor GenuineIntel), for the few plan
// choices measured to differ between Intel and AMD cores.
bool intel_cpu();

// The L1 data cache's associativity (ways; 0 where the system does not say):
// plans whose streams fall into few cache sets depend on it.
int l1d_ways();
// The L1 data cache's size in bytes (32 KiB where the system does not say).
std::int64_t l1d_bytes();

// Which variant of each hand-written kernel family this process runs
// (`gemm f32` -> `avx512-14x32`, `elementwise` -> `avx512`, ...), for
// `torsh info` and `torsh bench`.
std::vector<std::pair<std::string, std::string>> kernel_variants();
}  // namespace torsh::cpu
