// The Tensor class: metadata, views, copies between devices, host export and
// the arithmetic operators.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <numeric>

#include "common.hpp"

namespace torsh::py {

Tensor tensor_getitem(const Tensor& t, nb::handle key);  // index.cpp
void tensor_setitem(Tensor& t, nb::handle key, const TensorLike& value);

namespace {

using nb::arg;
using Release = nb::call_guard<nb::gil_scoped_release>;

nb::typed<nb::tuple, std::int64_t, nb::ellipsis> to_tuple(const DimVec& v) {
  nb::list l;
  for (auto x : v) l.append(x);
  return nb::borrow<nb::typed<nb::tuple, std::int64_t, nb::ellipsis>>(nb::tuple(l));
}

// reshape(2, 3), reshape((2, 3)) and reshape([2, 3]) all mean the same.
std::vector<std::int64_t> dims_arg(const nb::args& args, const char* what) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return to_int_list(args[0], what);
  return to_int_list(args, what);
}

Tensor binary(rt::BinaryOp op, const TensorLike& a, const TensorLike& b) {
  auto [x, y] = as_tensor_pair(a, b);
  nb::gil_scoped_release r;
  return ops::binary(op, x, y);
}

Tensor& inplace(rt::BinaryOp op, Tensor& a, const TensorLike& b) {
  Tensor y = as_tensor(b, &a);
  nb::gil_scoped_release r;
  ops::binary_(op, a, y);
  return a;
}

Tensor to_device(const Tensor& t, Backend b) {
  if (b.device() == t.device()) return t;
  nb::gil_scoped_release r;
  return t.to(b);
}

nb::object item(const Tensor& t) {
  if (t.numel() != 1)
    raise_error(ErrorCode::InvalidArgument,
                "item() needs exactly one element, the tensor has " + std::to_string(t.numel()), "item");
  auto bytes = t.contiguous().to_host_bytes();
  // Integers never pass through a double, which holds only 53 of i64's bits.
  if (t.dtype() == DType::Bool) return nb::bool_(load_as_int64(bytes.data(), t.dtype()) != 0);
  if (is_integral(t.dtype())) return nb::int_(load_as_int64(bytes.data(), t.dtype()));
  return nb::float_(load_as_double(bytes.data(), t.dtype()));
}

// Host copy for device tensors; the zero-copy view for CPU tensors.
nb::object to_numpy(const Tensor& t) { return numpy_view(to_device(t, cpu_backend())); }

std::string repr(const Tensor& t) {
  std::string s = "Tensor(" + t.describe();
  // Values only for host tensors: a repr must never start a device transfer.
  if (t.device().type == BackendType::Cpu && t.dtype() != DType::BF16 && t.numel() <= 1000) {
    nb::object text = nb::module_::import_("numpy").attr("array2string")(numpy_view(t), nb::arg("separator") = ", ");
    s += ",\n       " + nb::cast<std::string>(nb::str(text).attr("replace")("\n", "\n       "));
  }
  return s + ")";
}

void bind_metadata(nb::class_<Tensor>& c) {
  c.def_prop_ro(
       "shape", [](const Tensor& t) { return to_tuple(t.shape().dims()); }, "Dimensions, as a tuple.")
      .def_prop_ro(
          "strides", [](const Tensor& t) { return to_tuple(t.strides()); },
          "Strides in elements (NumPy's .strides counts bytes: multiply by itemsize).")
      .def_prop_ro("dtype", &Tensor::dtype)
      .def_prop_ro(
          "device", [](const Tensor& t) { return t.device().to_string(); }, "'cpu:0', 'opencl:0', ...")
      .def_prop_ro("backend", &Tensor::backend, "The Backend of the device holding the data.")
      .def_prop_ro("ndim", &Tensor::ndim)
      .def_prop_ro("size", &Tensor::numel, "Number of elements.")
      .def_prop_ro("nbytes", &Tensor::nbytes)
      .def_prop_ro("itemsize", [](const Tensor& t) { return dtype_size(t.dtype()); })
      .def_prop_ro("offset", &Tensor::offset, "Offset of the first element in its buffer, in elements.")
      .def_prop_ro("is_contiguous", &Tensor::is_contiguous)
      .def("__len__",
           [](const Tensor& t) {
             if (t.ndim() == 0) throw nb::type_error("len() of a 0-d tensor");
             return t.shape()[0];
           })
      .def("__repr__", &repr)
      .def("__str__", &repr);
}

void bind_views(nb::class_<Tensor>& c) {
  c.def(
       "reshape", [](const Tensor& t, nb::args shape) { return t.reshape(dims_arg(shape, "reshape")); },
       nb::sig("def reshape(self, *shape: int | collections.abc.Sequence[int]) -> Tensor"),
       "A view with another shape (one dimension may be -1); needs a contiguous tensor.")
      .def(
          "transpose",
          [](const Tensor& t, nb::args axes) {
            if (axes.size() == 0) {
              std::vector<std::int64_t> order(t.ndim());
              std::iota(order.rbegin(), order.rend(), 0);
              return t.permute(order);
            }
            return t.permute(dims_arg(axes, "transpose"));
          },
          nb::sig("def transpose(self, *axes: int | collections.abc.Sequence[int]) -> Tensor"),
          "NumPy's transpose: axes reversed, or permuted as given. A view.")
      .def(
          "permute", [](const Tensor& t, nb::args axes) { return t.permute(dims_arg(axes, "permute")); },
          nb::sig("def permute(self, *axes: int | collections.abc.Sequence[int]) -> Tensor"),
          "A view with the axes in the given order.")
      .def("swapaxes", &Tensor::transpose, arg("axis1"), arg("axis2"), "A view with two axes exchanged.")
      .def_prop_ro(
          "T",
          [](const Tensor& t) {
            std::vector<std::int64_t> order(t.ndim());
            std::iota(order.rbegin(), order.rend(), 0);
            return t.permute(order);
          },
          "All axes reversed (a view).")
      .def_prop_ro(
          "mT", [](const Tensor& t) { return t.transpose(-2, -1); }, "The last two axes swapped (a view).")
      .def("unsqueeze", &Tensor::unsqueeze, arg("axis"), "A view with a new axis of length 1.")
      .def("expand_dims", &Tensor::unsqueeze, arg("axis"), "Same as unsqueeze (NumPy's name).")
      .def(
          "broadcast_to", [](const Tensor& t, const ShapeArg& shape) { return t.broadcast_to(to_shape(shape)); },
          arg("shape"), "A broadcast view (stride 0 on the new dimensions).")
      .def("__getitem__", &tensor_getitem, nb::sig("def __getitem__(self, key: typing.Any, /) -> Tensor"),
           "Basic indexing: ints, slices (any step), None and Ellipsis give views.")
      .def("__setitem__", &tensor_setitem,
           nb::sig("def __setitem__(self, key: typing.Any, value: Tensor | numpy.typing.ArrayLike, /) -> None"),
           "Copies a tensor, array or scalar (broadcast, cast) into the indexed view.");
}

void bind_copies(nb::class_<Tensor>& c) {
  c.def(
       "to", [](const Tensor& t, const DeviceArg& device) { return to_device(t, to_backend(device)); }, arg("device"),
       "A copy on another device ('cpu', 'opencl', a Backend); the tensor itself when already there.")
      .def(
          "cpu", [](const Tensor& t) { return to_device(t, cpu_backend()); }, "Same as to('cpu').")
      .def("contiguous", &Tensor::contiguous, Release(),
           "A row-major copy, or the tensor itself when already row-major.")
      .def(
          "clone",
          [](const Tensor& t) {
            nb::gil_scoped_release r;
            return copy_of(t);
          },
          "A row-major copy on the same device.")
      .def(
          "cast",
          [](const Tensor& t, const DTypeArg& dtype) {
            DType d = to_dtype(dtype);
            nb::gil_scoped_release r;
            return t.cast(d);
          },
          arg("dtype"), "A copy converted to another dtype on the same device.")
      .def(
          "astype",
          [](const Tensor& t, const DTypeArg& dtype) {
            DType d = to_dtype(dtype);
            nb::gil_scoped_release r;
            return t.cast(d);
          },
          arg("dtype"), "Same as cast (NumPy's name).")
      .def(
          "copy_",
          [](Tensor& t, const TensorLike& src) -> Tensor& {
            tensor_setitem(t, nb::ellipsis(), src);
            return t;
          },
          arg("src"), nb::rv_policy::none, "Copies src into this tensor in place (any device, broadcast, cast).")
      .def(
          "fill_",
          [](Tensor& t, const TensorLike& value) -> Tensor& {
            tensor_setitem(t, nb::ellipsis(), value);
            return t;
          },
          arg("value"), nb::rv_policy::none, "Fills the tensor with a scalar in place.")
      .def("numpy", &to_numpy, nb::sig("def numpy(self) -> numpy.typing.NDArray[typing.Any]"),
           "A NumPy array. A CPU tensor is shared without a copy (writes are seen by both); a device tensor is "
           "copied to the host (explicitly, by this call).")
      .def(
          "__array__",
          [](const Tensor& t, nb::handle dtype, std::optional<bool> copy) {
            if (copy == false && t.device().type != BackendType::Cpu)
              raise_error(ErrorCode::InvalidArgument, "copy=False but the tensor is on " + t.device().to_string(),
                          "__array__", {"Use .numpy(), which copies device tensors to the host"});
            nb::object a = to_numpy(t);
            if (!dtype.is_none())
              a = a.attr("astype")(dtype, nb::arg("copy") = copy != false);
            else if (copy == true)
              a = a.attr("copy")();
            return a;
          },
          arg("dtype").none() = nb::none(), arg("copy").none() = nb::none(),
          nb::sig("def __array__(self, dtype: numpy.typing.DTypeLike | None = None, copy: bool | None = None) "
                  "-> numpy.typing.NDArray[typing.Any]"))
      .def(
          "tolist", [](const Tensor& t) { return to_numpy(t).attr("tolist")(); },
          nb::sig("def tolist(self) -> typing.Any"), "Nested Python lists (a host copy).")
      .def("item", &item, nb::sig("def item(self) -> int | float | bool"), "The single element as a Python scalar.")
      .def("__float__", [](const Tensor& t) { return nb::cast<double>(nb::float_(item(t))); })
      .def("__int__", [](const Tensor& t) { return nb::int_(item(t)); })
      .def("__bool__", [](const Tensor& t) { return nb::cast<double>(nb::float_(item(t))) != 0.0; });
}

void bind_operators(nb::class_<Tensor>& c) {
  using B = rt::BinaryOp;
  auto fwd = [](B op) { return [op](const TensorLike& a, const TensorLike& b) { return binary(op, a, b); }; };
  auto rev = [](B op) { return [op](const TensorLike& a, const TensorLike& b) { return binary(op, b, a); }; };
  auto inp = [](B op) { return [op](Tensor& a, const TensorLike& b) -> Tensor& { return inplace(op, a, b); }; };
  const std::pair<const char*, B> table[] = {
      {"add", B::Add}, {"sub", B::Sub}, {"mul", B::Mul}, {"truediv", B::Div}, {"pow", B::Pow}};
  for (const auto& [name, op] : table) {
    const std::string n = name;
    c.def(("__" + n + "__").c_str(), fwd(op), nb::is_operator());
    c.def(("__r" + n + "__").c_str(), rev(op), nb::is_operator());
    c.def(("__i" + n + "__").c_str(), inp(op), nb::is_operator(), nb::rv_policy::none);
  }
  c.def(
       "__matmul__",
       [](const TensorLike& a, const TensorLike& b) {
         auto [x, y] = as_tensor_pair(a, b);
         nb::gil_scoped_release r;
         return ops::matmul(x, y);
       },
       nb::is_operator())
      .def(
          "__rmatmul__",
          [](const TensorLike& a, const TensorLike& b) {
            auto [y, x] = as_tensor_pair(b, a);
            nb::gil_scoped_release r;
            return ops::matmul(y, x);
          },
          nb::is_operator())
      .def(
          "__neg__", [](const Tensor& t) { return ops::neg(t); }, Release())
      .def(
          "__abs__", [](const Tensor& t) { return ops::abs(t); }, Release());
}

// Creation functions: `device` is None (the CPU), a name or a Backend.
void bind_creation(nb::module_& m) {
  m.def(
      "empty",
      [](const ShapeArg& shape, const DTypeArg& dtype, const DeviceArg& device) {
        Backend b = to_backend(device);
        return b.empty(to_shape(shape), to_dtype(dtype));
      },
      arg("shape"), arg("dtype") = "f32", arg("device").none() = nb::none(), "An uninitialised tensor.");
  m.def(
      "zeros",
      [](const ShapeArg& shape, const DTypeArg& dtype, const DeviceArg& device) {
        Backend b = to_backend(device);
        return b.zeros(to_shape(shape), to_dtype(dtype));
      },
      arg("shape"), arg("dtype") = "f32", arg("device").none() = nb::none(), "A tensor of zeros.");
  m.def(
      "full",
      [](const ShapeArg& shape, const TensorLike& value, const DTypeArg& dtype, const DeviceArg& device) {
        Backend b = to_backend(device);
        Tensor t = b.empty(to_shape(shape), to_dtype(dtype));
        tensor_setitem(t, nb::ellipsis(), value);
        return t;
      },
      arg("shape"), arg("fill_value"), arg("dtype") = "f32", arg("device").none() = nb::none(),
      "A tensor filled with one value.");
}

}  // namespace

void bind_tensor(nb::module_& m) {
  nb::class_<Tensor> c(m, "Tensor",
                       "A typed, shaped, strided view of device memory. Views share memory; ops return new tensors. "
                       "Create tensors with zeros/empty/full/rand/randn, asarray, or from_dlpack.");
  bind_metadata(c);
  bind_views(c);
  bind_copies(c);
  bind_operators(c);
  bind_creation(m);
}

}  // namespace torsh::py
