// Loads backend plugins: dlopen, versioned entry point, build-id check, driver
// creation. Every failure becomes a reason string; nothing here may crash the host.
#include <dlfcn.h>

#include <cstring>
#include <exception>

#include "registry_internal.hpp"
#include "torsh/runtime/plugin.h"
#include "torsh/version.hpp"

namespace torsh::rt {

PluginLoad load_plugin(const std::string& path, BackendType expected) {
  PluginLoad r;
  // RTLD_LOCAL keeps each plugin's dependencies (CUDA runtime, OpenCL loader) out of the global namespace.
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    r.error = std::string("cannot load ") + path + ": " + (e ? e : "unknown dlopen error");
    return r;
  }
  auto entry = reinterpret_cast<torsh_plugin_entry_fn>(dlsym(h, TORSH_PLUGIN_ENTRY_SYMBOL));
  if (!entry) {
    r.error = path + " has no symbol " TORSH_PLUGIN_ENTRY_SYMBOL " (not a torsh backend plugin?)";
    dlclose(h);
    return r;
  }
  const torsh_plugin_v1* p = entry();
  if (!p) {
    r.error = path + ": entry point returned no plugin description";
    dlclose(h);
    return r;
  }
  if (p->abi_version != TORSH_PLUGIN_ABI_VERSION) {
    r.error = path + ": plugin ABI version " + std::to_string(p->abi_version) + ", this torsh expects " +
              std::to_string(TORSH_PLUGIN_ABI_VERSION) + "; rebuild the plugin against this torsh";
    dlclose(h);
    return r;
  }
  if (!p->build_id || std::strcmp(p->build_id, TORSH_BUILD_ID) != 0) {
    r.error = path + ": built as '" + std::string(p->build_id ? p->build_id : "?") + "', this torsh is '" +
              TORSH_BUILD_ID + "'; rebuild the plugin against this torsh version and C++ standard library";
    dlclose(h);
    return r;
  }
  if (!p->backend_key || backend_key(expected) != p->backend_key) {
    r.error = path + ": declares backend '" + std::string(p->backend_key ? p->backend_key : "?") +
              "', expected '" + std::string(backend_key(expected)) + "'";
    dlclose(h);
    return r;
  }
  char err[1024] = {0};
  void* drv = nullptr;
  try {
    drv = p->create_driver(err, sizeof err);
  } catch (const std::exception& e) {
    std::snprintf(err, sizeof err, "%s", e.what());
  } catch (...) {
    std::snprintf(err, sizeof err, "unknown exception while creating the driver");
  }
  if (!drv) {
    // The library stays loaded: its static state may be referenced by the error path.
    r.error = err[0] ? err : "the plugin reported no usable device";
    return r;
  }
  // Plugins are never unloaded: drivers and devices live as long as the process.
  r.driver.reset(static_cast<Driver*>(drv));
  return r;
}

}  // namespace torsh::rt
