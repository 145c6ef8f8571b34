#include "module_api.hpp"

#include "torsh/core/error.hpp"

#if defined(TORSH_HIP)

namespace torsh::cuda::module_api {

namespace {
[[noreturn]] void fail(hipError_t err, const std::string& call, const std::string& what, const std::string& device) {
  (void)hipGetLastError();  // not to be reported again by a later, unrelated check
  throw Error(ErrorCode::DeviceError,
              call + " for " + what + " failed with " + hipGetErrorName(err) + " (" + hipGetErrorString(err) + ")",
              {.op = what, .device = device});
}
}  // namespace

Module load(const void* image, const std::string& what, const std::string& device) {
  hipModule_t m = nullptr;
  const hipError_t err = hipModuleLoadData(&m, image);
  if (err != hipSuccess) fail(err, "hipModuleLoadData", what, device);
  return m;
}

void unload(Module m) noexcept {
  (void)hipModuleUnload(static_cast<hipModule_t>(m));
  (void)hipGetLastError();
}

Function function(Module m, const std::string& symbol, const std::string& what, const std::string& device) {
  hipFunction_t f = nullptr;
  const hipError_t err = hipModuleGetFunction(&f, static_cast<hipModule_t>(m), symbol.c_str());
  if (err != hipSuccess) fail(err, "hipModuleGetFunction('" + symbol + "')", what, device);
  return f;
}

int max_threads_per_block(Function f) {
  int v = 0;
  if (hipFuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, static_cast<hipFunction_t>(f)) != hipSuccess) {
    (void)hipGetLastError();
    return 0;
  }
  return v;
}

std::optional<std::vector<std::size_t>> param_sizes(Function) { return std::nullopt; }

void launch(Function f, const Dim3& grid, const Dim3& block, cudaStream_t s, void** args, const std::string& what,
            const std::string& device) {
  const hipError_t err = hipModuleLaunchKernel(static_cast<hipFunction_t>(f), grid.x, grid.y, grid.z, block.x, block.y,
                                               block.z, 0, s, args, nullptr);
  if (err != hipSuccess) fail(err, "hipModuleLaunchKernel", what, device);
}

}  // namespace torsh::cuda::module_api

#else

#include <cuda.h>
#include "dl_symbol.hpp"

namespace torsh::cuda::module_api {

namespace {

// The driver's entry points. The runtime has already opened libcuda.so.1 when
// a device exists, so this finds the same library.
struct Driver {
  decltype(&::cuGetErrorName) GetErrorName = nullptr;
  decltype(&::cuGetErrorString) GetErrorString = nullptr;
  decltype(&::cuModuleLoadDataEx) ModuleLoadDataEx = nullptr;
  decltype(&::cuModuleUnload) ModuleUnload = nullptr;
  decltype(&::cuModuleGetFunction) ModuleGetFunction = nullptr;
  decltype(&::cuFuncGetAttribute) FuncGetAttribute = nullptr;
  decltype(&::cuFuncGetParamInfo) FuncGetParamInfo = nullptr;  // CUDA 12.4 drivers and later
  decltype(&::cuLaunchKernel) LaunchKernel = nullptr;
  std::string missing;
};

Driver open_driver() {
  Driver d;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    d.missing = e ? e : "libcuda.so.1 not found";
    return d;
  }
  std::string missing;
  bind_symbol(lib, d.GetErrorName, "cuGetErrorName", &missing);
  bind_symbol(lib, d.GetErrorString, "cuGetErrorString", &missing);
  bind_symbol(lib, d.ModuleLoadDataEx, "cuModuleLoadDataEx", &missing);
  bind_symbol(lib, d.ModuleUnload, "cuModuleUnload", &missing);
  bind_symbol(lib, d.ModuleGetFunction, "cuModuleGetFunction", &missing);
  bind_symbol(lib, d.FuncGetAttribute, "cuFuncGetAttribute", &missing);
  bind_symbol(lib, d.LaunchKernel, "cuLaunchKernel", &missing);
  bind_symbol(lib, d.FuncGetParamInfo, "cuFuncGetParamInfo");  // optional
  if (!missing.empty()) d.missing = "libcuda.so.1 lacks " + missing;
  return d;
}

// Never destroyed: kernels held in the runtime's caches unload their modules during static destruction.
const Driver& instance() {
  static const Driver* d = new Driver(open_driver());
  return *d;
}

const Driver& driver(const std::string& what, const std::string& device) {
  const Driver& d = instance();
  if (!d.missing.empty())
    throw Error(ErrorCode::Unsupported,
                "cannot load " + what + ": the CUDA driver API is unavailable (" + d.missing + ")",
                {.op = what, .device = device}, {"Update the NVIDIA driver"});
  return d;
}

std::string text(const Driver& d, CUresult r) {
  const char* name = nullptr;
  const char* desc = nullptr;
  (void)d.GetErrorName(r, &name);
  (void)d.GetErrorString(r, &desc);
  return std::string(name ? name : "CUDA error " + std::to_string(int(r))) +
         (desc ? std::string(" (") + desc + ")" : "");
}

[[noreturn]] void fail(const Driver& d, CUresult r, const std::string& call, const std::string& what,
                       const std::string& device) {
  std::vector<std::string> hints;
  if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
    hints.emplace_back(
        "The PTX is newer than this driver: update the NVIDIA driver to one that supports NVRTC's CUDA version");
  if (r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED || r == CUDA_ERROR_ASSERT ||
      r == CUDA_ERROR_MISALIGNED_ADDRESS || r == CUDA_ERROR_ILLEGAL_INSTRUCTION || r == CUDA_ERROR_HARDWARE_STACK_ERROR)
    hints.emplace_back(
        "A kernel faulted earlier and the CUDA context is lost; restart the process to use this device again");
  throw Error(ErrorCode::DeviceError, call + " for " + what + " failed with " + text(d, r),
              {.op = what, .device = device}, std::move(hints));
}

}  // namespace

