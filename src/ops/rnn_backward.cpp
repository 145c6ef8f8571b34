// Backpropagation through time for ops::lstm / ops::gru (rnn.hpp), from what
// a training forward kept (rnn_tape.hpp). Like the forward it is composed of
// ops, so it runs on the tape's device. Per layer, from the top, and per
// direction, the steps run in the reverse of the forward's order:
//
//   LSTM (i, f, g, o activated; c_t; h = o tanh(c_t)):
//     dc += dh o (1 - tanh^2 c_t); do = dh tanh c_t; di = dc g; dg = dc i;
//     df = dc c_{t-1}; dc_{t-1} = dc f; the pre-activations' gradients dA
//     (sigmoid' = s (1 - s), tanh' = 1 - t^2); dh_{t-1} = dA W_hh.
//   GRU (h' = (1 - z) n + z h, n = tanh(gi_n + r gh_n)):
//     dn = dh (1 - z); dz = dh (h - n); dan = dn (1 - n^2); dr = dan gh_n;
//     dGI = [dr r (1 - r), dz z (1 - z), dan]; dGH = [.., .., dan r];
//     dh_{t-1} = dh z + dGH W_hh.
//
// Each step's gradients go into [T, B, G H] tensors, so the weights' and the
// input's gradients are one GEMM each over the whole sequence.
#include <string>

#include "dispatch.hpp"
#include "rnn_tape.hpp"

