// Loads backend plugins: dlopen, versioned entry point, build-id check, driver
// creation. Every failure becomes a reason string; nothing here may crash the host.
#include <dlfcn.h>

#include <cstring>
#include <exception>
#include <string_view>

#include "registry_internal.hpp"
#include "torsh/runtime/plugin.h"
#include "torsh/version.hpp"

namespace torsh::rt {

namespace {
// The length of a well-formed UTF-8 sequence starting at s[i] (1 to 4), or 0.
// Overlong forms, surrogates and code points above U+10FFFF are ill-formed.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return b(k) >= lo && b(k) <= hi; };
  const unsigned c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const bool second = c == 0xE0 ? cont(1, 0xA0) : c == 0xED ? cont(1, 0x80, 0x9F) : cont(1);
    return second && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const bool second = c == 0xF0 ? cont(1, 0x90) : c == 0xF4 ? cont(1, 0x80, 0x8F) : cont(1);
    return second && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// At most `max` bytes of a string the plugin owns: nothing guarantees its terminator.
std::string bounded(const char* s, std::size_t max = 1024) { return s ? std::string(s, strnlen(s, max)) : "?"; }
}  // namespace

std::string valid_utf8(std::string_view text) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence(text, i);
    const auto c = static_cast<unsigned char>(text[i]);
    // Control characters other than tab and newline could drive the terminal `torsh info` prints to.
    if (n == 0 || (n == 1 && ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7F))) {
      out += kReplacement;
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

namespace {
PluginLoad load(const std::string& path, BackendType expected) {
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
  if (!p->build_id || bounded(p->build_id) != TORSH_BUILD_ID) {
    r.error = path + ": built as '" + bounded(p->build_id) + "', this torsh is '" +
              TORSH_BUILD_ID + "'; rebuild the plugin against this torsh version and C++ standard library";
    dlclose(h);
    return r;
  }
  if (!p->backend_key || backend_key(expected) != bounded(p->backend_key)) {
    r.error = path + ": declares backend '" + bounded(p->backend_key) +
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
    // The plugin may have filled the buffer to the end without a terminator.
    err[sizeof err - 1] = '\0';
    r.error = err[0] ? std::string(err) : "the plugin reported no usable device";
    return r;
  }
  // Plugins are never unloaded: drivers and devices live as long as the process.
  r.driver.reset(static_cast<Driver*>(drv));
  return r;
}
}  // namespace

PluginLoad load_plugin(const std::string& path, BackendType expected) {
  // Paths, dlerror() and the plugin's own words may hold any bytes; callers
  // (Python's str, JSON output) need text.
  PluginLoad r = load(path, expected);
  r.error = valid_utf8(r.error);
  return r;
}

}  // namespace torsh::rt
