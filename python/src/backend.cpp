// Backends and devices: what exists on this machine (and why not), creating a
// backend, device facts, and the `torsh info` summary.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <charconv>
#include <map>

#include "common.hpp"

namespace torsh::py {
namespace {

const char* kind_name(DeviceKind k) {
  switch (k) {
    case DeviceKind::Cpu: return "cpu";
    case DeviceKind::Gpu: return "gpu";
    case DeviceKind::Accelerator: return "accelerator";
  }
  return "?";
}

rt::OpKind op_kind(const std::string& name) {
  if (const auto k = rt::op_kind_from_name(name)) return *k;
  raise_error(ErrorCode::InvalidArgument, "unknown op family '" + name + "'", "Backend.supports",
              {"Use one of " + rt::op_kind_names()});
}

std::vector<nb::str> texts(const std::vector<std::string>& v) {
  std::vector<nb::str> out;
  out.reserve(v.size());
  for (const auto& s : v) out.push_back(text(s));
  return out;
}

// create()'s name and index as one device string. Both may name the index; when
// they disagree neither can be assumed to be the one meant, so that is an error.
std::string device_name(const std::string& name, std::optional<int> index) {
  if (!index) return name;
  const auto colon = name.find(':');
  if (colon == std::string::npos) return name + ":" + std::to_string(*index);
  int named = 0;
  const std::string suffix = name.substr(colon + 1);
  const auto [end, ec] = std::from_chars(suffix.data(), suffix.data() + suffix.size(), named);
  if (ec != std::errc() || end != suffix.data() + suffix.size()) return name;  // to_backend reports the bad index
  if (named != *index)
    raise_error(ErrorCode::InvalidArgument,
                "device '" + name + "' and index=" + std::to_string(*index) + " name different devices", "create",
                {"Name the index once: create('" + name.substr(0, colon) + "', " + std::to_string(*index) +
                 ") or create('" + name + "')"});
  return name;
}

std::string info_repr(const DeviceInfo& d) {
  return "DeviceInfo(index=" + std::to_string(d.index) + ", name='" + d.name + "', kind='" + kind_name(d.kind) +
         "', compute_units=" + std::to_string(d.compute_units) + ", total_memory=" + std::to_string(d.total_memory) +
         (d.software ? ", software=True" : "") + ")";
}

void bind_info_types(nb::module_& m) {
  nb::class_<DeviceInfo>(m, "DeviceInfo", "Facts about one device, as its backend reports them.")
      .def_ro("index", &DeviceInfo::index, "Device index within its backend.")
      .def_prop_ro("name", [](const DeviceInfo& d) { return text(d.name); })
      .def_prop_ro("vendor", [](const DeviceInfo& d) { return text(d.vendor); })
      .def_prop_ro(
          "kind", [](const DeviceInfo& d) { return kind_name(d.kind); }, "'cpu', 'gpu' or 'accelerator'.")
      .def_ro("software", &DeviceInfo::software,
              "True for a device emulated on the host CPU (PoCL, lavapipe); never auto-selected over the CPU backend.")
      .def_ro("total_memory", &DeviceInfo::total_memory, "Bytes.")
      .def_ro("free_memory", &DeviceInfo::free_memory, "Bytes, or None when the driver cannot tell.")
      .def_ro("compute_units", &DeviceInfo::compute_units)
      .def_prop_ro("compute_capability", [](const DeviceInfo& d) { return text(d.compute_capability); })
      .def_ro("unified_memory", &DeviceInfo::unified_memory)
      .def_ro("peak_gflops", &DeviceInfo::peak_gflops, "Estimated f32 FMA peak.")
      .def_prop_ro("driver_version", [](const DeviceInfo& d) { return text(d.driver_version); })
      .def_prop_ro("features", [](const DeviceInfo& d) { return texts(d.features); })
      .def_prop_ro(
          "architecture", [](const DeviceInfo& d) { return text(d.architecture); },
          "CPU: cpuid family and model, and the microarchitecture where known ('family 25 model 17 (Zen 4)').")
      .def_prop_ro(
          "kernel_variants",
          [](const DeviceInfo& d) {
            nb::list out;
            for (const auto& [family, variant] : d.kernel_variants)
              out.append(nb::make_tuple(text(family), text(variant)));
            return out;
          },
          "(family, variant) pairs: CPU: the instruction set and tile each kernel family runs ('gemm f32', "
          "'avx512-14x32').")
      .def("__repr__", [](const DeviceInfo& d) { return text(info_repr(d)); });

  nb::class_<Capabilities>(m, "Capabilities", "What a device can do beyond f32 compute.")
      .def_ro("f16", &Capabilities::f16)
      .def_ro("bf16", &Capabilities::bf16)
      .def_ro("f64", &Capabilities::f64)
      .def_ro("int8", &Capabilities::int8)
      .def_ro("async_copy", &Capabilities::async_copy)
      .def_ro("event_timing", &Capabilities::event_timing)
      .def_ro("runtime_kernels", &Capabilities::runtime_kernels)
      .def_ro("unified_memory", &Capabilities::unified_memory)
      .def_ro("max_allocation", &Capabilities::max_allocation)
      .def_ro("max_work_group", &Capabilities::max_work_group)
      .def_prop_ro(
          "kernel_dialects",
          [](const Capabilities& c) {
            std::vector<std::string> out;
            for (KernelDialect d : c.kernel_dialects) out.emplace_back(kernel_dialect_name(d));
            return out;
          },
          "The dialects compile_kernel accepts on this device: 'torsh', 'opencl', 'cuda', 'wgsl'.");

  nb::class_<MemoryStats>(m, "MemoryStats", "Live and peak memory of one backend handle.")
      .def_ro("live_buffers", &MemoryStats::live_buffers)
      .def_ro("live_bytes", &MemoryStats::live_bytes)
      .def_ro("peak_bytes", &MemoryStats::peak_bytes)
      .def_ro("total_allocations", &MemoryStats::total_allocations);

  nb::class_<BackendStatus>(m, "BackendStatus", "One backend type: available or not, and why.")
      .def_prop_ro("type", [](const BackendStatus& s) { return std::string(backend_key(s.type)); })
      .def_ro("available", &BackendStatus::available)
      .def_prop_ro(
          "reason", [](const BackendStatus& s) { return text(s.reason); },
          "Why it is unavailable, or notes when it is available.")
      .def_prop_ro(
          "source", [](const BackendStatus& s) { return text(s.source); }, "'built-in' or the plugin's path.")
      .def_prop_ro("version", [](const BackendStatus& s) { return text(s.version); })
      .def_ro("devices", &BackendStatus::devices)
      .def("__repr__", [](const BackendStatus& s) {
        return text("BackendStatus(type='" + std::string(backend_key(s.type)) + "', available=" +
                    (s.available ? "True" : "False") + (s.reason.empty() ? "" : ", reason='" + s.reason + "'") + ")");
      });
}

void bind_backend_class(nb::module_& m) {
  nb::class_<Backend>(m, "Backend",
                      "One device of one backend type. Handles are cheap and share state; create them with "
                      "torsh_backend.create().")
      .def_prop_ro(
          "type", [](const Backend& b) { return std::string(backend_key(b.type())); },
          "The backend key: 'cpu', 'opencl', 'cuda', ...")
      .def_prop_ro(
          "device", [](const Backend& b) { return b.device().to_string(); }, "'opencl:0' and so on.")
      .def_prop_ro("index", [](const Backend& b) { return b.device().index; })
      .def_prop_ro(
          "name", [](const Backend& b) { return text(b.name()); }, "'OpenCL:0 (pthread-...)' and so on.")
      .def_prop_ro(
          "info", [](const Backend& b) { return b.info(); }, "DeviceInfo of this device.")
      .def_prop_ro("capabilities", &Backend::capabilities)
      .def("memory_stats", &Backend::memory_stats, "Live and peak bytes allocated through this backend.")
      .def(
          "supports",
          [](const Backend& b, const std::string& op, const DTypeArg& dtype) {
            return b.supports(op_kind(op), to_dtype(dtype));
          },
          nb::arg("op"), nb::arg("dtype") = "f32",
          "Whether the device runs an op family ('matmul', 'softmax', ...) natively for a dtype; "
          "ops it lacks fall back to the CPU with counted copies.")
      .def("synchronize", &Backend::synchronize, nb::call_guard<nb::gil_scoped_release>(),
           "Waits until all work queued on the device has finished.")
      .def("__eq__",
           [](const Backend& a, nb::handle b) {
             return nb::isinstance<Backend>(b) && nb::cast<Backend>(b).device() == a.device();
           })
      .def("__hash__", [](const Backend& b) { return std::hash<std::string>{}(b.device().to_string()); })
      .def("__repr__",
           [](const Backend& b) { return text("Backend('" + b.device().to_string() + "', '" + b.info().name + "')"); });
}

}  // namespace

void bind_backend(nb::module_& m) {
  bind_info_types(m);
  bind_backend_class(m);

  m.def(
      "available",
      [] {
        std::vector<std::string> out;
        for (auto t : Backend::available()) out.emplace_back(backend_key(t));
        return out;
      },
      "Backend keys with at least one usable device, in auto-selection order (the CPU is always there).");

  m.def(
      "create",
      [](const std::string& name, std::optional<int> index) {
        return to_backend(nb::str(device_name(name, index).c_str()));
      },
      nb::arg("name") = "auto", nb::arg("index").none() = nb::none(),
      "Creates a backend: 'auto' (the best device: CUDA > ROCm > Metal > OpenCL GPU > WebGPU > CPU, never a "
      "software device over the CPU), 'cpu', 'opencl', 'cuda', ... or 'opencl:1'; create('opencl', 1) is "
      "create('opencl:1'), and an index that contradicts the name's is an error. Raises TorshError with the "
      "reason when the backend is unavailable.");

  m.def("statuses", &backend_statuses,
        "Every backend type with its availability, the reason when unavailable, where it was loaded from and its "
        "devices.");

  m.def(
      "explain_selection",
      [](std::uint64_t min_free_bytes) {
        auto r = explain_selection(min_free_bytes);
        return std::make_pair(r.chosen.to_string(), texts(r.reasons));
      },
      nb::arg("min_free_bytes") = 0,
      "The device auto-selection picks, and one line of reasoning per backend considered.");

  m.def(
      "info", [] { return text(backend_summary()); }, "The backend summary printed by `torsh info`, as a string.");

  m.def("plugin_search_path", &plugin_search_path,
        "Directories searched for backend plugins: TORSH_BACKEND_PATH, then the folder of libtorsh.");

  m.def(
      "fallback_stats",
      [] {
        auto s = ops::fallback_stats();
        return std::map<std::string, std::uint64_t>{{"ops", s.ops}, {"copies", s.copies}, {"bytes", s.bytes}};
      },
      "How many ops fell back to the CPU because their device lacks them, and the copies that cost.");
  m.def("reset_fallback_stats", &ops::reset_fallback_stats);
}

}  // namespace torsh::py
