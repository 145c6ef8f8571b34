// The backend registry: built-in CPU, plugins found on the search path (each
// loaded when its backend is first asked for), the reasons for every backend
// that is missing, and auto-selection.
#include "torsh/runtime/registry.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "registry_internal.hpp"
#include "torsh/cuda_plugin_config.h"
#include "torsh/opencl_plugin_config.h"
#include "torsh/rocm_plugin_config.h"
#include "torsh/webgpu_plugin_config.h"

namespace torsh {
namespace rt {

int auto_priority(BackendType t) {
  switch (t) {
    case BackendType::Cuda: return 0;
    case BackendType::Rocm: return 1;
    case BackendType::Metal: return 2;
    case BackendType::OpenCl: return 3;
    case BackendType::WebGpu: return 4;
    case BackendType::Cpu: return 5;
    default: return 9;
  }
}

Registry& Registry::get() {
  // Never destroyed: drivers hold driver-library state that must not be torn down during exit.
  static Registry* r = new Registry();
  return *r;
}

void Registry::init_locked() {
  if (!entries_.empty()) return;
  std::vector<BackendType> order(std::begin(kConcreteBackends), std::end(kConcreteBackends));
  std::sort(order.begin(), order.end(), [](auto a, auto b) { return auto_priority(a) < auto_priority(b); });
  for (BackendType t : order) {
    DriverEntry e;
    e.status.type = t;
    entries_.push_back(std::move(e));
  }
  // Read once, as when every plugin loaded at the first touch: a later change
  // of TORSH_BACKEND_PATH counts from the next rescan(), not from the next lazy load.
  path_ = plugin_search_path();
}

const std::vector<DriverEntry>& Registry::entries() {
  std::lock_guard lk(mu_);
  init_locked();
  for (auto& e : entries_)
    if (!e.probed) probe_locked(e);
  return entries_;
}

DriverEntry& Registry::entry(BackendType t) {
  std::lock_guard lk(mu_);
  init_locked();
  for (auto& e : entries_)
    if (e.status.type == t) {
      if (!e.probed) probe_locked(e);
      return e;
    }
  throw Error(ErrorCode::InvalidArgument, "Auto is not a concrete backend type", {.op = "registry"});
}

void Registry::rescan() {
  std::lock_guard lk(mu_);
  init_locked();
  path_ = plugin_search_path();
  for (auto& e : entries_) {
    // Keep drivers that loaded before: plugins are never unloaded.
    if (!e.driver) {
      const BackendType t = e.status.type;
      e = DriverEntry{};
      e.status.type = t;
    }
    e.probed = false;
  }
}

bool Registry::probed(BackendType t) {
  std::lock_guard lk(mu_);
  for (const auto& e : entries_)
    if (e.status.type == t) return e.probed;
  return false;
}

namespace {
bool file_exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// What this libtorsh's own build did with the plugin, so a missing file says
// whether it was never built ("not built") or built but not installed or
// shipped beside libtorsh ("not shipped").
struct PluginBuild {
  bool built;
  const char* note;    // "disabled (TORSH_CUDA=OFF)", "built with nvcc 12.4 ..."
  const char* option;  // the CMake option that decides it
};

std::optional<PluginBuild> plugin_build(BackendType t) {
  switch (t) {
    case BackendType::OpenCl:
      return PluginBuild{TORSH_OPENCL_PLUGIN_BUILT != 0, TORSH_OPENCL_PLUGIN_NOTE, "TORSH_OPENCL"};
    case BackendType::Cuda: return PluginBuild{TORSH_CUDA_PLUGIN_BUILT != 0, TORSH_CUDA_PLUGIN_NOTE, "TORSH_CUDA"};
    case BackendType::Rocm: return PluginBuild{TORSH_ROCM_PLUGIN_BUILT != 0, TORSH_ROCM_PLUGIN_NOTE, "TORSH_ROCM"};
    case BackendType::WebGpu:
      return PluginBuild{TORSH_WEBGPU_PLUGIN_BUILT != 0, TORSH_WEBGPU_PLUGIN_NOTE, "TORSH_WEBGPU"};
    default: return std::nullopt;
  }
}

}  // namespace

std::string missing_plugin_reason(BackendType t, const std::string& file, const std::string& dirs) {
  const std::string name(backend_name(t));
  const std::string where = " (" + file + " not found in " + (dirs.empty() ? "<empty path>" : dirs) + ")";
  switch (t) {
    case BackendType::Metal: return "Metal needs macOS and Apple GPUs; it is not built on this platform" + where;
    default: break;
  }
  const auto b = plugin_build(t);
  if (!b) return "plugin not built" + where;
  if (b->built)
    return name + " plugin not shipped: this libtorsh's build made it ('" + b->note +
           "') but it is not installed beside libtorsh" + where + "; install " + file +
           " next to libtorsh, or add the folder holding it to TORSH_BACKEND_PATH";
  return name + " plugin not built: this libtorsh's build left it out ('" + b->note + "')" + where +
         "; rebuild with -D" + b->option + "=ON (a wheel: pip install . -Ccmake.define." + b->option +
         "=ON), or add a folder holding " + file + " built by this same torsh version to TORSH_BACKEND_PATH";
}

namespace {

void fill_devices(DriverEntry& e) {
  e.status.devices.clear();
  const int n = e.driver->device_count();
  for (int i = 0; i < n; ++i) e.status.devices.push_back(e.driver->device(i)->info());
  e.status.version = e.driver->version();
}

// Statuses are printed and handed to Python as text: every string a driver or
// the environment supplied is made valid UTF-8 once, here.
void make_text(BackendStatus& s) {
  for (auto* f : {&s.reason, &s.source, &s.version}) *f = rt::valid_utf8(*f);
  for (auto& d : s.devices) {
    for (auto* f : {&d.name, &d.vendor, &d.compute_capability, &d.driver_version}) *f = rt::valid_utf8(*f);
    for (auto& f : d.features) f = rt::valid_utf8(f);
  }
}
}  // namespace

// Looks for one type's plugin (unless its driver loaded before) and fills its status.
void Registry::probe_locked(DriverEntry& e) {
  const BackendType t = e.status.type;
  const auto& path = path_;
  if (!e.driver && t == BackendType::Cpu) {
    e.driver = make_cpu_driver();
    e.status.source = "built-in";
  }
  if (!e.driver) {
    const std::string file = "libtorsh_backend_" + std::string(backend_key(t)) + ".so";
    std::vector<std::string> errors;
    std::string note;
    for (const auto& dir : path) {
      const std::string full = dir + "/" + file;
      if (!file_exists(full)) continue;
      auto r = load_plugin(full, t);
      e.status.source = full;
      if (r.driver) {
        e.driver = r.driver;
        note = r.note;
        break;
      }
      errors.push_back(r.error);
    }
    if (!e.driver) {
      if (!errors.empty()) {
        e.status.reason = errors.front();
        for (std::size_t i = 1; i < errors.size(); ++i) e.status.reason += "; also: " + errors[i];
      } else {
        std::string dirs;
        for (const auto& d : path) dirs += (dirs.empty() ? "" : ":") + d;
        e.status.reason = missing_plugin_reason(t, file, dirs);
      }
    } else {
      // Loaded, but say what was passed over on the way and what the plugin noted.
      std::string notes;
      for (const auto& err : errors) notes += (notes.empty() ? "" : "; ") + ("skipped: " + err);
      if (!note.empty()) notes += (notes.empty() ? "" : "; ") + note;
      e.status.reason = notes;
    }
  }
  if (e.driver) {
    try {
      fill_devices(e);
      e.status.available = !e.status.devices.empty();
      if (!e.status.available)
        e.status.reason =
            "the driver loaded but reports no device" + (e.status.reason.empty() ? "" : " (" + e.status.reason + ")");
    } catch (const std::exception& ex) {
      e.status.available = false;
      e.status.reason = std::string("device query failed: ") + ex.what();
      e.driver.reset();
    }
  }
  make_text(e.status);
  e.probed = true;
}

}  // namespace rt

std::vector<std::string> plugin_search_path() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("TORSH_BACKEND_PATH")) {
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':'))
      if (!item.empty()) out.push_back(item);
  }
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&plugin_search_path), &info) && info.dli_fname) {
    std::string lib = info.dli_fname;
    auto slash = lib.rfind('/');
    std::string dir = slash == std::string::npos ? "." : lib.substr(0, slash);
    if (std::find(out.begin(), out.end(), dir) == out.end()) out.push_back(dir);
  }
  return out;
}

