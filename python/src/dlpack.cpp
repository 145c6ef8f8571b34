// DLPack exchange with NumPy, PyTorch and any other producer/consumer.
// Host memory crosses without a copy in both directions; device memory never
// crosses implicitly: the caller asks for the copy (.to("cpu"), .numpy(),
// dl_device=(1, 0)), so no hidden transfer hides in an innocent-looking call.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <algorithm>

#include "common.hpp"

namespace torsh::py {
namespace {

using dl_code = nb::dlpack::dtype_code;

std::optional<DType> from_dl(nb::dlpack::dtype t) {
  if (t.lanes != 1) return std::nullopt;
  switch (static_cast<dl_code>(t.code)) {
    case dl_code::Float:
      if (t.bits == 32) return DType::F32;
      if (t.bits == 64) return DType::F64;
      if (t.bits == 16) return DType::F16;
      break;
    case dl_code::Bfloat:
      if (t.bits == 16) return DType::BF16;
      break;
    case dl_code::Int:
      if (t.bits == 8) return DType::I8;
      if (t.bits == 32) return DType::I32;
      if (t.bits == 64) return DType::I64;
      break;
    case dl_code::UInt:
      if (t.bits == 8) return DType::U8;
      break;
    case dl_code::Bool:
      if (t.bits == 8) return DType::Bool;
      break;
    default: break;
  }
  return std::nullopt;
}

nb::dlpack::dtype to_dl(DType t) {
  nb::dlpack::dtype d{};
  d.lanes = 1;
  d.bits = static_cast<std::uint8_t>(dtype_size(t) * 8);
  switch (t) {
    case DType::F32:
    case DType::F64:
    case DType::F16: d.code = static_cast<std::uint8_t>(dl_code::Float); break;
    case DType::BF16: d.code = static_cast<std::uint8_t>(dl_code::Bfloat); break;
    case DType::I8:
    case DType::I32:
    case DType::I64: d.code = static_cast<std::uint8_t>(dl_code::Int); break;
    case DType::U8: d.code = static_cast<std::uint8_t>(dl_code::UInt); break;
    case DType::Bool: d.code = static_cast<std::uint8_t>(dl_code::Bool); break;
  }
  return d;
}

// Host-addressable DLPack devices: CPU, CUDA pinned host, ROCm pinned host.
bool is_host_device(int type) { return type == 1 || type == 3 || type == 11; }

Tensor clone(const Tensor& t) {
  Backend b = t.backend();
  Tensor out = b.empty(t.shape(), t.dtype());
  out.copy_(t);
  return out;
}

// Imports as the producer lays the data out (no conversion); with nb::ro in
// Flags read-only producers are accepted too.
template <class... Flags>
std::optional<nb::ndarray<Flags...>> try_import(nb::handle obj) {
  nb::ndarray<Flags...> arr;
  if (nb::try_cast(obj, arr, false)) return arr;
  if (PyErr_Occurred()) PyErr_Clear();
  return std::nullopt;
}

Tensor import_ndarray(const nb::ndarray<nb::ro>& arr) {
  const std::string op = "from_dlpack";
  if (!is_host_device(arr.device_type()))
    raise_error(ErrorCode::Unsupported,
                "the array lives on DLPack device type " + std::to_string(arr.device_type()) +
                    "; torsh imports host memory only",
                op, {"Move it to the host first (for PyTorch: tensor.cpu()), then copy it to a device with .to()"});
  const auto dt = from_dl(arr.dtype());
  if (!dt)
    raise_error(ErrorCode::DTypeMismatch,
                "DLPack dtype (code " + std::to_string(arr.dtype().code) + ", " + std::to_string(arr.dtype().bits) +
                    " bits) has no torsh equivalent",
                op, {"Convert it to one of float32/64/16, bfloat16, int8/32/64, uint8, bool first"});
  const std::size_t nd = arr.ndim();
  if (nd > torsh::kMaxDims)
    raise_error(
        ErrorCode::InvalidArgument,
        "the array has " + std::to_string(nd) + " dimensions; tensors have at most " + std::to_string(torsh::kMaxDims),
        op, {"Reshape it to fewer dimensions first"});
  const auto item = static_cast<std::int64_t>(dtype_size(*dt));
  std::vector<std::int64_t> dims(nd);
  Strides strides(nd);
  std::int64_t lo = 0, hi = 0, numel = 1;
  for (std::size_t i = 0; i < nd; ++i) {
    dims[i] = static_cast<std::int64_t>(arr.shape(i));
    strides[i] = arr.stride(i);
    numel *= dims[i];
    if (dims[i] > 0) (strides[i] < 0 ? lo : hi) += (dims[i] - 1) * strides[i];
  }
  // The buffer spans exactly the elements the view reaches; negative strides
  // put the first logical element above the buffer's base.
  auto* first = static_cast<char*>(const_cast<void*>(static_cast<const void*>(arr.data())));
  char* base = numel ? first + lo * item : first;
  const auto bytes = numel ? static_cast<std::size_t>((hi - lo + 1) * item) : 0;
  return wrap_host_memory(base, bytes, *dt, Shape(dims), strides, numel ? -lo : 0, arr);
}

}  // namespace

std::pair<int, int> dlpack_device(const Tensor& t) {
  const Device d = t.device();
  switch (d.type) {
    case BackendType::Cpu: return {1, 0};
    case BackendType::Cuda: return {2, d.index};
    case BackendType::OpenCl: return {4, d.index};
    case BackendType::Metal: return {8, d.index};
    case BackendType::Rocm: return {10, d.index};
    case BackendType::WebGpu: return {15, d.index};
    case BackendType::Auto: break;
  }
  return {0, 0};
}

bool is_read_only_array(nb::handle obj) {
  return !nb::isinstance<Tensor>(obj) && !try_import<>(obj) && try_import<nb::ro>(obj);
}

Tensor from_dlpack(nb::handle obj, std::optional<Backend> device, std::optional<bool> copy) {
  Tensor t;
  bool copied = false;
  if (nb::isinstance<Tensor>(obj)) {
    t = nb::cast<Tensor>(obj);
  } else if (auto w = try_import<>(obj)) {
    t = import_ndarray(nb::ndarray<nb::ro>(*w));
  } else if (auto r = try_import<nb::ro>(obj)) {
    // torsh tensors are writable, so a read-only producer is copied.
    if (copy == false)
      raise_error(ErrorCode::InvalidArgument, "the array is read-only and copy=False forbids the copy it needs",
                  "from_dlpack", {"Pass copy=None (the default) or a writable array"});
    t = clone(import_ndarray(*r));
    copied = true;
  } else if (nb::hasattr(obj, "__dlpack__")) {
    // A producer that refuses to export (a PyTorch tensor that requires grad,
    // a byte-swapped NumPy array) says why; pass its reason on.
    std::string reason = "its __dlpack__ returned nothing nanobind can import";
    try {
      obj.attr("__dlpack__")();
    } catch (nb::python_error& e) {
      reason = e.what();
    }
    raise_error(ErrorCode::InvalidArgument, "DLPack import failed: " + reason, "from_dlpack",
                {"Make the array exportable first (for PyTorch: tensor.detach().cpu())"});
  } else {
    const std::string type_name = nb::cast<std::string>(nb::type_name(obj.type()));
    raise_error(ErrorCode::InvalidArgument,
                "cannot import a " + type_name + ": it implements neither __dlpack__ nor the buffer protocol",
                "from_dlpack",
                {"Pass a NumPy array, a PyTorch CPU tensor or another DLPack producer",
                 "For nested lists use torsh_backend.asarray()"});
  }
  if (device && device->device() != t.device()) {
    if (copy == false)
      raise_error(ErrorCode::InvalidArgument,
                  "the array is on " + t.device().to_string() + ", device " + device->device().to_string() +
                      " needs a copy and copy=False forbids it",
                  "from_dlpack");
    Backend b = *device;
    return t.to(b);
  }
  if (copy == true && !copied) return clone(t);
  return t;
}

namespace {

nb::ndarray<nb::array_api> host_array(const Tensor& t) {
  void* p = t.device().type == BackendType::Cpu ? t.buffer().host_ptr() : nullptr;
  if (!p)
    raise_error(ErrorCode::Unsupported,
                "DLPack export of a tensor on " + t.device().to_string() + ": only host (CPU) memory is shared",
                "__dlpack__", {"Copy it to the host explicitly with .to('cpu') (or .numpy())"});
  const std::size_t nd = t.ndim();
  std::vector<std::size_t> shape(nd);
  std::vector<std::int64_t> strides(nd);
  for (std::size_t i = 0; i < nd; ++i) {
    shape[i] = static_cast<std::size_t>(t.shape()[i]);
    strides[i] = t.strides()[i];
  }
  // The capsule owns a tensor handle, which keeps the buffer alive as long as any consumer's view.
  nb::capsule owner(new Tensor(t), [](void* q) noexcept { delete static_cast<Tensor*>(q); });
  char* data = static_cast<char*>(p) + t.offset() * static_cast<std::int64_t>(dtype_size(t.dtype()));
  return nb::ndarray<nb::array_api>(data, nd, shape.data(), owner, strides.data(), to_dl(t.dtype()),
                                    nb::device::cpu::value, 0);
}

bool is_cpu_request(nb::handle dl_device) {
  if (dl_device.is_none()) return false;
  auto d = nb::cast<std::pair<int, int>>(dl_device);
  return d.first == 1 && d.second == 0;
}

nb::object dlpack(const Tensor& t, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                  std::optional<bool> copy) {
  Tensor src = t;
  const bool on_host = t.device().type == BackendType::Cpu;
  if (!on_host && is_cpu_request(dl_device) && copy != false) {
    Backend cpu = cpu_backend();
    src = t.to(cpu);  // the consumer asked for the host explicitly
  } else if (copy == true) {
    src = clone(t);
  }
  nb::object arr = nb::cast(host_array(src), nb::rv_policy::reference);
  // nanobind's array implements the protocol (versioned capsules, flags); its
  // copy=True is refused because the copy was made above already.
  return arr.attr("__dlpack__")(nb::arg("stream") = stream, nb::arg("max_version") = max_version,
                                nb::arg("dl_device") = src.device() == t.device() ? dl_device : nb::none());
}

}  // namespace

nb::object numpy_view(const Tensor& t) {
  if (t.dtype() == DType::BF16)
    raise_error(ErrorCode::DTypeMismatch, "NumPy has no bfloat16", "numpy", {"Call .cast('f32') first"});
  nb::object arr = nb::cast(host_array(t), nb::rv_policy::reference);
  return nb::module_::import_("numpy").attr("asarray")(arr);
}

void bind_dlpack(nb::module_& m) {
  auto cls = nb::type<Tensor>();
  nb::handle(cls).attr("__dlpack__") = nb::cpp_function(
      &dlpack, nb::is_method(), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      nb::arg("max_version").none() = nb::none(), nb::arg("dl_device").none() = nb::none(),
      nb::arg("copy").none() = nb::none(),
      nb::sig("def __dlpack__(self, *, stream: typing.Any = None, max_version: tuple[int, int] | None = None, "
              "dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> typing.Any"),
      "Exports the tensor through DLPack. A CPU tensor is shared without a copy; a device tensor is copied "
      "only when the consumer asks for the host (dl_device=(1, 0)), and raises TorshError otherwise.");
  nb::handle(cls).attr("__dlpack_device__") =
      nb::cpp_function(&dlpack_device, nb::is_method(), "The DLPack (device_type, device_id) of the tensor's memory.");

  m.def(
      "from_dlpack",
      [](nb::handle x, const DeviceArg& device, std::optional<bool> copy) {
        std::optional<Backend> b;
        if (!device.obj.is_none()) b = to_backend(device);
        return from_dlpack(x, b, copy);
      },
      nb::arg("x"), nb::kw_only(), nb::arg("device").none() = nb::none(), nb::arg("copy").none() = nb::none(),
      nb::sig("def from_dlpack(x: typing.Any, *, device: Backend | str | None = None, copy: bool | None = None) "
              "-> Tensor"),
      "A tensor sharing the memory of a DLPack producer (NumPy array, PyTorch CPU tensor, ...): writes through "
      "either side are seen by the other. copy=None copies only when needed (a read-only producer, another "
      "device requested), copy=False never copies, copy=True always does.");
}

}  // namespace torsh::py
