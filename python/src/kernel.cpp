// User kernels from Python: Backend.compile_kernel, Kernel.launch and the
// CuPy-style RawKernel, which compiles for the device of its first tensor
// argument on first use there (torsh/runtime/user_kernel.hpp).
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <mutex>

#include "common.hpp"

namespace torsh::py {
namespace {

Dim3 to_dim3(nb::handle h, const char* what) {
  std::vector<std::int64_t> v;
  if (nb::isinstance<nb::int_>(h) || nb::hasattr(h, "__index__"))
    v.push_back(to_int64(h, what));
  else
    v = to_int_list(h, what);
  if (v.empty() || v.size() > 3)
    raise_error(ErrorCode::InvalidArgument,
                std::string(what) + " must be an int or a tuple of 1 to 3 ints; " + std::to_string(v.size()) + " given",
                "launch");
  std::uint32_t d[3] = {1, 1, 1};
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 1 || v[i] > 0xffffffffLL)
      raise_error(
          ErrorCode::InvalidArgument,
          std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(v[i]) + " is outside 1..4294967295",
          "launch");
    d[i] = static_cast<std::uint32_t>(v[i]);
  }
  return {d[0], d[1], d[2]};
}

// One Python argument as a KernelArg; tensors made from arrays are kept in `keep`.
KernelArg to_arg(nb::handle h, std::vector<Tensor>& keep, std::size_t i) {
  if (nb::isinstance<Tensor>(h)) return KernelArg(nb::cast<const Tensor&>(h));
  if (nb::isinstance<nb::bool_>(h)) return KernelArg(static_cast<std::int32_t>(nb::cast<bool>(h)));
  if (nb::isinstance<nb::int_>(h)) {
    std::int64_t s = 0;
    if (nb::try_cast(h, s)) return KernelArg(s);
    std::uint64_t u = 0;
    if (nb::try_cast(h, u)) return KernelArg(u);
    raise_error(ErrorCode::InvalidArgument,
                "argument " + std::to_string(i) + " = " + nb::cast<std::string>(nb::str(h)) +
                    " does not fit a 64-bit kernel integer (-2**63 .. 2**64 - 1)",
                "launch", {"Pass a value in range, or split it over several arguments"});
  }
  if (nb::isinstance<nb::float_>(h)) return KernelArg(nb::cast<double>(h));
  if (nb::isinstance<nb::bytes>(h)) {
    const nb::bytes b = nb::borrow<nb::bytes>(h);
    return KernelArg::bytes(b.c_str(), b.size());
  }
  // NumPy scalars keep their width: numpy.float32 is a float, numpy.int32 an int.
  if (nb::hasattr(h, "dtype") && nb::hasattr(h, "item") && !nb::hasattr(h, "__len__")) {
    const std::string kind = nb::cast<std::string>(h.attr("dtype").attr("kind"));
    const auto size = nb::cast<std::size_t>(h.attr("dtype").attr("itemsize"));
    if (kind == "f" && size == 4) return KernelArg(nb::cast<float>(h.attr("item")()));
    if (kind == "f" && size == 8) return KernelArg(nb::cast<double>(h.attr("item")()));
    if (kind == "i" || kind == "u" || kind == "b") {
      const nb::object v = h.attr("item")();
      if (kind == "u") {
        const auto u = nb::cast<std::uint64_t>(v);
        if (size == 1) return KernelArg(static_cast<std::uint8_t>(u));
        if (size == 2) return KernelArg(static_cast<std::uint16_t>(u));
        if (size == 4) return KernelArg(static_cast<std::uint32_t>(u));
        return KernelArg(u);
      }
      const auto s = nb::cast<std::int64_t>(v);
      if (size == 1) return KernelArg(static_cast<std::int8_t>(s));
      if (size == 2) return KernelArg(static_cast<std::int16_t>(s));
      if (size == 4) return KernelArg(static_cast<std::int32_t>(s));
      return KernelArg(s);
    }
    // A structured scalar: its bytes, passed by value.
    const nb::bytes b = nb::borrow<nb::bytes>(h.attr("tobytes")());
    return KernelArg::bytes(b.c_str(), b.size());
  }
  if (nb::hasattr(h, "__dlpack__") || nb::hasattr(h, "__array_interface__")) {
    keep.push_back(as_inplace_tensor(TensorLike{nb::borrow(h)}, "launch", "argument " + std::to_string(i)));
    return KernelArg(keep.back());
  }
  raise_error(ErrorCode::InvalidArgument,
              "argument " + std::to_string(i) + " of type " +
                  nb::cast<std::string>(nb::str(h.type().attr("__name__"))) + " cannot be passed to a kernel",
              "launch", {"Pass Tensors, writable arrays, ints, floats, NumPy scalars or bytes"});
}

