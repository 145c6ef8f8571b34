// Loads backend plugins: dlopen, versioned entry point, build-id check, driver
// creation. Every failure becomes a reason string; nothing here may crash the host.
#include <dlfcn.h>
#include <elf.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <string_view>

#include "registry_internal.hpp"
#include "torsh/backend/plugin.h"
#include "torsh/version.hpp"

namespace torsh::rt {

namespace {

struct ElfIdent {
  std::string error;  // why no ELF header could be read
  unsigned char cls = 0, data = 0;
  unsigned type = 0, machine = 0;
};

ElfIdent read_elf_ident(const std::string& path) {
  ElfIdent id;
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    id.error = std::string("cannot read it: ") + std::strerror(errno);
    return id;
  }
  unsigned char h[EI_NIDENT + 4] = {};
  f.read(reinterpret_cast<char*>(h), sizeof h);
  if (f.gcount() < static_cast<std::streamsize>(sizeof h) || std::memcmp(h, ELFMAG, SELFMAG) != 0) {
    id.error = "not a shared library (the file has no ELF header)";
    return id;
  }
  id.cls = h[EI_CLASS];
  id.data = h[EI_DATA];
  const bool big = id.data == ELFDATA2MSB;
  auto half = [&](int at) { return big ? unsigned(h[at]) << 8 | h[at + 1] : unsigned(h[at + 1]) << 8 | h[at]; };
  id.type = half(EI_NIDENT);
  id.machine = half(EI_NIDENT + 2);
  return id;
}

std::string machine_name(unsigned m) {
  switch (m) {
    case EM_386: return "x86 (i386)";
    case EM_X86_64: return "x86-64";
    case EM_ARM: return "32-bit ARM";
    case EM_AARCH64: return "AArch64 (arm64)";
    case EM_PPC: return "PowerPC";
    case EM_PPC64: return "PowerPC64";
    case EM_S390: return "s390x";
    case EM_MIPS: return "MIPS";
    case EM_RISCV: return "RISC-V";
#ifdef EM_LOONGARCH
    case EM_LOONGARCH: return "LoongArch";
#endif
    default: return "ELF machine " + std::to_string(m);
  }
}

const char* class_name(unsigned char c) {
  return c == ELFCLASS32 ? "32-bit" : c == ELFCLASS64 ? "64-bit" : "unknown-class";
}

// This library's own header: what a plugin loaded into this process must match.
const ElfIdent& host_ident() {
  static const ElfIdent id = [] {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&elf_mismatch), &info) && info.dli_fname) return read_elf_ident(info.dli_fname);
    return read_elf_ident("/proc/self/exe");
  }();
  return id;
}

}  // namespace

std::string elf_mismatch(const std::string& path) {
  const ElfIdent p = read_elf_ident(path);
  if (!p.error.empty()) return p.error;
  const ElfIdent& h = host_ident();
  if (!h.error.empty()) return {};  // nothing to compare with: let dlopen say
  const std::string use = "; use a plugin built for " + machine_name(h.machine) + " (" + class_name(h.cls) + ")";
  if (p.cls != h.cls)
    return std::string("wrong architecture: a ") + class_name(p.cls) + " " + machine_name(p.machine) +
           " file, this process is " + class_name(h.cls) + " " + machine_name(h.machine) + use;
  if (p.data != h.data)
    return std::string("wrong architecture: ") + (p.data == ELFDATA2MSB ? "big" : "little") +
           "-endian file, this process is " + (h.data == ELFDATA2MSB ? "big" : "little") + "-endian" + use;
  if (p.machine != h.machine)
    return "wrong architecture: built for " + machine_name(p.machine) + ", this process runs " +
           machine_name(h.machine) + use;
  if (p.type != ET_DYN) return "not a shared library (ELF type " + std::to_string(p.type) + ", expected ET_DYN)";
  return {};
}

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
    const std::string elf = elf_mismatch(path);
    r.error = std::string("cannot load ") + path + ": " + (!elf.empty() ? elf : e ? e : "unknown dlopen error");
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
    r.error = path + ": built as '" + bounded(p->build_id) + "', this torsh is '" + TORSH_BUILD_ID +
              "'; rebuild the plugin against this torsh version and C++ standard library";
    dlclose(h);
    return r;
  }
  if (!p->backend_key || backend_key(expected) != bounded(p->backend_key)) {
    r.error = path + ": declares backend '" + bounded(p->backend_key) + "', expected '" +
              std::string(backend_key(expected)) + "'";
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
  r.note.assign(err, strnlen(err, sizeof err));
  return r;
}
}  // namespace

PluginLoad load_plugin(const std::string& path, BackendType expected) {
  // Paths, dlerror() and the plugin's own words may hold any bytes; callers
  // (Python's str, JSON output) need text.
  PluginLoad r = load(path, expected);
  r.error = valid_utf8(r.error);
  r.note = valid_utf8(r.note);
  return r;
}

}  // namespace torsh::rt
