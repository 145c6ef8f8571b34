// One LSTM / GRU step's gates, fused: rnn_gates.wgsl, one invocation per
// element of h_out (f32; other dtypes run the gates as ops). Operands a step
// lacks are bound as h_out, which WebGPU allows (several writable bindings
// of one buffer) and the kernel never touches.
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void rnn_gates(WebGpuDevice& dev, const rt::RnnGatesArgs& a) {
  const std::int64_t rows = a.h_out.shape[0], n = rows * a.hidden;
  if (n == 0) return;
  const bool gru = a.cell == rt::RnnCell::Gru, keep = a.acts.present();
  const rt::TensorArg& none = a.h_out;
  const rt::TensorArg& gh = gru ? a.gh : none;
  const rt::TensorArg& c_out = gru ? none : a.c_out;
  const rt::TensorArg& acts = keep ? a.acts : none;
  Launch l(dev);
  l.tensor(a.gates).tensor(gh).tensor(a.state).tensor(a.h_out).tensor(c_out).tensor(acts);
  const rt::TensorArg* bound[] = {&a.gates, &gh, &a.state, &a.h_out, &c_out, &acts};
  for (std::size_t i = 0; i < 6; ++i) l.param(l.offset(i)).param(bound[i]->strides[0]);
  l.param(rows).param(a.hidden).param(gru ? 1 : 0).param(keep ? 1 : 0);
  l.run("rnn_gates", "rnn_gates_elems", n);
}

bool rnn_gates_fits(const rt::DeviceImpl& d, const rt::RnnGatesArgs& a) {
  return fits(d, {&a.gates, &a.gh, &a.state, &a.h_out, &a.c_out, &a.acts});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::RnnGates, entry<rt::OpKind::RnnGates, rnn_gates>>(gpu::kF32, rnn_gates_fits, kFitsNote);
});

}  // namespace
}  // namespace torsh::webgpu