Module load(const void* image, const std::string& what, const std::string& device) {
  const Driver& d = driver(what, device);
  // PTX is compiled for the GPU here; its assembler's errors are kept for the message.
  char log[4096] = {};
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(sizeof log)};
  CUmodule m = nullptr;
  const CUresult r = d.ModuleLoadDataEx(&m, image, 2, keys, values);
  if (r != CUDA_SUCCESS) {
    log[sizeof log - 1] = '\0';
    fail(d, r, std::string("cuModuleLoadDataEx") + (log[0] ? std::string(" (PTX assembler: ") + log + ")" : ""), what,
         device);
  }
  return m;
}

void unload(Module m) noexcept {
  const Driver& d = instance();
  if (m && d.ModuleUnload) (void)d.ModuleUnload(static_cast<CUmodule>(m));
}

Function function(Module m, const std::string& symbol, const std::string& what, const std::string& device) {
  const Driver& d = driver(what, device);
  CUfunction f = nullptr;
  const CUresult r = d.ModuleGetFunction(&f, static_cast<CUmodule>(m), symbol.c_str());
  if (r != CUDA_SUCCESS) fail(d, r, "cuModuleGetFunction('" + symbol + "')", what, device);
  return f;
}

int max_threads_per_block(Function f) {
  const Driver& d = driver("cuFuncGetAttribute", "");
  int v = 0;
  return d.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, static_cast<CUfunction>(f)) == CUDA_SUCCESS
             ? v
             : 0;
}

std::optional<std::vector<std::size_t>> param_sizes(Function f) {
  const Driver& d = driver("cuFuncGetParamInfo", "");
  if (!d.FuncGetParamInfo) return std::nullopt;
  std::vector<std::size_t> sizes;
  // Parameters are numbered from 0; the first index past the last is CUDA_ERROR_INVALID_VALUE.
  for (std::size_t i = 0; i < 4096; ++i) {
    std::size_t offset = 0, size = 0;
    const CUresult r = d.FuncGetParamInfo(static_cast<CUfunction>(f), i, &offset, &size);
    if (r == CUDA_ERROR_INVALID_VALUE) break;
    if (r != CUDA_SUCCESS) return std::nullopt;
    sizes.push_back(size);
  }
  if (sizes.size() == 4096) return std::nullopt;  // no end found: not an answer to trust
  return sizes;
}

void launch(Function f, const Dim3& grid, const Dim3& block, cudaStream_t s, void** args, const std::string& what,
            const std::string& device) {
  const Driver& d = driver(what, device);
  // cudaStream_t and CUstream are the same handle.
  const CUresult r = d.LaunchKernel(static_cast<CUfunction>(f), grid.x, grid.y, grid.z, block.x, block.y, block.z, 0,
                                    reinterpret_cast<CUstream>(s), args, nullptr);
  if (r != CUDA_SUCCESS) fail(d, r, "cuLaunchKernel", what, device);
}

}  // namespace torsh::cuda::module_api

#endif
