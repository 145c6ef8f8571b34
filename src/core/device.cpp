#include "torsh/core/device.hpp"

#include <algorithm>
#include <cctype>

namespace torsh {

std::string_view backend_name(BackendType t) {
  switch (t) {
    case BackendType::Auto: return "Auto";
    case BackendType::Cpu: return "CPU";
    case BackendType::Cuda: return "CUDA";
    case BackendType::Rocm: return "ROCm";
    case BackendType::Metal: return "Metal";
    case BackendType::WebGpu: return "WebGPU";
    case BackendType::OpenCl: return "OpenCL";
  }
  return "?";
}

std::string_view backend_key(BackendType t) {
  switch (t) {
    case BackendType::Auto: return "auto";
    case BackendType::Cpu: return "cpu";
    case BackendType::Cuda: return "cuda";
    case BackendType::Rocm: return "rocm";
    case BackendType::Metal: return "metal";
    case BackendType::WebGpu: return "webgpu";
    case BackendType::OpenCl: return "opencl";
  }
  return "?";
}

std::optional<BackendType> backend_from_name(std::string_view s) {
  std::string k(s);
  std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return std::tolower(c); });
  if (k == "auto") return BackendType::Auto;
  for (BackendType t : kConcreteBackends)
    if (backend_key(t) == k) return t;
  if (k == "cl") return BackendType::OpenCl;
  if (k == "hip") return BackendType::Rocm;
  if (k == "wgpu") return BackendType::WebGpu;
  return std::nullopt;
}

std::string Device::to_string() const { return std::string(backend_key(type)) + ":" + std::to_string(index); }

}  // namespace torsh
