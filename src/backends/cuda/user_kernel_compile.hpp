#pragma once
// User kernels from source to PTX (NVRTC) or an AMDGPU code object (hiprtc).
// No device is needed: the architecture is named by the caller, so this is
// what the device's build_kernel calls and what tests run on machines without
// a GPU (compile_api.h). NVRTC / hiprtc is opened at run time, so the plugin
// loads (and runs kernels from the disk cache) where it is not installed.
#include <string>
#include <utility>
#include <vector>

#include "compile_api.h"
#include "torsh/backend/backend_impl.hpp"

namespace torsh::cuda {

// Compiles the translation unit `tu` and returns the code of `entry`, a name
// expression ("scale", "axpy<float>", "ns::f") whose symbol is looked up after
// the build. `arch` is "compute_90" (CUDA) or "gfx90a" (HIP); it is left out
// when `options` already names one. `defines` become #define lines in front
// of `tu`, where the compiler's own headers do not see them. `what` ("kernel 'x' (torsh dialect)") and
// `device` are for messages. Throws Error(KernelCompile) with the complete log.
CompiledKernel compile_cuda_source(const std::string& tu, const std::string& entry,
                                   const std::vector<std::pair<std::string, std::string>>& defines,
                                   const std::vector<std::string>& options, const std::string& arch,
                                   const std::string& what, const std::string& device);

// The same for a user kernel's spec: the Torsh dialect gets its header in front
// (rt::kernel_translation_unit); Cuda sources are compiled as they are.
CompiledKernel compile_user_kernel(const rt::UserKernelSpec& spec, const std::string& arch, const std::string& device);

// "NVRTC 13.0" / "hiprtc 5.2", or why it cannot be loaded ("NVRTC unavailable (...)").
std::string rtc_version();

}  // namespace torsh::cuda
