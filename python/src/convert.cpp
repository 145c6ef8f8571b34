// Python objects -> torsh arguments: dtypes, devices, shapes, axes, operands.
#include <nanobind/stl/string.h>

#include <cmath>
#include <cstring>
#include <string>

#include "common.hpp"

namespace torsh::py {
namespace {

std::optional<DType> dtype_from_string(std::string s) {
  if (s.rfind("torch.", 0) == 0) s = s.substr(6);
  if (s == "bool_" || s == "bool") return DType::Bool;
  if (s == "float") return DType::F32;  // torch's meaning; NumPy spells f64 "float64"
  return dtype_from_name(s);
}

bool is_scalar(nb::handle h) { return PyBool_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr()); }

bool is_array_like(nb::handle h) { return nb::hasattr(h, "__dlpack__") || PyObject_CheckBuffer(h.ptr()); }

// The values an integer dtype holds.
std::pair<double, double> int_range(DType t) {
  switch (t) {
    case DType::I8: return {-128.0, 127.0};
    case DType::U8: return {0.0, 255.0};
    case DType::I32: return {-2147483648.0, 2147483647.0};
    default: return {-9223372036854775808.0, 9223372036854775807.0};
  }
}

// A Python int meeting an integer tensor, stored exactly (no round trip
// through double) or refused when the dtype cannot hold it: NumPy 2 raises
// OverflowError there, where saturating would be a silent wrong answer.
Tensor int_scalar(nb::handle h, DType dt, Backend& b) {
  const std::int64_t iv = to_int64(h, "scalar operand");
  const auto [lo, hi] = int_range(dt);
  if (dt != DType::I64 && (static_cast<double>(iv) < lo || static_cast<double>(iv) > hi))
    raise_error(ErrorCode::InvalidArgument,
                "the Python integer " + std::to_string(iv) + " is out of bounds for " + std::string(dtype_name(dt)),
                "scalar operand", {"Cast the tensor to a wider dtype first, e.g. .cast('i64')"});
  unsigned char bytes[8] = {};
  switch (dt) {
    case DType::I8: bytes[0] = static_cast<unsigned char>(static_cast<std::int8_t>(iv)); break;
    case DType::U8: bytes[0] = static_cast<unsigned char>(iv); break;
    case DType::I32: {
      const auto v = static_cast<std::int32_t>(iv);
      std::memcpy(bytes, &v, sizeof v);
      break;
    }
    default: std::memcpy(bytes, &iv, sizeof iv); break;
  }
  return b.from_host(bytes, Shape{}, dt);
}

Tensor scalar_tensor(nb::handle h, const Tensor* like) {
  DType dt = like                    ? like->dtype()
             : PyBool_Check(h.ptr()) ? DType::Bool
             : PyLong_Check(h.ptr()) ? DType::I64
                                     : DType::F32;
  Backend b = like ? like->backend() : cpu_backend();
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr()) && is_integral(dt)) return int_scalar(h, dt, b);
  const double v = PyBool_Check(h.ptr())   ? (h.ptr() == Py_True ? 1.0 : 0.0)
                   : PyLong_Check(h.ptr()) ? static_cast<double>(to_int64(h, "scalar operand"))
                                           : nb::cast<double>(h);
  // NumPy and PyTorch would promote `int_tensor * 2.5` to floats; torsh has no
  // implicit promotion, and truncating the scalar would be a silent wrong answer.
  if (like && !is_floating(dt) && PyFloat_Check(h.ptr()) && v != std::trunc(v))
    raise_error(
        ErrorCode::DTypeMismatch,
        "the scalar " + nb::cast<std::string>(nb::repr(h)) + " meets a " + std::string(dtype_name(dt)) + " tensor",
        "scalar operand", {"Cast the tensor to a float dtype first, e.g. .cast('f32')"});
  if (like && is_integral(dt) && PyFloat_Check(h.ptr())) {
    const auto [lo, hi] = int_range(dt);
    if (!(v >= lo && v <= hi))
      raise_error(
          ErrorCode::InvalidArgument,
          "the scalar " + nb::cast<std::string>(nb::repr(h)) + " is out of bounds for " + std::string(dtype_name(dt)),
          "scalar operand", {"Cast the tensor to a wider or float dtype first"});
  }
  unsigned char bytes[8] = {};
  store_from_double(bytes, dt, v);
  return b.from_host(bytes, Shape{}, dt);
}

}  // namespace

const char* numpy_name(DType t) {
  switch (t) {
    case DType::F32: return "float32";
    case DType::F64: return "float64";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";  // NumPy itself has none (ml_dtypes adds it)
    case DType::I8: return "int8";
    case DType::U8: return "uint8";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::Bool: return "bool";
  }
  return "?";
}

Backend cpu_backend() { return Backend::create(BackendType::Cpu); }

DType to_dtype(nb::handle h) {
  if (nb::isinstance<DType>(h)) return nb::cast<DType>(h);
  std::string name;
  if (nb::isinstance<nb::str>(h))
    name = nb::cast<std::string>(h);
  else if (PyType_Check(h.ptr()))
    name = nb::cast<std::string>(h.attr("__name__"));
  else if (nb::hasattr(h, "name") && nb::isinstance<nb::str>(h.attr("name")))
    name = nb::cast<std::string>(h.attr("name"));
  else
    name = nb::cast<std::string>(nb::str(h));
  if (auto t = dtype_from_string(name)) return *t;
  raise_error(ErrorCode::InvalidArgument, "unknown or unsupported dtype '" + name + "'", "dtype",
              {"Use one of f32, f64, f16, bf16, i8, u8, i32, i64, bool (or the NumPy names)"});
}