std::vector<BackendStatus> backend_statuses() {
  std::vector<BackendStatus> out;
  for (auto& e : rt::Registry::get().entries()) out.push_back(e.status);
  return out;
}

SelectionReport explain_selection(std::uint64_t min_free_bytes) {
  SelectionReport rep;
  bool chosen = false;
  for (const auto& st : backend_statuses()) {
    const std::string name(backend_name(st.type));
    if (!st.available) {
      rep.reasons.push_back(name + ": not available: " + st.reason);
      continue;
    }
    const bool native_cpu = st.type == BackendType::Cpu;
    for (const auto& d : st.devices) {
      const std::string dev = name + ":" + std::to_string(d.index) + " (" + d.name + ")";
      if (chosen) {
        rep.reasons.push_back(dev + ": available; a higher-priority device was chosen");
        continue;
      }
      if (!native_cpu && (d.software || d.kind == DeviceKind::Cpu)) {
        rep.reasons.push_back(dev + ": skipped for auto: runs on the host CPU (" +
                              std::string(d.software ? "software implementation" : "CPU device") +
                              "), slower than the native CPU backend; request it by name");
        continue;
      }
      const std::uint64_t free = d.free_memory.value_or(d.total_memory);
      if (min_free_bytes && free < min_free_bytes) {
        rep.reasons.push_back(dev + ": skipped: " + std::to_string(free) + " bytes free < " +
                              std::to_string(min_free_bytes) + " needed");
        continue;
      }
      rep.chosen = Device{st.type, d.index};
      rep.reasons.push_back(dev + ": chosen (highest-priority usable device)");
      chosen = true;
    }
  }
  if (!chosen)
    throw Error(ErrorCode::OutOfMemory, "no device has " + std::to_string(min_free_bytes) + " bytes free",
                {.op = "select"}, {"Reduce the model or batch size", "Quantize the weights"});
  return rep;
}

