// One LSTM / GRU step's gates, fused: rnn_gates.kern.h's rnn_gates_f32, one
// work-item per element of h_out (f32; other dtypes run the gates as ops).
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void rnn_gates(OpenClStream& s, const rt::RnnGatesArgs& a) {
  const std::int64_t rows = a.h_out.shape[0], n = rows * a.hidden;
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const Kernel k = dev.kernel("rnn_gates_f32");
  const auto [global, local] = grid_1d(dev, k, n);
  const bool gru = a.cell == rt::RnnCell::Gru, keep = a.acts.present();
  const rt::TensorArg& none = a.h_out;  // stands in for an absent operand, never touched
  const rt::TensorArg& gh = gru ? a.gh : none;
  const rt::TensorArg& c_out = gru ? none : a.c_out;
  const rt::TensorArg& acts = keep ? a.acts : none;
  launch(s, k, global, local, mem_of(*a.gates.buffer), mem_of(*gh.buffer), mem_of(*a.state.buffer),
         mem_of(*a.h_out.buffer), mem_of(*c_out.buffer), mem_of(*acts.buffer), cl_long{a.gates.offset},
         cl_long{a.gates.strides[0]}, cl_long{gh.offset}, cl_long{gh.strides[0]}, cl_long{a.state.offset},
         cl_long{a.state.strides[0]}, cl_long{a.h_out.offset}, cl_long{a.h_out.strides[0]}, cl_long{c_out.offset},
         cl_long{c_out.strides[0]}, cl_long{acts.offset}, cl_long{acts.strides[0]}, cl_long{rows}, cl_long{a.hidden},
         cl_int{gru ? 1 : 0}, cl_int{keep ? 1 : 0});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::RnnGates, entry<rt::OpKind::RnnGates, rnn_gates>>(gpu::kF32);
});

}  // namespace
}  // namespace torsh::opencl