namespace torsh::ops {
namespace {

using rnn::Cell;
using rnn::view2d;

// [T, B, C] of the forward's sequence-major layout from a user-facing tensor
// (batch_first or unbatched as the forward took it).
Tensor seq_major(const RnnTape& t, const Tensor& x) {
  if (t.unbatched) return x.unsqueeze(1).contiguous();
  return (t.options.batch_first ? x.transpose(0, 1) : x).contiguous();
}

// The inverse of seq_major.
Tensor user_layout(const RnnTape& t, const Tensor& x) {
  if (t.unbatched) return x.reshape({x.shape()[0], x.shape()[2]});
  return t.options.batch_first ? x.transpose(0, 1).contiguous() : x;
}

void check_grad(const RnnTape& t, const char* what, const Tensor& g, const Shape& want) {
  const char* op = "rnn_backward";
  const DType dt = t.h0.dtype();
  if (!g.defined()) throw Error(ErrorCode::InvalidState, std::string(what) + " is undefined", {.op = op});
  if (g.shape() != want || g.dtype() != dt)
    throw Error(ErrorCode::ShapeMismatch,
                std::string(what) + " is " + std::string(dtype_name(g.dtype())) + g.shape().to_string() +
                    ", expected " + std::string(dtype_name(dt)) + want.to_string() + " (the forward's)",
                detail::context(op, {g}), {"Pass the gradient of the loss with respect to that output"});
  if (g.device() != t.h0.device())
    throw Error(ErrorCode::DeviceMismatch, std::string(what) + " is on another device than the forward",
                detail::context(op, {g, t.h0}), {"Move it to the forward's device"});
}

}  // namespace

RnnGrads rnn_backward(const RnnTape& t, const Tensor& grad_output, const std::optional<Tensor>& grad_h_n,
                      const std::optional<Tensor>& grad_c_n) {
  const bool lstm = t.cell == Cell::Lstm;
  const std::int64_t T = t.T, B = t.B, H = t.H, dirs = t.dirs, L = t.options.num_layers, LD = L * dirs;
  const std::int64_t G = lstm ? 4 : 3;
  const Shape out_shape = t.unbatched             ? Shape{T, dirs * H}
                          : t.options.batch_first ? Shape{B, T, dirs * H}
                                                  : Shape{T, B, dirs * H};
  const Shape state_shape = t.unbatched ? Shape{LD, H} : Shape{LD, B, H};
  check_grad(t, "grad_output", grad_output, out_shape);
  if (grad_h_n) check_grad(t, "grad_h_n", *grad_h_n, state_shape);
  if (grad_c_n) {
    if (!lstm)
      throw Error(ErrorCode::InvalidArgument, "a GRU has no cell state: grad_c_n must be absent",
                  {.op = "rnn_backward"});
    check_grad(t, "grad_c_n", *grad_c_n, state_shape);
  }

  Backend dev = t.h0.backend();
  const DType dt = t.h0.dtype();
  const Tensor one = rnn::one_like(t.h0);
  const Tensor dh_n = grad_h_n ? grad_h_n->reshape({LD, B, H}).contiguous() : dev.zeros(Shape{LD, B, H}, dt);
  const Tensor dc_n = grad_c_n ? grad_c_n->reshape({LD, B, H}).contiguous() : dev.zeros(Shape{LD, B, H}, dt);
  Tensor dh0 = dev.empty(Shape{LD, B, H}, dt), dc0 = lstm ? dev.empty(Shape{LD, B, H}, dt) : Tensor();
  const std::size_t per = t.biases ? 4 : 2;
  std::vector<Tensor> dw(static_cast<std::size_t>(LD) * per);

  if (T == 0) {  // no step ran: the states pass straight through and the weights had no effect
    RnnGrads g;
    g.input = user_layout(t, dev.zeros(Shape{0, B, t.inputs[0].shape()[2]}, dt));
    g.h0 = t.unbatched ? dh_n.reshape({LD, H}) : dh_n;
    if (lstm) g.c0 = t.unbatched ? dc_n.reshape({LD, H}) : dc_n;
    for (std::int64_t s = 0; s < LD; ++s) {
      const rnn::Layer& W = t.layers[static_cast<std::size_t>(s)];
      const std::size_t at = static_cast<std::size_t>(s) * per;
      dw[at] = dev.zeros(W.w_ih.shape(), dt), dw[at + 1] = dev.zeros(W.w_hh.shape(), dt);
      if (t.biases) dw[at + 2] = dev.zeros(Shape{G * H}, dt), dw[at + 3] = dev.zeros(Shape{G * H}, dt);
    }
    g.weights = std::move(dw);
    return g;
  }
  Tensor d_out = seq_major(t, grad_output);  // [T, B, dirs H], the current layer's output gradient
  for (std::int64_t l = L - 1; l >= 0; --l) {
    const Tensor& X = t.inputs[static_cast<std::size_t>(l)];
    const Tensor& OUT = t.outputs[static_cast<std::size_t>(l)];
    const std::int64_t in = X.shape()[2];
    const Tensor X2 = X.reshape({T * B, in});
    Tensor dX;  // [T * B, in], both directions' contributions
    for (std::int64_t d = 0; d < dirs; ++d) {
      const std::int64_t s = l * dirs + d;
      const rnn::Layer& W = t.layers[static_cast<std::size_t>(s)];
      const Tensor& acts = t.acts[static_cast<std::size_t>(s)];
      // dGI: the gradient of the input projection (LSTM: of all gate
      // pre-activations); dGH (GRU): of the recurrent projection.
      Tensor dGI = dev.empty(Shape{T, B, G * H}, dt);
      Tensor dGH = lstm ? dGI : dev.empty(Shape{T, B, G * H}, dt);
      // h_{t-1} for every step: h0, then the direction's outputs one step behind.
      Tensor hprev = dev.empty(Shape{T, B, H}, dt);
      const Tensor h0s = t.h0.slice(0, s, s + 1).reshape({B, H});
      const Tensor out_d = OUT.slice(2, d * H, (d + 1) * H);
      if (d == 0) {
        hprev.slice(0, 0, 1).reshape({B, H}).copy_(h0s);
        if (T > 1) hprev.slice(0, 1, T).copy_(out_d.slice(0, 0, T - 1));
      } else {
        hprev.slice(0, T - 1, T).reshape({B, H}).copy_(h0s);
        if (T > 1) hprev.slice(0, 0, T - 1).copy_(out_d.slice(0, 1, T));
      }
      Tensor dh = dh_n.slice(0, s, s + 1).reshape({B, H}).contiguous();
      Tensor dc = lstm ? dc_n.slice(0, s, s + 1).reshape({B, H}).contiguous() : Tensor();
      const auto act = [&](std::int64_t step, std::int64_t q) {
        return view2d(acts, step * B * 4 * H + q * H, B, H, 4 * H);
      };
      const auto put = [&](Tensor& dst, std::int64_t step, std::int64_t q, const Tensor& v) {
        view2d(dst, step * B * G * H + q * H, B, H, G * H).copy_(v);
      };
      const auto dsig = [&](const Tensor& y) { return mul(y, sub(one, y)); };   // sigmoid' from its output
      const auto dtanh = [&](const Tensor& y) { return sub(one, mul(y, y)); };  // tanh' from its output
      for (std::int64_t k = 0; k < T; ++k) {
        const std::int64_t step = d == 0 ? T - 1 - k : k;
        dh = add(dh, view2d(d_out, step * B * dirs * H + d * H, B, H, dirs * H));
        const Tensor hp = hprev.slice(0, step, step + 1).reshape({B, H});
        if (lstm) {
          const Tensor& cells = t.cells[static_cast<std::size_t>(s)];
          const Tensor i = act(step, 0), f = act(step, 1), g = act(step, 2), o = act(step, 3);
          const Tensor c_t = view2d(cells, step * B * H, B, H, H);
          const bool first = k == T - 1;  // the forward's first step: c_{t-1} is c0
          const std::int64_t prev = d == 0 ? step - 1 : step + 1;
          const Tensor c_prev = first ? t.c0.slice(0, s, s + 1).reshape({B, H}) : view2d(cells, prev * B * H, B, H, H);
          const Tensor tc = tanh(c_t);
          dc = add(dc, mul(mul(dh, o), dtanh(tc)));
          put(dGI, step, 0, mul(mul(dc, g), dsig(i)));
          put(dGI, step, 1, mul(mul(dc, c_prev), dsig(f)));
          put(dGI, step, 2, mul(mul(dc, i), dtanh(g)));
          put(dGI, step, 3, mul(mul(dh, tc), dsig(o)));
          dc = mul(dc, f);
          dh = matmul(view2d(dGI, step * B * G * H, B, G * H, G * H), W.w_hh);
        } else {
          const Tensor r = act(step, 0), z = act(step, 1), n = act(step, 2), ghn = act(step, 3);
          const Tensor dan = mul(mul(dh, sub(one, z)), dtanh(n));
          put(dGI, step, 0, mul(mul(dan, ghn), dsig(r)));
          put(dGI, step, 1, mul(mul(dh, sub(hp, n)), dsig(z)));
          put(dGI, step, 2, dan);
          put(dGH, step, 0, view2d(dGI, step * B * G * H, B, H, G * H));
          put(dGH, step, 1, view2d(dGI, step * B * G * H + H, B, H, G * H));
          put(dGH, step, 2, mul(dan, r));
          dh = add(mul(dh, z), matmul(view2d(dGH, step * B * G * H, B, G * H, G * H), W.w_hh));
        }
      }
      dh0.slice(0, s, s + 1).reshape({B, H}).copy_(dh);
      if (lstm) dc0.slice(0, s, s + 1).reshape({B, H}).copy_(dc);
      const Tensor dGI2 = dGI.reshape({T * B, G * H}), dGH2 = dGH.reshape({T * B, G * H});
      const std::size_t at = static_cast<std::size_t>(s) * per;
      dw[at] = gemm(dGI2, X2, 1.0f, 0.0f, std::nullopt, true, false);                             // [G H, in]
      dw[at + 1] = gemm(dGH2, hprev.reshape({T * B, H}), 1.0f, 0.0f, std::nullopt, true, false);  // [G H, H]
      if (t.biases) {
        dw[at + 2] = sum(dGI2, {0});
        dw[at + 3] = lstm ? cast(dw[at + 2], dt) : sum(dGH2, {0});  // LSTM: the same values, its own tensor
      }
      dX = d == 0 ? matmul(dGI2, W.w_ih) : gemm(dGI2, W.w_ih, 1.0f, 1.0f, dX);
    }
    d_out = dX.reshape({T, B, in});
  }

  RnnGrads g;
  g.input = user_layout(t, d_out);
  g.h0 = t.unbatched ? dh0.reshape({LD, H}) : dh0;
  if (lstm) g.c0 = t.unbatched ? dc0.reshape({LD, H}) : dc0;
  g.weights = std::move(dw);
  return g;
}

}  // namespace torsh::ops
