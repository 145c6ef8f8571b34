#pragma once
// The GPU runtime these sources are built against. nvcc builds them as the
// CUDA plugin; hipcc builds the very same files as the ROCm plugin
// (src/backends/rocm, TORSH_HIP defined). HIP's runtime API mirrors CUDA's
// call for call, so the sources use CUDA's names and, for HIP, this header
// maps them onto HIP's. What differs beyond names (the backend's identity,
// device facts) is in torsh::cuda::vendor.
#include <cstdint>
#include <string>

#include "torsh/core/device.hpp"

#if defined(TORSH_HIP)
#include <hip/hip_runtime.h>

#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaGetLastError hipGetLastError
#define cudaGetErrorName hipGetErrorName
#define cudaGetErrorString hipGetErrorString
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetDevice hipGetDevice
#define cudaSetDevice hipSetDevice
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaDeviceProp hipDeviceProp_t
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDeviceAttr hipDeviceAttribute_t
#define cudaDevAttrClockRate hipDeviceAttributeClockRate
#define cudaDevAttrMemoryClockRate hipDeviceAttributeMemoryClockRate
#define cudaDevAttrGlobalMemoryBusWidth hipDeviceAttributeMemoryBusWidth
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaDriverGetVersion hipDriverGetVersion
#define cudaRuntimeGetVersion hipRuntimeGetVersion
#define cudaMemGetInfo hipMemGetInfo
#define cudaMalloc hipMalloc
#define cudaFree hipFree
#define cudaMallocAsync hipMallocAsync
#define cudaFreeAsync hipFreeAsync
#define cudaHostAlloc hipHostMalloc
#define cudaHostAllocPortable hipHostMallocPortable
#define cudaFreeHost hipHostFree
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemsetAsync hipMemsetAsync
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaStream_t hipStream_t
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamWaitEvent hipStreamWaitEvent
#define cudaEvent_t hipEvent_t
#define cudaEventCreate hipEventCreate
#define cudaEventDestroy hipEventDestroy
#define cudaEventRecord hipEventRecord
#define cudaEventQuery hipEventQuery
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaErrorMemoryAllocation hipErrorOutOfMemory
#define cudaErrorNotReady hipErrorNotReady
#define cudaErrorNoDevice hipErrorNoDevice
#define cudaErrorNoKernelImageForDevice hipErrorNoBinaryForGpu
#define cudaErrorIllegalAddress hipErrorIllegalAddress
#define cudaErrorLaunchFailure hipErrorLaunchFailure
#define cudaErrorAssert hipErrorAssert
#define cudaErrorECCUncorrectable hipErrorECCNotCorrectable
#define cudaErrorCudartUnloading hipErrorDeinitialized

namespace torsh::cuda::vendor {
inline constexpr BackendType kBackend = BackendType::Rocm;
inline constexpr const char* kKey = "rocm";     // plugin key: libtorsh_backend_rocm.so
inline constexpr const char* kRuntime = "HIP";  // in messages: "no HIP driver/device"
inline constexpr const char* kVendor = "AMD";
// "gfx90a" (the ISA the plugin's code objects must include).
inline std::string arch(const hipDeviceProp_t& p) {
  std::string a = p.gcnArchName;
  return a.substr(0, a.find(':'));
}
// What hiprtc compiles user kernels for: the whole name, so the code object
// matches the device's features ("gfx90a:sramecc+:xnack-").
inline std::string rtc_arch(const hipDeviceProp_t& p) { return p.gcnArchName; }
// FP32 FMA lanes per compute unit: 64 on GCN, CDNA and RDNA.
inline int fp32_lanes(const hipDeviceProp_t&) { return 64; }
inline bool has_f16(const hipDeviceProp_t&) { return true; }
// bf16 arithmetic: CDNA 2 and later (gfx90a, gfx94x) and RDNA 3.
inline bool has_bf16(const hipDeviceProp_t& p) {
  const std::string a = arch(p);
  return a == "gfx90a" || a.rfind("gfx94", 0) == 0 || a.rfind("gfx11", 0) == 0;
}
inline bool memory_pools(const hipDeviceProp_t&, int ordinal) {
  int v = 0;
  return hipDeviceGetAttribute(&v, hipDeviceAttributeMemoryPoolsSupported, ordinal) == hipSuccess && v != 0;
}
inline bool keep_pool_memory(int ordinal, std::uint64_t bytes) {
  hipMemPool_t pool = nullptr;
  return hipDeviceGetDefaultMemPool(&pool, ordinal) == hipSuccess &&
         hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &bytes) == hipSuccess;
}
// What to check when no device answers.
inline std::string driver_hint(hipError_t) {
  return "; the ROCm kernel driver (amdgpu, /dev/kfd) is absent or this user cannot open it "
         "(check HIP_VISIBLE_DEVICES and the render/video groups)";
}
}  // namespace torsh::cuda::vendor

#else
#include <cuda_runtime_api.h>

namespace torsh::cuda::vendor {
inline constexpr BackendType kBackend = BackendType::Cuda;
inline constexpr const char* kKey = "cuda";
inline constexpr const char* kRuntime = "CUDA";
inline constexpr const char* kVendor = "NVIDIA";
inline std::string arch(const cudaDeviceProp& p) { return "sm_" + std::to_string(p.major * 10 + p.minor); }
// What NVRTC compiles user kernels for: PTX of the device's own compute
// capability, which the driver turns into code for it when the module loads.
inline std::string rtc_arch(const cudaDeviceProp& p) { return "compute_" + std::to_string(p.major * 10 + p.minor); }
// FP32 lanes per SM (the CUDA programming guide's arithmetic-throughput table).
inline int fp32_lanes(const cudaDeviceProp& p) {
  if (p.major == 7) return 64;                  // Volta, Turing
  if (p.major == 8 && p.minor == 0) return 64;  // A100 (GA10x and Ada have 128)
  if (p.major == 6 && p.minor == 0) return 64;  // P100
  return 128;                                   // Hopper, Blackwell and later
}
inline bool has_f16(const cudaDeviceProp& p) { return p.major * 10 + p.minor >= 53; }
inline bool has_bf16(const cudaDeviceProp& p) { return p.major >= 8; }
inline bool memory_pools(const cudaDeviceProp& p, int) { return p.memoryPoolsSupported != 0; }
inline bool keep_pool_memory(int ordinal, std::uint64_t bytes) {
  cudaMemPool_t pool = nullptr;
  return cudaDeviceGetDefaultMemPool(&pool, ordinal) == cudaSuccess &&
         cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &bytes) == cudaSuccess;
}
// Why cudaGetDeviceCount failed, in terms of what to install or update.
std::string driver_hint(cudaError_t err);
}  // namespace torsh::cuda::vendor
#endif