void launch(const Kernel& k, nb::handle grid, nb::handle block, nb::handle args, std::optional<Backend> stream_of) {
  const Dim3 g = to_dim3(grid, "grid"), b = to_dim3(block, "block");
  std::vector<Tensor> keep;
  keep.reserve(64);
  std::vector<KernelArg> a;
  std::size_t i = 0;
  if (!nb::isinstance<nb::tuple>(args) && !nb::isinstance<nb::list>(args))
    raise_error(ErrorCode::InvalidArgument, "args must be a tuple or list of kernel arguments", "launch");
  for (nb::handle h : args) {
    if (keep.size() == keep.capacity())
      raise_error(ErrorCode::InvalidArgument, "more than 64 array arguments", "launch");
    a.push_back(to_arg(h, keep, i++));
  }
  Backend be = stream_of ? *stream_of : Backend::create(k.device().type, k.device().index);
  Stream s = be.default_stream();
  nb::gil_scoped_release unlocked;
  s.launch(k, g, b, std::span<const KernelArg>(a));
}

KernelSource make_source(const std::string& source, const std::string& entry, const std::string& dialect,
                         const std::map<std::string, nb::object>& defines, const std::vector<std::string>& options,
                         const std::string& name) {
  KernelSource s{
      .source = source, .entry = entry, .dialect = kernel_dialect_from_name(dialect), .options = options, .name = name};
  for (const auto& [k, v] : defines) s.defines.emplace_back(k, nb::cast<std::string>(nb::str(v)));
  return s;
}

nb::dict param_dict(const KernelParam& p) {
  nb::dict d;
  d["kind"] = p.kind == KernelParam::Kind::Buffer ? "buffer" : "value";
  d["type"] = std::string(param_type_name(p.type));
  d["size"] = p.size;
  d["writable"] = p.writable;
  d["name"] = p.name;
  d["spelling"] = p.spelling;
  return d;
}

nb::dict stats_dict(const KernelStats& s) {
  nb::dict d;
  d["kernels_cached"] = s.kernels_cached;
  d["compiles"] = s.compiles;
  d["memory_hits"] = s.memory_hits;
  d["disk_hits"] = s.disk_hits;
  d["disk_writes"] = s.disk_writes;
  d["disk_rebuilds"] = s.disk_rebuilds;
  d["launches"] = s.launches;
  d["compile_ms"] = s.compile_ms;
  d["disk_load_ms"] = s.disk_load_ms;
  return d;
}

// RawKernel: the source once, compiled per device on first use there.
class RawKernel {
 public:
  RawKernel(KernelSource src, std::optional<Backend> backend) : src_(std::move(src)) {
    if (backend) kernel_for(*backend);
  }
  Kernel kernel_for(const Backend& b) {
    const std::string key = b.device().to_string();
    {
      std::lock_guard lk(mu_);
      if (auto it = kernels_.find(key); it != kernels_.end()) return it->second;
    }
    Backend be = b;
    Kernel k;
    {
      nb::gil_scoped_release unlocked;
      k = be.compile_kernel(src_);
    }
    std::lock_guard lk(mu_);
    return kernels_.emplace(key, k).first->second;
  }
  // The device the call runs on: `backend` when given, else the first tensor argument's.
  Backend device_of(nb::handle args, const std::optional<Backend>& backend) {
    if (backend) return *backend;
    for (nb::handle h : args)
      if (nb::isinstance<Tensor>(h)) return nb::cast<const Tensor&>(h).backend();
    std::lock_guard lk(mu_);
    if (kernels_.size() == 1) {
      const Device d = kernels_.begin()->second.device();
      return Backend::create(d.type, d.index);
    }
    return cpu_backend();
  }
  const KernelSource& source() const { return src_; }

 private:
  KernelSource src_;
  std::mutex mu_;
  std::map<std::string, Kernel> kernels_;
};

}  // namespace

