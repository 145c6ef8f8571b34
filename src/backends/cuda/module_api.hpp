#pragma once
// Code loaded from bytes at run time (user kernels): CUDA's driver API
// (cuModuleLoadData, cuLaunchKernel), which the runtime API has no equivalent
// for, or HIP's module API (hipModuleLoadData, hipModuleLaunchKernel). The CUDA
// driver library is opened at run time, so the plugin still loads on machines
// without it; every call here needs the device's context current (DeviceGuard).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "torsh/runtime/kernel_source.hpp"
#include "vendor.hpp"

namespace torsh::cuda::module_api {

using Module = void*;    // CUmodule / hipModule_t
using Function = void*;  // CUfunction / hipFunction_t

// Throws DeviceError (naming `what` and `device`) when the driver refuses the image.
Module load(const void* image, const std::string& what, const std::string& device);
void unload(Module m) noexcept;
// Throws DeviceError when the module has no such symbol.
Function function(Module m, const std::string& symbol, const std::string& what, const std::string& device);
// The most threads a block of this kernel may have (its register use may
// allow fewer than the device's limit); 0 when unknown.
int max_threads_per_block(Function f);
// The byte size of each parameter as the driver sees it (cuFuncGetParamInfo,
// CUDA 12.4 drivers and later); nullopt where the driver cannot tell.
std::optional<std::vector<std::size_t>> param_sizes(Function f);
// Enqueues f on `s` with `args` (one pointer per parameter, to its value).
void launch(Function f, const Dim3& grid, const Dim3& block, cudaStream_t s, void** args, const std::string& what,
            const std::string& device);

}  // namespace torsh::cuda::module_api
