// torsh_backend._core: the extension module. torsh_backend/__init__.py
// re-exports it with the pure-Python helpers.
#include "common.hpp"

namespace torsh::py {
namespace {

void bind_dtype(nb::module_& m) {
  nb::enum_<DType>(m, "DType",
                   "Element types. Functions taking a dtype also accept 'f32', 'float32', numpy.float32, ...")
      .value("f32", DType::F32)
      .value("f64", DType::F64)
      .value("f16", DType::F16)
      .value("bf16", DType::BF16)
      .value("i8", DType::I8)
      .value("u8", DType::U8)
      .value("i32", DType::I32)
      .value("i64", DType::I64)
      .value("bool", DType::Bool);
  m.def(
      "dtype", [](const DTypeArg& d) { return to_dtype(d); }, nb::arg("d"),
      "The DType of any spelling: DType.f32, 'f32', 'float32', numpy.float32, numpy.dtype('f4'), torch.float32.");
  m.def(
      "device", [](const DeviceArg& d) { return to_backend(d); }, nb::arg("d").none(),
      "The Backend of a device spelling: None (the CPU), 'cpu', 'opencl', 'opencl:1', 'auto' or a Backend.");
}

}  // namespace
}  // namespace torsh::py

NB_MODULE(_core, m) {
  using namespace torsh::py;
  m.doc() = "torsh-backend: one API over the compute devices of a machine (CPU, OpenCL, CUDA, ...).";
  m.attr("__version__") = TORSH_VERSION;
  bind_errors(m);
  bind_dtype(m);
  bind_backend(m);
  bind_tensor(m);
  bind_dlpack(m);
  bind_ops_math(m);
  bind_ops_nn(m);
  bind_ops_quant(m);
  bind_sparse(m);
  bind_rnn(m);
  bind_fft(m);
  bind_model(m);
  bind_kernel(m);
}
