#pragma once
// Backend kinds and device identities.
#include <optional>
#include <string>
#include <string_view>

namespace torsh {

enum class BackendType { Auto, Cpu, Cuda, Rocm, Metal, WebGpu, OpenCl };

inline constexpr BackendType kConcreteBackends[] = {BackendType::Cpu,   BackendType::Cuda,   BackendType::Rocm,
                                                    BackendType::Metal, BackendType::WebGpu, BackendType::OpenCl};

std::string_view backend_name(BackendType t);  // "CUDA", "OpenCL", ...
std::string_view backend_key(BackendType t);   // "cuda", "opencl", ... (plugin file names, CLI)
// Accepts keys and names, case-insensitive ("cl" and "hip" as aliases).
std::optional<BackendType> backend_from_name(std::string_view s);

struct Device {
  BackendType type = BackendType::Cpu;
  int index = 0;
  std::string to_string() const;  // "opencl:0"
  bool operator==(const Device&) const = default;
};

}  // namespace torsh
