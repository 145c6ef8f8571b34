#pragma once
// Shared by the binding files: argument conversions from Python objects to
// torsh types, and the binder of each file.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "torsh/torsh.hpp"

namespace nb = nanobind;

namespace torsh::py {

// Anything an op accepts as an operand: a Tensor, a DLPack producer or
// array-like (NumPy, PyTorch, nested lists), or a Python scalar. Converted in
// the op body (as_tensor) so that conversion errors surface as TorshError.
struct TensorLike {
  nb::object obj;
};
// Arguments converted by the functions below; the wrappers give the stubs
// their precise types and let every spelling reach the converter.
struct DTypeArg {
  nb::object obj;
};
struct DeviceArg {
  nb::object obj;
};
struct ShapeArg {
  nb::object obj;
};
struct AxisArg {
  nb::object obj;
};
struct PairArg {
  nb::object obj;
};
// An int8 weight operand: an IntegerWeight (prepared once) or anything a
// TensorLike takes.
struct WeightLike {
  nb::object obj;
};

// DType, "f32"/"float32", numpy.float32, numpy.dtype("f4"), torch.float32.
DType to_dtype(nb::handle h);
// The NumPy spelling of a dtype ("float32").
const char* numpy_name(DType t);
// None (the CPU), "cpu", "opencl", "opencl:1", "auto", or a Backend.
Backend to_backend(nb::handle h);
Backend cpu_backend();
// An int or a sequence of ints.
Shape to_shape(nb::handle h);
inline DType to_dtype(const DTypeArg& a) { return to_dtype(a.obj); }
inline Backend to_backend(const DeviceArg& a) { return to_backend(a.obj); }
inline Shape to_shape(const ShapeArg& a) { return to_shape(a.obj); }
std::vector<std::int64_t> to_int_list(nb::handle h, const char* what);
// An int applies to both spatial dimensions; a pair gives (h, w).
std::pair<std::int64_t, std::int64_t> pair_arg(const PairArg& h, const char* what);
// A Python int (or __index__ object) as int64; OutOfRange naming `what` when it does not fit.
std::int64_t to_int64(nb::handle h, const std::string& what);
// C++ text that may hold bytes from outside (driver strings, plugin errors,
// paths) as a Python str: invalid UTF-8 becomes U+FFFD instead of raising.
nb::str text(const std::string& s);

// Operand conversion. Scalars and lists take `like`'s dtype and device when
// given (f32 / i64 / bool on the CPU otherwise); arrays keep their own dtype.
Tensor as_tensor(const TensorLike& x, const Tensor* like = nullptr);
// A row-major copy of t on its device (Tensor.clone; the copies bindings keep).
Tensor copy_of(const Tensor& t);
// Two operands of an elementwise op: a scalar side follows the tensor side.
std::pair<Tensor, Tensor> as_tensor_pair(const TensorLike& a, const TensorLike& b);

// An operand an op writes in place (adam_step's params, batch_norm's running
// statistics): a Tensor or a writable array shared without a copy. A read-only
// array, a list or a scalar would take the update into a hidden copy, so they
// raise InvalidArgument naming `op` and `arg`.
Tensor as_inplace_tensor(const TensorLike& x, const char* op, const std::string& arg);

// DLPack import (dlpack.cpp). copy: None copies only when needed (read-only
// producer, another device requested), False never copies, True always does.
Tensor from_dlpack(nb::handle obj, std::optional<Backend> device, std::optional<bool> copy);
// True for an array-like that exports only read-only memory (NumPy with writeable=False).
bool is_read_only_array(nb::handle obj);
// A zero-copy NumPy view of a CPU tensor (the view keeps the tensor's buffer alive).
nb::object numpy_view(const Tensor& t);
// The DLPack device of a tensor: (device_type, device_id).
std::pair<int, int> dlpack_device(const Tensor& t);

// Wraps host memory of an imported array as a CPU tensor that keeps the array
// alive (host_buffer.cpp). `base` is the lowest byte the view reaches; offset
// and strides count elements.
Tensor wrap_host_memory(void* base, std::size_t bytes, DType dtype, const Shape& shape, const Strides& strides,
                        std::int64_t offset, nb::ndarray<nb::ro> keep);

[[noreturn]] void raise_error(ErrorCode code, const std::string& msg, const std::string& op,
                              std::vector<std::string> suggestions = {});

void bind_errors(nb::module_& m);
void bind_backend(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_dlpack(nb::module_& m);
void bind_ops_math(nb::module_& m);
void bind_ops_nn(nb::module_& m);
void bind_ops_quant(nb::module_& m);
void bind_sparse(nb::module_& m);
void bind_rnn(nb::module_& m);
void bind_fft(nb::module_& m);
void bind_model(nb::module_& m);
void bind_kernel(nb::module_& m);

}  // namespace torsh::py

namespace nanobind::detail {

// Casters that accept any object (conversion and its errors happen in the
// function body) and name the accepted types for the stubs.
#define TORSH_PY_OBJECT_CASTER(Type, Name)                                                               \
  template <>                                                                                            \
  struct type_caster<Type> {                                                                             \
    NB_TYPE_CASTER(Type, const_name(Name))                                                               \
    bool from_python(handle src, uint8_t, cleanup_list*) noexcept {                                      \
      value.obj = borrow(src);                                                                           \
      return true;                                                                                       \
    }                                                                                                    \
    static handle from_cpp(const Type& v, rv_policy, cleanup_list*) noexcept { return v.obj.inc_ref(); } \
  };

TORSH_PY_OBJECT_CASTER(torsh::py::TensorLike, "Tensor | numpy.typing.ArrayLike")
TORSH_PY_OBJECT_CASTER(torsh::py::DTypeArg, "DType | numpy.typing.DTypeLike")
TORSH_PY_OBJECT_CASTER(torsh::py::DeviceArg, "Backend | str")
TORSH_PY_OBJECT_CASTER(torsh::py::ShapeArg, "int | collections.abc.Sequence[int]")
TORSH_PY_OBJECT_CASTER(torsh::py::AxisArg, "int | collections.abc.Sequence[int]")
TORSH_PY_OBJECT_CASTER(torsh::py::PairArg, "int | tuple[int, int]")
TORSH_PY_OBJECT_CASTER(torsh::py::WeightLike, "IntegerWeight | Tensor | numpy.typing.ArrayLike")

#undef TORSH_PY_OBJECT_CASTER

}  // namespace nanobind::detail