namespace {
std::string gb(std::uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB", static_cast<double>(b) / 1e9);
  return buf;
}
}  // namespace

std::string backend_summary() {
  std::ostringstream os;
  os << "=== Available Backends ===\n";
  for (const auto& st : backend_statuses()) {
    os << (st.available ? "✓ " : "✗ ") << backend_name(st.type) << " (" << backend_key(st.type) << ")";
    if (!st.version.empty()) os << "  " << st.version;
    os << "\n";
    if (!st.available) {
      os << "    unavailable: " << st.reason << "\n";
      continue;
    }
    if (!st.reason.empty()) os << "    Note: " << st.reason << "\n";
    for (const auto& d : st.devices) {
      os << "    [" << d.index << "] " << d.name << ": ";
      // WebGPU reports neither memory sizes nor compute units.
      if (d.total_memory)
        os << gb(d.total_memory);
      else
        os << "memory size not reported";
      if (d.unified_memory)
        os << " (unified memory";
      else
        os << " (";
      if (d.free_memory) os << (d.unified_memory ? ", " : "") << gb(*d.free_memory) << " free";
      os << ")";
      if (d.compute_units) os << ", " << d.compute_units << " compute units";
      if (!d.compute_capability.empty()) os << ", " << d.compute_capability;
      if (d.peak_gflops > 0) os << ", ~" << static_cast<long long>(d.peak_gflops) << " GFLOP/s f32 peak";
      if (d.software) os << ", software device";
      os << "\n";
      if (!d.architecture.empty()) os << "        " << d.architecture << "\n";
      if (!d.kernel_variants.empty()) {
        os << "        kernels:";
        for (std::size_t i = 0; i < d.kernel_variants.size(); ++i)
          os << (i ? "; " : " ") << d.kernel_variants[i].first << " " << d.kernel_variants[i].second;
        os << "\n";
      }
      if (st.type == BackendType::WebGpu && !d.features.empty()) {
        os << "        limits and features:";
        for (std::size_t i = 0; i < d.features.size(); ++i) os << (i ? ", " : " ") << d.features[i];
        os << "\n";
      }
    }
  }
  auto rep = explain_selection(0);
  os << "\nSelection (priority CUDA > ROCm > Metal > OpenCL > WebGPU > CPU):\n";
  for (const auto& r : rep.reasons) os << "  - " << r << "\n";
  os << "\nRecommended backend: " << backend_name(rep.chosen.type) << " (" << rep.chosen.to_string() << ")\n";
  return os.str();
}

}  // namespace torsh
