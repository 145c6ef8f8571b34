// NumPy basic indexing on tensors: every result is a view built from the
// parent's buffer with new shape, strides and offset (the Tensor constructor
// re-checks that the view stays inside the buffer).
#include <nanobind/stl/string.h>

#include "common.hpp"

namespace torsh::py {
namespace {

bool is_index(nb::handle h) { return PyLong_Check(h.ptr()) || PyIndex_Check(h.ptr()); }

nb::tuple normalise_key(nb::handle key) {
  if (nb::isinstance<nb::tuple>(key)) return nb::borrow<nb::tuple>(key);
  return nb::make_tuple(key);
}

}  // namespace

Tensor tensor_getitem(const Tensor& t, nb::handle key_obj) {
  nb::tuple key = normalise_key(key_obj);
  std::size_t consumed = 0, ellipses = 0;
  for (nb::handle k : key) {
    if (k.is(nb::ellipsis()))
      ellipses++;
    else if (!k.is_none())
      consumed++;
  }
  if (ellipses > 1) throw nb::index_error("an index can only have a single ellipsis ('...')");
  if (consumed > t.ndim())
    throw nb::index_error(("too many indices: the tensor has " + std::to_string(t.ndim()) + " dimensions but " +
                           std::to_string(consumed) + " were indexed")
                              .c_str());
  std::vector<std::int64_t> dims;
  Strides strides;
  std::int64_t offset = t.offset();
  std::size_t axis = 0;
  for (nb::handle k : key) {
    if (k.is_none()) {
      dims.push_back(1);
      strides.push_back(0);
    } else if (k.is(nb::ellipsis())) {
      for (std::size_t n = t.ndim() - consumed; n > 0; --n, ++axis) {
        dims.push_back(t.shape()[axis]);
        strides.push_back(t.strides()[axis]);
      }
    } else if (PySlice_Check(k.ptr())) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(k.ptr(), &start, &stop, &step) < 0) throw nb::python_error();
      const Py_ssize_t len = PySlice_AdjustIndices(t.shape()[axis], &start, &stop, step);
      dims.push_back(len);
      strides.push_back(t.strides()[axis] * step);
      if (len > 0) offset += start * t.strides()[axis];
      ++axis;
    } else if (is_index(k)) {
      // An index beyond int64 is out of bounds like any other (IndexError, as NumPy; it also ends iteration).
      nb::int_ py_index(k);
      int overflow = 0;
      const std::int64_t i = PyLong_AsLongLongAndOverflow(py_index.ptr(), &overflow);
      const std::int64_t n = t.shape()[axis];
      if (overflow || i < -n || i >= n)
        throw nb::index_error(("index " + nb::cast<std::string>(nb::str(py_index)) + " is out of bounds for axis " +
                               std::to_string(axis) + " with size " + std::to_string(n))
                                  .c_str());
      offset += (i < 0 ? i + n : i) * t.strides()[axis];
      ++axis;
    } else {
      const std::string type_name = nb::cast<std::string>(nb::type_name(k.type()));
      raise_error(ErrorCode::Unsupported,
                  "index of type " + type_name + ": only ints, slices, None and ... index tensors", "__getitem__",
                  {"Index the NumPy view (tensor.numpy()) for advanced indexing"});
    }
  }
  for (; axis < t.ndim(); ++axis) {
    dims.push_back(t.shape()[axis]);
    strides.push_back(t.strides()[axis]);
  }
  return Tensor(t.buffer(), t.dtype(), Shape(dims), strides, offset);
}

void tensor_setitem(Tensor& t, nb::handle key, const TensorLike& value) {
  Tensor dst = tensor_getitem(t, key);
  Tensor src = as_tensor(value, &dst);
  nb::gil_scoped_release r;
  if (src.dtype() != dst.dtype()) src = src.cast(dst.dtype());
  if (src.shape() != dst.shape()) src = src.broadcast_to(dst.shape());
  dst.copy_(src);
}

}  // namespace torsh::py
