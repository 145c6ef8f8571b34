// One LSTM / GRU step's gates, fused: rnn_gates.kern.h's rnn_gates_f32, one
// thread per element of h_out (grid-stride; f32, other dtypes run the gates
// as ops).
#include "launch.hpp"

#include "backends/gpu/kernels/rnn_gates.kern.h"

namespace torsh::cuda {
namespace {

const float* in_of(const rt::TensorArg& t) { return static_cast<const float*>(ptr_of(*t.buffer)); }
float* out_of(const rt::TensorArg& t) { return static_cast<float*>(ptr_of(*t.buffer)); }

void rnn_gates(CudaStream& s, const rt::RnnGatesArgs& a) {
  const std::int64_t rows = a.h_out.shape[0], n = rows * a.hidden;
  if (n == 0) return;
  const auto [grid, block] = grid_1d(s.device(), n);
  const bool gru = a.cell == rt::RnnCell::Gru, keep = a.acts.present();
  const rt::TensorArg& none = a.h_out;  // stands in for an absent operand, never touched
  const rt::TensorArg& gh = gru ? a.gh : none;
  const rt::TensorArg& c_out = gru ? none : a.c_out;
  const rt::TensorArg& acts = keep ? a.acts : none;
  launch(s, TORSH_CUDA_KERNEL(rnn_gates_f32), grid, block, in_of(a.gates), in_of(gh), in_of(a.state), out_of(a.h_out),
         out_of(c_out), out_of(acts), a.gates.offset, a.gates.strides[0], gh.offset, gh.strides[0], a.state.offset,
         a.state.strides[0], a.h_out.offset, a.h_out.strides[0], c_out.offset, c_out.strides[0], acts.offset,
         acts.strides[0], rows, a.hidden, gru ? 1 : 0, keep ? 1 : 0);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::RnnGates, entry<rt::OpKind::RnnGates, rnn_gates>>(gpu::kF32);
});

}  // namespace
}  // namespace torsh::cuda