Backend to_backend(nb::handle h) {
  if (h.is_none()) return cpu_backend();
  if (nb::isinstance<Backend>(h)) return nb::cast<Backend>(h);
  if (!nb::isinstance<nb::str>(h))
    raise_error(ErrorCode::InvalidArgument, "a device is a Backend or a string such as 'cpu' or 'opencl:0'", "device");
  const std::string s = nb::cast<std::string>(h);
  const auto colon = s.find(':');
  const std::string name = s.substr(0, colon);
  int index = 0;
  if (colon != std::string::npos) {
    try {
      std::size_t used = 0;
      index = std::stoi(s.substr(colon + 1), &used);
      if (used != s.size() - colon - 1) throw std::invalid_argument(s);
    } catch (const std::exception&) {
      raise_error(ErrorCode::InvalidArgument, "bad device index in '" + s + "'", "device",
                  {"Write the device as NAME or NAME:INDEX, e.g. 'opencl:0'"});
    }
  }
  auto type = backend_from_name(name);
  if (!type)
    raise_error(
        ErrorCode::InvalidArgument, "unknown backend '" + name + "'", "device",
        {"Use auto, cpu, cuda, rocm, metal, webgpu or opencl; torsh_backend.available() lists the usable ones"});
  return Backend::create(*type, index);
}

std::int64_t to_int64(nb::handle h, const std::string& what) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (overflow)
    raise_error(ErrorCode::OutOfRange, nb::cast<std::string>(nb::repr(h)) + " does not fit in a 64-bit signed integer",
                what, {"Use a value in [-2**63, 2**63 - 1]"});
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

std::pair<std::int64_t, std::int64_t> pair_arg(const PairArg& h, const char* what) {
  auto v = to_int_list(h.obj, what);
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  raise_error(ErrorCode::InvalidArgument, std::string(what) + " takes an int or a pair of ints", what);
}

std::vector<std::int64_t> to_int_list(nb::handle h, const char* what) {
  std::vector<std::int64_t> out;
  if (PyLong_Check(h.ptr())) {
    out.push_back(to_int64(h, what));
    return out;
  }
  if (!PySequence_Check(h.ptr()) || nb::isinstance<nb::str>(h))
    raise_error(ErrorCode::InvalidArgument, std::string(what) + " must be an int or a sequence of ints", what);
  for (nb::handle item : nb::iter(h)) {
    if (!PyLong_Check(item.ptr()) && !nb::hasattr(item, "__index__"))
      raise_error(ErrorCode::InvalidArgument, std::string(what) + " must contain ints only", what);
    out.push_back(to_int64(nb::int_(item), what));
  }
  return out;
}

Shape to_shape(nb::handle h) {
  auto dims = to_int_list(h, "shape");
  for (auto d : dims)
    if (d < 0)
      raise_error(ErrorCode::InvalidArgument, "negative dimension " + std::to_string(d) + " in a shape", "shape");
  return Shape(dims);
}

Tensor copy_of(const Tensor& t) {
  Backend b = t.backend();
  Tensor out = b.empty(t.shape(), t.dtype());
  out.copy_(t);
  return out;
}

Tensor as_tensor(const TensorLike& x, const Tensor* like) {
  nb::handle h = x.obj;
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  if (is_scalar(h)) return scalar_tensor(h, like);
  if (is_array_like(h)) return from_dlpack(h, std::nullopt, std::nullopt);
  // Nested lists and other array-likes go through NumPy, in `like`'s dtype.
  nb::module_ np = nb::module_::import_("numpy");
  nb::object arr;
  if (like && like->dtype() != DType::BF16) {
    arr = np.attr("asarray")(h, nb::arg("dtype") = numpy_name(like->dtype()));
  } else {
    arr = np.attr("asarray")(h);
    if (nb::cast<std::string>(arr.attr("dtype").attr("name")) == "float64") arr = arr.attr("astype")("float32");
  }
  Tensor t = from_dlpack(arr, std::nullopt, std::nullopt);
  if (like && like->device() != t.device()) {
    Backend b = like->backend();
    return t.to(b);
  }
  return t;
}

Tensor as_inplace_tensor(const TensorLike& x, const char* op, const std::string& arg) {
  nb::handle h = x.obj;
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  const std::string type_name = nb::cast<std::string>(nb::type_name(h.type()));
  if (!is_array_like(h))
    raise_error(ErrorCode::InvalidArgument,
                arg + " is a " + type_name + ", which " + op + " would update in a temporary copy", op,
                {"Pass a torsh Tensor or a writable NumPy array: " + std::string(op) + " updates it in place"});
  if (is_read_only_array(h))
    raise_error(ErrorCode::InvalidArgument, arg + " is a read-only " + type_name + "; " + op + " updates it in place",
                op, {"Pass a writable array (numpy.array(x) copies; or set x.flags.writeable = True if you own it)"});
  // copy=False: an in-place operand is shared or refused, never copied.
  return from_dlpack(h, std::nullopt, false);
}

std::pair<Tensor, Tensor> as_tensor_pair(const TensorLike& a, const TensorLike& b) {
  const bool a_follows = !nb::isinstance<Tensor>(a.obj) && !is_array_like(a.obj);
  if (a_follows && (nb::isinstance<Tensor>(b.obj) || is_array_like(b.obj))) {
    Tensor tb = as_tensor(b);
    Tensor ta = as_tensor(a, &tb);
    return {ta, tb};
  }
  Tensor ta = as_tensor(a);
  const bool b_follows = !nb::isinstance<Tensor>(b.obj) && !is_array_like(b.obj);
  Tensor tb = as_tensor(b, b_follows ? &ta : nullptr);
  return {ta, tb};
}

}  // namespace torsh::py
