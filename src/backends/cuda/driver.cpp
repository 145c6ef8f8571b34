// Enumerates CUDA devices through the runtime, describes each device, and
// exports the plugin entry point (plugin.h). The runtime is linked statically
// and loads libcuda.so.1 on first use, so a machine without the NVIDIA driver
// gets a reason, not a dlopen failure.
#include <cstdio>
#include <exception>
#include <vector>

#include "device.hpp"
#include "torsh/backend/plugin.h"
#include "torsh/version.hpp"

namespace torsh::cuda {

namespace {

// 12080 -> "12.8"
[[maybe_unused]] std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// "CUDA driver 12.8, runtime 13.0" ("HIP driver 50422804, runtime 50422804": HIP's own numbering)
std::string versions() {
  int drv = 0, runtime = 0;
  (void)cudaDriverGetVersion(&drv);
  (void)cudaRuntimeGetVersion(&runtime);
#if defined(TORSH_HIP)
  return std::string(vendor::kRuntime) + " driver " + std::to_string(drv) + ", runtime " + std::to_string(runtime);
#else
  return std::string(vendor::kRuntime) + " driver " + version_text(drv) + ", runtime " + version_text(runtime);
#endif
}

int attribute(cudaDeviceAttr a, int ordinal) {
  int v = 0;
  return cudaDeviceGetAttribute(&v, a, ordinal) == cudaSuccess ? v : 0;
}

}  // namespace

DeviceInfo query_device_info(int index, int ordinal, const cudaDeviceProp& p) {
  DeviceInfo info;
  info.index = index;
  info.name = p.name;
  info.vendor = vendor::kVendor;
  info.kind = DeviceKind::Gpu;
  info.total_memory = p.totalGlobalMem;
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) == cudaSuccess) info.free_memory = free;
  (void)cudaGetLastError();
  info.compute_units = p.multiProcessorCount;
  info.compute_capability = std::to_string(p.major) + "." + std::to_string(p.minor);
  // Integrated GPUs (Jetson, GB10) share physical memory with the host.
  info.unified_memory = p.integrated != 0;
  // clockRate left cudaDeviceProp in CUDA 13; the attribute remains (kHz).
  const double ghz = attribute(cudaDevAttrClockRate, ordinal) / 1e6;
  info.peak_gflops = 2.0 * p.multiProcessorCount * vendor::fp32_lanes(p) * ghz;  // one FMA per lane
  info.driver_version = versions();
  info.features.push_back(vendor::arch(p));
  if (vendor::has_f16(p)) info.features.emplace_back("fp16");
  if (vendor::has_bf16(p)) info.features.emplace_back("bf16");
#if !defined(TORSH_HIP)
  if (p.major >= 7) info.features.emplace_back("tensor_cores");
#endif
  if (p.managedMemory) info.features.emplace_back("managed_memory");
  if (vendor::memory_pools(p, ordinal)) info.features.emplace_back("memory_pools");
  if (p.concurrentKernels) info.features.emplace_back("concurrent_kernels");
  return info;
}

Capabilities query_capabilities(const cudaDeviceProp& p, const DeviceInfo& info) {
  Capabilities c;
  c.f16 = vendor::has_f16(p);
  c.bf16 = vendor::has_bf16(p);
  c.f64 = true;
  c.int8 = true;
  c.async_copy = true;
  c.event_timing = true;
  c.runtime_kernels = false;  // kernels are compiled ahead of time by nvcc
  c.unified_memory = info.unified_memory;
  c.max_allocation = p.totalGlobalMem;  // CUDA has no per-allocation limit below the device's memory
  c.max_work_group = static_cast<std::uint64_t>(p.maxThreadsPerBlock);
  return c;
}

PerformanceHints query_hints(int ordinal, const DeviceInfo& info) {
  PerformanceHints h;
  h.alignment = 256;  // cudaMalloc's guarantee, and what coalesced access wants
  h.preferred_work_group = 256;
  h.threads = 1;
  // A launch costs a few microseconds; below this many elements the CPU backend is faster.
  h.min_parallel_elements = 1 << 12;
  // DDR: two transfers per clock (kHz) across the bus (bits).
  const double mem_khz = attribute(cudaDevAttrMemoryClockRate, ordinal);
  const double bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
  h.memory_bandwidth_gbps = 2.0 * mem_khz * 1e3 * (bus_bits / 8) / 1e9;
  return h;
}

