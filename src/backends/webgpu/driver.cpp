// Enumerates WebGPU adapters through wgpu-native (Vulkan, Metal, D3D12), opens
// a device on each, and exports the plugin entry point (plugin.h).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "compile_api.h"
#include "device.hpp"
#include "torsh/backend/plugin.h"
#include "torsh/version.hpp"

namespace torsh::webgpu {

namespace {

// The webgpu.h generation this plugin was compiled against (wgpu-native 29.x:
// WGPUStringView, *CallbackInfo structs, wgpuDevicePoll with a submission index).
constexpr unsigned kWgpuMajor = 29;

std::string version_string(std::uint32_t v) {
  return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 255) + "." + std::to_string((v >> 8) & 255) + "." +
         std::to_string(v & 255);
}

// Mesa's implicit Vulkan layer VK_LAYER_MESA_device_select asks Wayland for the
// default GPU while the loader enumerates devices; libwayland prints "error:
// XDG_RUNTIME_DIR is invalid or not set in the environment." when the process
// has no runtime folder (servers, containers, CI). There is no display
// to select a GPU for there, and the plugin enumerates every adapter itself, so
// the layer is switched off by its own variable (NODEVICE_SELECT) in exactly
// that case. A user's own choice (MESA_VK_DEVICE_SELECT, NODEVICE_SELECT) wins.
void quiet_mesa_device_select() {
  if (std::getenv("MESA_VK_DEVICE_SELECT") || std::getenv("NODEVICE_SELECT")) return;
  // libwayland's own test: set and absolute.
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime == '/') return;
  ::setenv("NODEVICE_SELECT", "1", 0);
}

class WebGpuDriver final : public rt::Driver {
 public:
  WebGpuDriver(WGPUInstance instance, std::string version, std::vector<std::shared_ptr<WebGpuDevice>> devices)
      : instance_(instance), version_(std::move(version)), devices_(std::move(devices)) {}
  // Drivers live as long as the process (plugins are never unloaded); the instance with them.
  BackendType type() const override { return BackendType::WebGpu; }
  std::string version() const override { return version_; }
  int device_count() const override { return static_cast<int>(devices_.size()); }
  std::shared_ptr<rt::DeviceImpl> device(int index) override {
    if (index < 0 || index >= device_count())
      throw Error(ErrorCode::OutOfRange, "WebGPU device index " + std::to_string(index) + " out of range",
                  {.op = "device", .device = "webgpu:" + std::to_string(index)});
    return devices_[static_cast<std::size_t>(index)];
  }

 private:
  WGPUInstance instance_;
  std::string version_;
  std::vector<std::shared_ptr<WebGpuDevice>> devices_;
};

rt::Driver* make_driver(char* err, std::size_t len) {
  const std::uint32_t v = wgpuGetVersion();
  if ((v >> 24) != kWgpuMajor) {
    std::snprintf(err, len,
                  "wgpu-native %s was loaded, but this plugin was built against the %u.x API (PyPI wgpu 0.32.0); "
                  "install the libwgpu_native-release.so it was built with beside it",
                  version_string(v).c_str(), kWgpuMajor);
    return nullptr;
  }
  quiet_mesa_device_select();
  WGPUInstanceExtras extras = {};
  extras.chain.sType = static_cast<WGPUSType>(WGPUSType_InstanceExtras);
  extras.backends = WGPUInstanceBackend_Primary;  // Vulkan, Metal, D3D12: not GL, whose compute is too limited
  WGPUInstanceDescriptor desc = WGPU_INSTANCE_DESCRIPTOR_INIT;
  desc.nextInChain = &extras.chain;
  WGPUInstance instance = wgpuCreateInstance(&desc);
  if (!instance) {
    std::snprintf(err, len, "wgpuCreateInstance failed (wgpu-native %s)", version_string(v).c_str());
    return nullptr;
  }
  WGPUInstanceEnumerateAdapterOptions opts = {};
  opts.backends = WGPUInstanceBackend_Primary;
  const std::size_t n = wgpuInstanceEnumerateAdapters(instance, &opts, nullptr);
  std::vector<WGPUAdapter> adapters(n);
  if (n) wgpuInstanceEnumerateAdapters(instance, &opts, adapters.data());
  std::vector<std::shared_ptr<WebGpuDevice>> devices;
  std::string failures;
  for (WGPUAdapter a : adapters) {
    try {
      devices.push_back(std::make_shared<WebGpuDevice>(static_cast<int>(devices.size()), instance, a));
    } catch (const std::exception& e) {
      failures += (failures.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  if (devices.empty()) {
    wgpuInstanceRelease(instance);
    if (failures.empty())
      std::snprintf(err, len,
                    "wgpu-native %s found no Vulkan, Metal or D3D12 adapter (on Linux without a GPU, install "
                    "mesa-vulkan-drivers for lavapipe)",
                    version_string(v).c_str());
    else
      std::snprintf(err, len, "no WebGPU adapter could be opened: %s", failures.c_str());
    return nullptr;
  }
  return new WebGpuDriver(instance, "wgpu-native " + version_string(v), std::move(devices));
}

void* create_driver(char* err, std::size_t len) {
  try {
    return static_cast<void*>(make_driver(err, len));
  } catch (const std::exception& e) {
    std::snprintf(err, len, "WebGPU driver initialisation failed: %s", e.what());
  } catch (...) {
    std::snprintf(err, len, "WebGPU driver initialisation failed with an unknown exception");
  }
  return nullptr;
}

}  // namespace
}  // namespace torsh::webgpu

TORSH_PLUGIN_EXPORT const torsh_plugin_v1* torsh_backend_plugin_entry(void) {
  static const torsh_plugin_v1 plugin{TORSH_PLUGIN_ABI_VERSION, "webgpu", TORSH_BUILD_ID,
                                      &torsh::webgpu::create_driver};
  return &plugin;
}

TORSH_PLUGIN_EXPORT int torsh_webgpu_compile_source(torsh::rt::DeviceImpl* device, const char* source) {
  auto* dev = dynamic_cast<torsh::webgpu::WebGpuDevice*>(device);
  if (!dev || !source)
    throw torsh::Error(torsh::ErrorCode::InvalidArgument,
                       dev ? "no source given" : "not a device of the WebGPU backend", {.op = "webgpu.compile"});
  dev->check_wgsl(source, "user module");
  return 0;
}
static_assert(std::is_same_v<decltype(&torsh_webgpu_compile_source), torsh_webgpu_compile_fn>);
