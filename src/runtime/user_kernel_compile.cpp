// Backend::compile_kernel: validation, the in-memory and disk caches, and the
// statistics (user_kernel.hpp).
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>

#include "kernel_disk_cache.hpp"
#include "kernel_signature.hpp"
#include "registry_internal.hpp"
#include "sha256.hpp"
#include "torsh/runtime/autotune.hpp"
#include "user_kernel_state.hpp"

namespace torsh {
namespace detail {
namespace {

struct MemEntry {
  std::shared_ptr<rt::UserKernelImpl> impl;
  std::string log, cache_path;
};

struct CacheState {
  std::mutex mu;
  std::map<const rt::DeviceImpl*, std::map<std::string, MemEntry>> memory;
  std::map<const rt::DeviceImpl*, KernelStats> per_device;
  KernelStats total;
  // Launches are counted without the lock: one counter per device, its address stable in the map.
  std::map<const rt::DeviceImpl*, std::atomic<std::size_t>> launches;
  std::vector<std::string> warnings;
};

CacheState& cache() {
  static auto* s = new CacheState;  // never destroyed: kernels may be released during exit
  return *s;
}

template <class F>
void count(const rt::DeviceImpl* dev, F f) {
  auto& c = cache();
  std::lock_guard lk(c.mu);
  f(c.per_device[dev]);
  f(c.total);
}

void warn(const std::string& w) {
  {
    auto& c = cache();
    std::lock_guard lk(c.mu);
    c.warnings.push_back(w);
  }
  std::fprintf(stderr, "torsh: kernel cache: %s\n", w.c_str());
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::string dialect_list(const std::vector<KernelDialect>& ds) {
  std::string s;
  for (KernelDialect d : ds) s += (s.empty() ? "" : ", ") + std::string(kernel_dialect_name(d));
  return s.empty() ? "none" : s;
}

// Rejects what no backend could build, before any compiler runs.
void validate(const KernelSource& src, const rt::DeviceImpl& dev, const Device& where) {
  const ErrorContext ctx{.op = "compile_kernel", .device = where.to_string()};
  const std::string what = "kernel '" + (src.name.empty() ? src.entry : src.name) + "'";
  if (src.source.empty()) throw Error(ErrorCode::InvalidArgument, what + " has an empty source", ctx);
  if (src.source.find('\0') != std::string::npos)
    throw Error(ErrorCode::InvalidArgument, what + "'s source contains a NUL byte", ctx);
  if (src.entry.empty())
    throw Error(ErrorCode::InvalidArgument, "no entry point named: KernelSource::entry is empty", ctx,
                {"Set entry to the name of the kernel function in the source"});
  if (src.dialect != KernelDialect::Cuda && !identifier(src.entry))
    throw Error(ErrorCode::InvalidArgument, "entry '" + src.entry + "' is not an identifier", ctx);
  for (const auto& [name, value] : src.defines) {
    if (!identifier(name))
      throw Error(ErrorCode::InvalidArgument, what + ": define name '" + name + "' is not an identifier", ctx);
    if (value.find_first_of("\n\r") != std::string::npos || value.find('\0') != std::string::npos)
      throw Error(ErrorCode::InvalidArgument, what + ": the value of define " + name + " spans lines", ctx);
  }
  for (const auto& o : src.options)
    if (o.find('\0') != std::string::npos)
      throw Error(ErrorCode::InvalidArgument, what + ": an option contains a NUL byte", ctx);
  const auto dialects = dev.kernel_dialects();
  bool ok = false;
  for (KernelDialect d : dialects) ok = ok || d == src.dialect;
  if (!ok)
    throw Error(ErrorCode::Unsupported,
                what + " is written in the " + std::string(kernel_dialect_name(src.dialect)) + " dialect, which " +
                    where.to_string() + " (" + dev.info().name +
                    ") does not build; it builds: " + dialect_list(dialects),
                ctx, {"Pick a backend whose capabilities().kernel_dialects has this dialect, or port the kernel"});
}

// Everything a build depends on, as text: the disk cache's key.
std::string cache_key(const KernelSource& src, const rt::DeviceImpl& dev) {
  std::string k = "torsh kernel cache 1\n";
  k += "library " + autotune::library_version() + "\n";
  k += "backend " + std::string(backend_key(dev.type())) + "\n";
  k += "device " + dev.info().name + " | " + dev.info().vendor + " | " + dev.info().driver_version + "\n";
  k += "compiler " + dev.kernel_compiler_id() + "\n";
  k += "dialect " + std::string(kernel_dialect_name(src.dialect)) + "\n";
  k += "entry " + src.entry + "\n";
  for (const auto& [n, v] : src.defines) k += "define " + n + "=" + v + "\n";
  for (const auto& o : src.options) k += "option " + o + "\n";
  k += "source " + sha256_hex(src.source) + "\n";
  return k;
}

rt::UserKernelSpec make_spec(const KernelSource& src, const Device& where) {
  rt::UserKernelSpec spec;
  spec.src = src;
  if (spec.src.name.empty()) spec.src.name = src.entry;
  spec.label = "kernel '" + spec.src.name + "' (" + std::string(kernel_dialect_name(src.dialect)) + " dialect)";
  if (src.dialect != KernelDialect::Wgsl) {
    if (auto parsed = parse_c_entry(src.source, src.entry)) {
      if (!parsed->local_param.empty())
        throw Error(ErrorCode::InvalidArgument,
                    spec.label + " takes a parameter in work-group memory (" + parsed->local_param +
                        "); kernel parameters must be buffers or values",
                    {.op = "compile_kernel", .device = where.to_string()},
                    {"Declare the work-group array inside the kernel with LOCAL_ARRAY(type, name, n)"});
      spec.params = std::move(parsed->params);
      spec.params_known = true;
    }
  }
  return spec;
}

}  // namespace

std::atomic<std::size_t>* launch_counter(const rt::DeviceImpl* dev) {
  auto& c = cache();
  std::lock_guard lk(c.mu);
  return &c.launches[dev];
}

// The counters of one device (or all, for null), launches included; the lock is held.
KernelStats snapshot_locked(CacheState& c, const rt::DeviceImpl* dev) {
  KernelStats s;
  if (dev) {
    if (auto it = c.per_device.find(dev); it != c.per_device.end()) s = it->second;
    if (auto it = c.launches.find(dev); it != c.launches.end()) s.launches = it->second.load(std::memory_order_relaxed);
  } else {
    s = c.total;
    for (const auto& [d, n] : c.launches) s.launches += n.load(std::memory_order_relaxed);
  }
  return s;
}

}  // namespace detail

std::string_view kernel_origin_name(KernelOrigin o) {
  switch (o) {
    case KernelOrigin::Compiled: return "compiled";
    case KernelOrigin::MemoryCache: return "memory cache";
    case KernelOrigin::DiskCache: return "disk cache";
  }
  return "?";
}

Kernel Backend::compile_kernel(const KernelSource& src) {
  using namespace detail;
  const auto t0 = std::chrono::steady_clock::now();
  rt::DeviceImpl& dev = *s_->dev;
  const Device where = s_->device;
  validate(src, dev, where);
  rt::UserKernelSpec spec = make_spec(src, where);
  const std::string key = cache_key(src, dev);

  auto st = std::make_shared<KernelState>();
  st->dev = s_->dev;
  st->device = where;
  st->name = spec.src.name;
  st->entry = src.entry;
  st->dialect = src.dialect;
  st->launches = launch_counter(&dev);
  auto finish = [&](KernelOrigin origin, std::shared_ptr<rt::UserKernelImpl> impl, std::string log, std::string path) {
    st->impl = std::move(impl);
    st->origin = origin;
    st->log = std::move(log);
    st->cache_path = std::move(path);
    st->build_ms = ms_since(t0);
    Kernel k;
    k.s_ = st;
    return k;
  };

  {
    auto& c = cache();
    std::lock_guard lk(c.mu);
    auto& mem = c.memory[&dev];
    if (auto it = mem.find(key); it != mem.end()) {
      ++c.per_device[&dev].memory_hits;
      ++c.total.memory_hits;
      const MemEntry e = it->second;
      return finish(KernelOrigin::MemoryCache, e.impl, e.log, e.cache_path);
    }
  }
  auto remember = [&](const std::shared_ptr<rt::UserKernelImpl>& impl, const std::string& log,
                      const std::string& path) {
    auto& c = cache();
    std::lock_guard lk(c.mu);
    auto& mem = c.memory[&dev];
    // Another thread may have built the same kernel meanwhile: keep the first.
    if (mem.emplace(key, MemEntry{impl, log, path}).second) {
      ++c.per_device[&dev].kernels_cached;
      ++c.total.kernels_cached;
    }
  };

  const std::string& dir = kernel_cache_directory();
  const std::string path =
      dir.empty() ? std::string() : kernel_cache_file(dir + "/" + std::string(backend_key(dev.type())), key);
  if (!path.empty()) {
    std::string problem;
    const auto tl = std::chrono::steady_clock::now();
    if (auto cached = read_cached_kernel(path, key, problem)) {
      try {
        std::shared_ptr<rt::UserKernelImpl> impl = dev.load_kernel(spec, cached->bytes);
        const double ms = ms_since(tl);
        count(&dev, [&](KernelStats& s) {
          ++s.disk_hits;
          s.disk_load_ms += ms;
        });
        remember(impl, cached->log, path);
        return finish(KernelOrigin::DiskCache, impl, cached->log, path);
      } catch (const Error& e) {
        problem = "the device refused the cached binary (" + e.message().substr(0, 300) + ")";
      }
    }
    if (!problem.empty()) {
      warn(path + " for " + spec.label + " on " + where.to_string() + " is unusable: " + problem + "; rebuilding it");
      count(&dev, [](KernelStats& s) { ++s.disk_rebuilds; });
    }
  }

  const auto tc = std::chrono::steady_clock::now();
  rt::KernelBinary bin = dev.build_kernel(spec);
  std::shared_ptr<rt::UserKernelImpl> impl = dev.load_kernel(spec, bin.bytes);
  const double compile_ms = ms_since(tc);
  count(&dev, [&](KernelStats& s) {
    ++s.compiles;
    s.compile_ms += compile_ms;
  });
  std::string written;
  if (!path.empty() && bin.cacheable) {
    std::string problem;
    if (write_cached_kernel(path, key, {bin.bytes, bin.log}, problem)) {
      written = path;
      count(&dev, [](KernelStats& s) { ++s.disk_writes; });
    } else {
      warn(problem + "; " + spec.label + " is cached in this process only");
    }
  }
  remember(impl, bin.log, written);
  return finish(KernelOrigin::Compiled, impl, bin.log, written);
}

KernelStats Backend::kernel_stats() const {
  auto& c = detail::cache();
  std::lock_guard lk(c.mu);
  return detail::snapshot_locked(c, s_->dev.get());
}

KernelStats kernel_stats() {
  auto& c = detail::cache();
  std::lock_guard lk(c.mu);
  return detail::snapshot_locked(c, nullptr);
}

std::vector<std::string> kernel_cache_warnings() {
  auto& c = detail::cache();
  std::lock_guard lk(c.mu);
  return c.warnings;
}

std::string kernel_cache_dir() { return detail::kernel_cache_directory(); }

void clear_kernel_memory_cache() {
  auto& c = detail::cache();
  std::lock_guard lk(c.mu);
  c.memory.clear();
  for (auto& [dev, s] : c.per_device) s.kernels_cached = 0;
  c.total.kernels_cached = 0;
}

}  // namespace torsh
