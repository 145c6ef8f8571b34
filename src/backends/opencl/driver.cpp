// Enumerates every OpenCL platform and device through the ICD loader, describes
// each device, and exports the plugin entry point (plugin.h).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <vector>

#include "compile_api.h"
#include "device.hpp"
#include "program.hpp"
#include "torsh/backend/plugin.h"
#include "torsh/version.hpp"

namespace torsh::opencl {

namespace {

std::string device_string(cl_device_id d, cl_device_info what, const char* name) {
  std::size_t n = 0;
  check_cl(clGetDeviceInfo(d, what, 0, nullptr, &n), name, "opencl");
  std::string s(n, '\0');
  check_cl(clGetDeviceInfo(d, what, n, s.data(), nullptr), name, "opencl");
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

template <class T>
T device_value(cl_device_id d, cl_device_info what, const char* name) {
  T v{};
  check_cl(clGetDeviceInfo(d, what, sizeof v, &v, nullptr), name, "opencl");
  return v;
}
#define TORSH_CL_STR(d, what) device_string(d, what, "clGetDeviceInfo(" #what ")")
#define TORSH_CL_VAL(T, d, what) device_value<T>(d, what, "clGetDeviceInfo(" #what ")")

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  std::size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS) return "?";
  std::string s(n, '\0');
  if (clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return "?";
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

bool contains(const std::string& s, const char* needle) {
  std::string a = s;
  std::transform(a.begin(), a.end(), a.begin(), [](unsigned char c) { return std::tolower(c); });
  return a.find(needle) != std::string::npos;
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

DeviceInfo query_device_info(int index, cl_device_id d) {
  DeviceInfo info;
  info.index = index;
  info.name = TORSH_CL_STR(d, CL_DEVICE_NAME);
  info.vendor = TORSH_CL_STR(d, CL_DEVICE_VENDOR);
  const auto type = TORSH_CL_VAL(cl_device_type, d, CL_DEVICE_TYPE);
  info.kind = (type & CL_DEVICE_TYPE_GPU)           ? DeviceKind::Gpu
              : (type & CL_DEVICE_TYPE_ACCELERATOR) ? DeviceKind::Accelerator
                                                    : DeviceKind::Cpu;
  // PoCL's CPU device ("pthread-..."), Mesa's llvmpipe / lavapipe: the host CPU through software.
  info.software = info.kind == DeviceKind::Cpu || contains(info.name, "pthread") || contains(info.name, "llvmpipe") ||
                  contains(info.name, "lavapipe");
  info.total_memory = TORSH_CL_VAL(cl_ulong, d, CL_DEVICE_GLOBAL_MEM_SIZE);
  info.compute_units = static_cast<int>(TORSH_CL_VAL(cl_uint, d, CL_DEVICE_MAX_COMPUTE_UNITS));
  // "OpenCL C 1.2 PoCL" -> "OpenCL C 1.2"
  const auto cver = split_words(TORSH_CL_STR(d, CL_DEVICE_OPENCL_C_VERSION));
  for (std::size_t i = 0; i < cver.size() && i < 3; ++i) info.compute_capability += (i ? " " : "") + cver[i];
  info.unified_memory = TORSH_CL_VAL(cl_bool, d, CL_DEVICE_HOST_UNIFIED_MEMORY) == CL_TRUE;
  const auto mhz = TORSH_CL_VAL(cl_uint, d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
  const auto vec = std::max<cl_uint>(1, TORSH_CL_VAL(cl_uint, d, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT));
  info.peak_gflops = info.compute_units * (mhz / 1000.0) * vec * 2.0;  // one FMA per lane per cycle
  info.driver_version = TORSH_CL_STR(d, CL_DRIVER_VERSION);

  const auto exts = split_words(TORSH_CL_STR(d, CL_DEVICE_EXTENSIONS));
  static const char* const kInteresting[] = {"cl_khr_fp16",
                                             "cl_khr_fp64",
                                             "cl_khr_int64_base_atomics",
                                             "cl_khr_subgroups",
                                             "cl_intel_subgroups",
                                             "cl_khr_command_buffer",
                                             "cl_khr_il_program",
                                             "cl_khr_spir",
                                             "cl_khr_integer_dot_product",
                                             "cl_amd_device_attribute_query",
                                             "cl_nv_device_attribute_query"};
  for (const char* want : kInteresting)
    if (std::find(exts.begin(), exts.end(), want) != exts.end()) info.features.emplace_back(want);
  if (std::find(exts.begin(), exts.end(), "cl_amd_device_attribute_query") != exts.end()) {
    // CL_DEVICE_GLOBAL_FREE_MEMORY_AMD: free KiB (first entry: total free).
    std::size_t kib[2] = {0, 0};
    std::size_t got = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_GLOBAL_FREE_MEMORY_AMD, sizeof kib, kib, &got) == CL_SUCCESS &&
        got >= sizeof kib[0])
      info.free_memory = static_cast<std::uint64_t>(kib[0]) * 1024;
  }
  return info;
}

Capabilities query_capabilities(cl_device_id d, const DeviceInfo& info) {
  Capabilities c;
  auto has = [&](const char* f) {
    return std::find(info.features.begin(), info.features.end(), f) != info.features.end();
  };
  c.f16 = has("cl_khr_fp16");
  c.f64 = has("cl_khr_fp64");
  c.bf16 = false;
  c.int8 = true;
  c.async_copy = true;
  c.event_timing = true;
  c.runtime_kernels = true;
  c.kernel_dialects = {KernelDialect::Torsh, KernelDialect::OpenCL};
  c.unified_memory = info.unified_memory;
  c.max_allocation = TORSH_CL_VAL(cl_ulong, d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  c.max_work_group = TORSH_CL_VAL(std::size_t, d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  return c;
}

namespace {

class OpenClDriver final : public rt::Driver {
 public:
  OpenClDriver(std::string version, std::vector<std::shared_ptr<OpenClDevice>> devices)
      : version_(std::move(version)), devices_(std::move(devices)) {}
  BackendType type() const override { return BackendType::OpenCl; }
  std::string version() const override { return version_; }
  int device_count() const override { return static_cast<int>(devices_.size()); }
  std::shared_ptr<rt::DeviceImpl> device(int index) override {
    if (index < 0 || index >= device_count())
      throw Error(ErrorCode::OutOfRange, "OpenCL device index " + std::to_string(index) + " out of range",
                  {.op = "device", .device = "opencl:" + std::to_string(index)});
    return devices_[static_cast<std::size_t>(index)];
  }

 private:
  std::string version_;
  std::vector<std::shared_ptr<OpenClDevice>> devices_;
};

// "OpenCL 3.0 PoCL 3.1+debian  Linux, None+Asserts, ..." -> "OpenCL 3.0 PoCL 3.1+debian"
std::string short_version(const std::string& v) {
  std::size_t end = std::min(v.find("  "), v.find(','));
  return v.substr(0, end);
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Empty when `dir` is a writable folder or could be created as one; else why not.
std::string unwritable_reason(const std::string& dir) {
  // The deepest part of the path that exists decides: a writable folder there can hold the rest.
  std::filesystem::path p(dir);
  for (;;) {
    struct stat st;
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return p.string() + " is not a folder";
      if (::access(p.c_str(), W_OK | X_OK) != 0) return p.string() + ": " + std::strerror(errno);
      return {};
    }
    const auto parent = p.parent_path();
    if (parent == p || (parent.empty() && p == ".")) return dir + ": no part of the path exists";
    p = parent.empty() ? std::filesystem::path(".") : parent;
  }
}

// PoCL keeps compiled kernels in a cache folder ($POCL_CACHE_DIR, else
// $XDG_CACHE_HOME/pocl/kcache, else $HOME/.cache/pocl/kcache) and, when it
// cannot create that folder, reports no device at all. With POCL_CACHE_DIR
// unset and that folder out of reach (an unwritable HOME), PoCL is pointed
// at a private folder under $TMPDIR (or /tmp) before the first OpenCL call.
// Returns the note to show, or why PoCL's cache cannot work (`blocked`).
struct PoclCache {
  std::string note;     // what was done
  std::string blocked;  // why PoCL cannot keep its cache (nothing could be done)
};

PoclCache prepare_pocl_cache() {
  PoclCache r;
  if (const std::string own = env("POCL_CACHE_DIR"); !own.empty()) {
    if (const std::string why = unwritable_reason(own); !why.empty())
      r.blocked = "PoCL cannot create its kernel cache in POCL_CACHE_DIR=" + own + " (" + why +
                  "); set POCL_CACHE_DIR to a writable folder";
    return r;
  }
  std::string dir;
  if (const std::string x = env("XDG_CACHE_HOME"); !x.empty())
    dir = x + "/pocl/kcache";
  else if (const std::string h = env("HOME"); !h.empty())
    dir = h + "/.cache/pocl/kcache";
  else
    return r;  // PoCL picks its own fallback
  const std::string why = unwritable_reason(dir);
  if (why.empty()) return r;
  std::string tmp = env("TMPDIR");
  if (tmp.empty() || tmp[0] != '/') tmp = "/tmp";
  const std::string fallback = tmp + "/torsh-pocl-cache-" + std::to_string(::getuid());
  ::mkdir(fallback.c_str(), 0700);
  struct stat st;
  const bool ours = ::lstat(fallback.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::getuid() &&
                    ::access(fallback.c_str(), W_OK | X_OK) == 0;
  if (!ours) {
    r.blocked = "PoCL cannot create its kernel cache in " + dir + " (" + why + ") nor in " + fallback +
                "; set POCL_CACHE_DIR to a writable folder";
    return r;
  }
  ::setenv("POCL_CACHE_DIR", fallback.c_str(), 0);
  r.note = "PoCL's kernel cache " + dir + " cannot be created (" + why + "); using POCL_CACHE_DIR=" + fallback +
           " (set POCL_CACHE_DIR to choose the folder)";
  return r;
}

// Why the ICD loader found no platform, naming the variable that steered it.
std::string no_platform_reason() {
  for (const char* var : {"OCL_ICD_VENDORS", "OPENCL_VENDOR_PATH"}) {
    const std::string v = env(var);
    if (v.empty()) continue;
    struct stat st;
    std::string what;
    if (::stat(v.c_str(), &st) != 0) {
      what = v.find('/') == std::string::npos ? "no ICD library of that name loads" : std::string(std::strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
      bool icd = false;
      std::error_code ec;
      for (const auto& f : std::filesystem::directory_iterator(v, ec))
        if (f.path().extension() == ".icd") icd = true;
      what = icd ? "its .icd files name no driver that loads" : "a folder with no .icd file";
    } else {
      what = "the ICD it names does not load";
    }
    return std::string("no OpenCL platform: ") + var + "=" + v + " gives the ICD loader no driver (" + what +
           "), and it then looks nowhere else; unset " + var +
           " to use the installed ICDs (/etc/OpenCL/vendors), or point it at a folder of .icd files";
  }
  return "no OpenCL platform: no ICD installed (/etc/OpenCL/vendors has no usable .icd file; install an ICD "
         "such as pocl-opencl-icd)";
}

rt::Driver* make_driver(char* err, std::size_t len) {
  const PoclCache pocl = prepare_pocl_cache();
  cl_uint np = 0;
  cl_int rc = clGetPlatformIDs(0, nullptr, &np);
  if (rc == CL_PLATFORM_NOT_FOUND_KHR || (rc == CL_SUCCESS && np == 0)) {
    std::snprintf(err, len, "%s", no_platform_reason().c_str());
    return nullptr;
  }
  if (rc != CL_SUCCESS) {
    std::snprintf(err, len, "clGetPlatformIDs failed with %s", cl_error_name(rc).c_str());
    return nullptr;
  }
  std::vector<cl_platform_id> platforms(np);
  check_cl(clGetPlatformIDs(np, platforms.data(), nullptr), "clGetPlatformIDs", "opencl");
  // Every device is opened now (context, default queue); one that fails is left out
  // and its error becomes the backend's reason if no device opens.
  std::vector<std::shared_ptr<OpenClDevice>> devices;
  std::string version, names, failures;
  for (cl_platform_id p : platforms) {
    const std::string pname = platform_string(p, CL_PLATFORM_NAME);
    names += (names.empty() ? "" : ", ") + pname;
    cl_uint nd = 0;
    rc = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd);
    if (rc == CL_DEVICE_NOT_FOUND || nd == 0) continue;
    check_cl(rc, "clGetDeviceIDs", "opencl");
    std::vector<cl_device_id> ids(nd);
    check_cl(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ids.data(), nullptr), "clGetDeviceIDs", "opencl");
    for (cl_device_id d : ids) {
      try {
        devices.push_back(std::make_shared<OpenClDevice>(static_cast<int>(devices.size()), p, d));
      } catch (const std::exception& e) {
        failures += (failures.empty() ? "" : "; ") + std::string(e.what());
      }
    }
    version += (version.empty() ? "" : "; ") + short_version(platform_string(p, CL_PLATFORM_VERSION));
  }
  if (devices.empty()) {
    const std::string cause =
        !pocl.blocked.empty() && contains(names, "portable computing language") ? " (" + pocl.blocked + ")" : "";
    if (failures.empty())
      std::snprintf(err, len, "OpenCL platform(s) %s report no device%s", names.c_str(), cause.c_str());
    else
      std::snprintf(err, len, "no OpenCL device could be opened: %s%s", failures.c_str(), cause.c_str());
    return nullptr;
  }
  std::snprintf(err, len, "%s", pocl.note.c_str());  // the loader shows it as the backend's note
  return new OpenClDriver(version, std::move(devices));
}

void* create_driver(char* err, std::size_t len) {
  try {
    return static_cast<void*>(make_driver(err, len));
  } catch (const std::exception& e) {
    std::snprintf(err, len, "OpenCL driver initialisation failed: %s", e.what());
  } catch (...) {
    std::snprintf(err, len, "OpenCL driver initialisation failed with an unknown exception");
  }
  return nullptr;
}

}  // namespace
}  // namespace torsh::opencl

TORSH_PLUGIN_EXPORT const torsh_plugin_v1* torsh_backend_plugin_entry(void) {
  static const torsh_plugin_v1 plugin{TORSH_PLUGIN_ABI_VERSION, "opencl", TORSH_BUILD_ID,
                                      &torsh::opencl::create_driver};
  return &plugin;
}

TORSH_PLUGIN_EXPORT int torsh_opencl_compile_source(torsh::rt::DeviceImpl* device, const char* source,
                                                    const char* options) {
  auto* dev = dynamic_cast<torsh::opencl::OpenClDevice*>(device);
  if (!dev || !source)
    throw torsh::Error(torsh::ErrorCode::InvalidArgument,
                       dev ? "no source given" : "not a device of the OpenCL backend", {.op = "opencl.compile"});
  return dev->build(source, options)->num_kernels();
}
static_assert(std::is_same_v<decltype(&torsh_opencl_compile_source), torsh_opencl_compile_fn>);