void bind_kernel(nb::module_& m) {
  nb::class_<Kernel>(
      m, "Kernel",
      "A user kernel compiled for one device (torsh_backend.compile_kernel, RawKernel.compile). Launch it with "
      "k.launch(grid, block, args).")
      .def_prop_ro("name", [](const Kernel& k) { return text(k.name()); })
      .def_prop_ro("entry", [](const Kernel& k) { return text(k.entry()); })
      .def_prop_ro("dialect", [](const Kernel& k) { return std::string(kernel_dialect_name(k.dialect())); })
      .def_prop_ro("device", [](const Kernel& k) { return k.device().to_string(); })
      .def_prop_ro(
          "params",
          [](const Kernel& k) {
            nb::list l;
            for (const auto& p : k.params()) l.append(param_dict(p));
            return l;
          },
          "The entry's parameters as the launch checks them: dicts of kind ('buffer'/'value'), type, size, "
          "writable, name, spelling.")
      .def_prop_ro("params_known", &Kernel::params_known)
      .def_prop_ro(
          "origin", [](const Kernel& k) { return std::string(kernel_origin_name(k.origin())); },
          "'compiled', 'memory cache' or 'disk cache'.")
      .def_prop_ro("build_ms", &Kernel::build_ms, "Milliseconds compile_kernel took for this handle.")
      .def_prop_ro("build_log", [](const Kernel& k) { return text(k.build_log()); })
      .def_prop_ro("cache_path", [](const Kernel& k) { return text(k.cache_path()); })
      .def("launch", &launch, nb::arg("grid"), nb::arg("block"), nb::arg("args"), nb::arg("stream").none() = nb::none(),
           "Runs the kernel: `grid` work-groups of `block` items (ints or tuples of up to 3). args: Tensors (or "
           "writable arrays on the CPU), ints, floats, NumPy scalars, bytes of a POD struct. Checked against the "
           "entry's parameters first. Runs on the default stream of `stream` (a Backend) or of the kernel's device.")
      .def("__repr__", [](const Kernel& k) {
        return text("Kernel('" + k.name() + "', dialect='" + std::string(kernel_dialect_name(k.dialect())) +
                    "', device='" + k.device().to_string() + "', origin='" +
                    std::string(kernel_origin_name(k.origin())) + "')");
      });

  nb::class_<RawKernel>(m, "RawKernel",
                        "A kernel of your own from source, as CuPy's RawKernel: compiled for each device on first "
                        "use there (or now for `backend`), called as k(grid, block, (t1, t2, 3.0)). dialect: "
                        "'torsh' (one source for CPU, OpenCL, CUDA, ROCm), 'opencl', 'cuda' or 'wgsl'.")
      .def(
          "__init__",
          [](RawKernel* self, const std::string& source, const std::string& entry, const std::string& dialect,
             std::optional<DeviceArg> backend, const std::map<std::string, nb::object>& defines,
             const std::vector<std::string>& options, const std::string& name) {
            std::optional<Backend> b;
            if (backend) b = to_backend(*backend);
            new (self) RawKernel(make_source(source, entry, dialect, defines, options, name), b);
          },
          nb::arg("source"), nb::arg("entry"), nb::arg("dialect") = "torsh", nb::arg("backend").none() = nb::none(),
          nb::arg("defines") = std::map<std::string, nb::object>{}, nb::arg("options") = std::vector<std::string>{},
          nb::arg("name") = "")
      .def(
          "__call__",
          [](RawKernel& r, nb::handle grid, nb::handle block, nb::handle args, std::optional<DeviceArg> backend) {
            std::optional<Backend> b;
            if (backend) b = to_backend(*backend);
            const Backend dev = r.device_of(args, b);
            launch(r.kernel_for(dev), grid, block, args, dev);
          },
          nb::arg("grid"), nb::arg("block"), nb::arg("args"), nb::arg("backend").none() = nb::none(),
          "Launches on the device of the first tensor argument (or `backend`), compiling there on first use.")
      .def(
          "compile", [](RawKernel& r, const DeviceArg& backend) { return r.kernel_for(to_backend(backend)); },
          nb::arg("backend"), "The Kernel for a device, compiled (or found in the cache) now.")
      .def_prop_ro("entry", [](const RawKernel& r) { return text(r.source().entry); })
      .def_prop_ro("dialect", [](const RawKernel& r) { return std::string(kernel_dialect_name(r.source().dialect)); });

  m.def(
      "compile_kernel",
      [](const DeviceArg& backend, const std::string& source, const std::string& entry, const std::string& dialect,
         const std::map<std::string, nb::object>& defines, const std::vector<std::string>& options,
         const std::string& name) {
        Backend b = to_backend(backend);
        KernelSource s = make_source(source, entry, dialect, defines, options, name);
        nb::gil_scoped_release unlocked;
        return b.compile_kernel(s);
      },
      nb::arg("backend"), nb::arg("source"), nb::arg("entry"), nb::arg("dialect") = "torsh",
      nb::arg("defines") = std::map<std::string, nb::object>{}, nb::arg("options") = std::vector<std::string>{},
      nb::arg("name") = "",
      "Compiles a kernel for one device (or finds it in the memory or disk cache). Raises TorshError "
      "(KernelCompile) with the build log when it does not compile.");
  m.def(
      "kernel_dialects",
      [](const DeviceArg& backend) {
        std::vector<std::string> out;
        for (KernelDialect d : to_backend(backend).capabilities().kernel_dialects)
          out.emplace_back(kernel_dialect_name(d));
        return out;
      },
      nb::arg("backend"), "The kernel dialects a device builds: 'torsh', 'opencl', 'cuda', 'wgsl'.");
  m.def(
      "kernel_stats",
      [](std::optional<DeviceArg> backend) {
        return stats_dict(backend ? to_backend(*backend).kernel_stats() : kernel_stats());
      },
      nb::arg("backend").none() = nb::none(),
      "Kernel compile and cache counters of one device, or of the process: kernels_cached, compiles, "
      "memory_hits, disk_hits, disk_writes, disk_rebuilds, launches, compile_ms, disk_load_ms.");
  m.def("kernel_cache_dir", &kernel_cache_dir,
        "The disk cache of compiled kernels ('' when TORSH_KERNEL_CACHE_DIR=off).");
  m.def(
      "kernel_cache_warnings", [] { return kernel_cache_warnings(); },
      "Warnings the kernel cache raised in this process (corrupt entries rebuilt, unwritable directory).");
}

}  // namespace torsh::py