namespace {

class CudaDriver final : public rt::Driver {
 public:
  CudaDriver(std::string version, std::vector<std::shared_ptr<CudaDevice>> devices)
      : version_(std::move(version)), devices_(std::move(devices)) {}
  BackendType type() const override { return vendor::kBackend; }
  std::string version() const override { return version_; }
  int device_count() const override { return static_cast<int>(devices_.size()); }
  std::shared_ptr<rt::DeviceImpl> device(int index) override {
    if (index < 0 || index >= device_count())
      throw Error(ErrorCode::OutOfRange,
                  std::string(vendor::kRuntime) + " device index " + std::to_string(index) + " out of range",
                  {.op = "device", .device = Device{vendor::kBackend, index}.to_string()});
    return devices_[static_cast<std::size_t>(index)];
  }

 private:
  std::string version_;
  std::vector<std::shared_ptr<CudaDevice>> devices_;
};

rt::Driver* make_driver(char* err, std::size_t len) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    const cudaError_t why = rc != cudaSuccess ? rc : cudaErrorNoDevice;
    // HIP's description of some errors is their name again; say it once.
    std::string what = cudaGetErrorName(why);
    if (what != cudaGetErrorString(why)) what += std::string(": ") + cudaGetErrorString(why);
    std::snprintf(err, len, "plugin built, no %s device: %s%s", vendor::kRuntime, what.c_str(),
                  vendor::driver_hint(why).c_str());
    (void)cudaGetLastError();
    return nullptr;
  }
  // Every device is opened now (context, default stream); one that fails is
  // left out and its error becomes the backend's reason if none opens. torsh
  // indices stay dense, so after a failed ordinal they differ from CUDA's.
  std::vector<std::shared_ptr<CudaDevice>> devices;
  std::string failures;
  for (int i = 0; i < count; ++i) {
    try {
      devices.push_back(std::make_shared<CudaDevice>(static_cast<int>(devices.size()), i));
    } catch (const std::exception& e) {
      failures += (failures.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  if (devices.empty()) {
    std::snprintf(err, len, "no %s device could be opened: %s", vendor::kRuntime, failures.c_str());
    return nullptr;
  }
  return new CudaDriver(versions(), std::move(devices));
}

void* create_driver(char* err, std::size_t len) {
  try {
    return static_cast<void*>(make_driver(err, len));
  } catch (const std::exception& e) {
    std::snprintf(err, len, "%s driver initialisation failed: %s", vendor::kRuntime, e.what());
  } catch (...) {
    std::snprintf(err, len, "%s driver initialisation failed with an unknown exception", vendor::kRuntime);
  }
  return nullptr;
}

}  // namespace

#if !defined(TORSH_HIP)
// Why cudaGetDeviceCount failed, in terms of what to install or update.
std::string vendor::driver_hint(cudaError_t err) {
  int drv = 0, runtime = 0;
  (void)cudaDriverGetVersion(&drv);
  (void)cudaRuntimeGetVersion(&runtime);
  if (drv == 0) return "; the NVIDIA driver (libcuda.so.1) is not installed or not on the loader path";
  if (drv < runtime)
    return "; the driver supports CUDA " + version_text(drv) + " but this plugin needs " + version_text(runtime) +
           ": update the NVIDIA driver";
  if (err == cudaErrorNoDevice) return "; check CUDA_VISIBLE_DEVICES and that the GPU is visible (nvidia-smi)";
  return "";
}

#endif

}  // namespace torsh::cuda

TORSH_PLUGIN_EXPORT const torsh_plugin_v1* torsh_backend_plugin_entry(void) {
  static const torsh_plugin_v1 plugin{TORSH_PLUGIN_ABI_VERSION, torsh::cuda::vendor::kKey, TORSH_BUILD_ID,
                                      &torsh::cuda::create_driver};
  return &plugin;
}
