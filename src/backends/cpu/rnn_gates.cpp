// One LSTM or GRU step's gates, fused (rt::RnnGatesArgs): a row's logistic
// and tanh run through the same vectorised f32 loops the unary op runs
// (simd::unary_f32), over the contiguous runs of the gate row, and the
// elementwise rest in one pass, instead of about ten ops each reading and
// writing [B, H] through memory.
#include <cmath>

#include "device.hpp"
#include "platform/scratch.hpp"
#include "platform/thread_pool.hpp"
#include "simd/simd.hpp"

namespace torsh::cpu {
namespace {

// y = f(x) on n values: the unary op's f32 loop, or the library's in double.
void logistic(const float* x, float* y, std::int64_t n) { simd::unary_f32(rt::UnaryOp::Sigmoid, x, y, n); }
void logistic(const double* x, double* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = 1.0 / (1.0 + std::exp(-x[i]));
}
void hyperbolic_tangent(const float* x, float* y, std::int64_t n) { simd::unary_f32(rt::UnaryOp::Tanh, x, y, n); }
void hyperbolic_tangent(const double* x, double* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}

template <class T>
T* row(const rt::TensorArg& t, std::int64_t b) {
  return data_of<T>(t) + b * t.strides[0];
}

// The calling thread's activations row when the step keeps none.
template <class T>
T* scratch_row(std::int64_t values) {
  thread_local Scratch s;
  return static_cast<T*>(s.get(static_cast<std::size_t>(values) * sizeof(T)));
}

template <class T>
void lstm_row(const rt::RnnGatesArgs& a, std::int64_t b, T* act) {
  const std::int64_t H = a.hidden;
  const T* g = row<T>(a.gates, b);
  const T* c = row<T>(a.state, b);
  T* c2 = row<T>(a.c_out, b);
  T* h2 = row<T>(a.h_out, b);
  logistic(g, act, 2 * H);  // i, f
  hyperbolic_tangent(g + 2 * H, act + 2 * H, H);
  logistic(g + 3 * H, act + 3 * H, H);
  const T* i = act;
  const T* f = act + H;
  const T* gg = act + 2 * H;
  const T* o = act + 3 * H;
  for (std::int64_t j = 0; j < H; ++j) c2[j] = f[j] * c[j] + i[j] * gg[j];
  hyperbolic_tangent(c2, h2, H);
  for (std::int64_t j = 0; j < H; ++j) h2[j] *= o[j];
}

template <class T>
void gru_row(const rt::RnnGatesArgs& a, std::int64_t b, T* act) {
  const std::int64_t H = a.hidden;
  const T* gi = row<T>(a.gates, b);
  const T* gh = row<T>(a.gh, b);
  const T* h = row<T>(a.state, b);
  T* h2 = row<T>(a.h_out, b);
  T* r = act;
  T* z = act + H;
  T* n = act + 2 * H;
  T* ghn = act + 3 * H;
  for (std::int64_t j = 0; j < 2 * H; ++j) r[j] = gi[j] + gh[j];  // r and z side by side
  logistic(r, r, 2 * H);
  for (std::int64_t j = 0; j < H; ++j) ghn[j] = gh[2 * H + j], n[j] = gi[2 * H + j] + r[j] * ghn[j];
  hyperbolic_tangent(n, n, H);
  for (std::int64_t j = 0; j < H; ++j) h2[j] = (T(1) - z[j]) * n[j] + z[j] * h[j];
}

template <class T>
void run(const rt::RnnGatesArgs& a) {
  const std::int64_t B = a.h_out.shape[0], H = a.hidden;
  // Rows per task: a few thousand values each, so short rows share a handoff.
  const std::int64_t grain = std::max<std::int64_t>(1, 4096 / (4 * H));
  pool().parallel_for(B, grain, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      T* act = a.acts.present() ? row<T>(a.acts, b) : scratch_row<T>(4 * H);
      a.cell == rt::RnnCell::Lstm ? lstm_row<T>(a, b, act) : gru_row<T>(a, b, act);
    }
  });
}

void rnn_gates(const rt::RnnGatesArgs& a) { a.h_out.dtype == DType::F64 ? run<double>(a) : run<float>(a); }

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::RnnGates, entry<rt::OpKind::RnnGates, rnn_gates>>(rt::DTypes{DType::F32, DType::F64});
});

}  // namespace
}  // namespace torsh::cpu
