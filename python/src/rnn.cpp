// LSTM and GRU with PyTorch's semantics: tb.lstm(x, list(module.parameters()), ...)
// returns (output, (h_n, c_n)) and tb.gru (output, h_n), as nn.LSTM / nn.GRU.
// tb.lstm_train / tb.gru_train also return the tape that tb.rnn_backward reads.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "common.hpp"

namespace torsh::py {
namespace {

// What a training forward kept (ops::RnnTape, opaque to Python).
struct PyRnnTape {
  std::shared_ptr<const ops::RnnTape> tape;
};

using nb::arg;

// An argument as a tensor. For a training forward, one that is not a torsh
// Tensor (a NumPy array, shared without a copy) is copied: the tape keeps
// the input, the states and the weights for rnn_backward, and a write to
// the caller's array in between would change the gradients silently.
Tensor arg_tensor(const TensorLike& t, const Tensor* like, bool train) {
  Tensor out = as_tensor(t, like);
  return !train || nb::isinstance<Tensor>(t.obj) ? out : copy_of(out);
}

std::vector<Tensor> tensors(const std::vector<TensorLike>& ws, const Tensor& like, bool train) {
  std::vector<Tensor> out;
  for (const TensorLike& w : ws) out.push_back(arg_tensor(w, &like, train));
  return out;
}

std::optional<Tensor> maybe(const std::optional<TensorLike>& t, const Tensor& like, bool train) {
  if (!t || t->obj.is_none()) return std::nullopt;
  return arg_tensor(*t, &like, train);
}

// The forwards behind tb.lstm / tb.lstm_train and tb.gru / tb.gru_train.
ops::RnnResult lstm_forward(const TensorLike& x, const std::vector<TensorLike>& weights,
                            const std::optional<TensorLike>& h0, const std::optional<TensorLike>& c0,
                            const ops::RnnOptions& o) {
  Tensor tx = arg_tensor(x, nullptr, o.training);
  std::vector<Tensor> w = tensors(weights, tx, o.training);
  std::optional<Tensor> th = maybe(h0, tx, o.training), tc = maybe(c0, tx, o.training);
  nb::gil_scoped_release r;
  return ops::lstm(tx, w, th, tc, o);
}

ops::RnnResult gru_forward(const TensorLike& x, const std::vector<TensorLike>& weights,
                           const std::optional<TensorLike>& h0, const ops::RnnOptions& o) {
  Tensor tx = arg_tensor(x, nullptr, o.training);
  std::vector<Tensor> w = tensors(weights, tx, o.training);
  std::optional<Tensor> th = maybe(h0, tx, o.training);
  nb::gil_scoped_release r;
  return ops::gru(tx, w, th, o);
}

}  // namespace

void bind_rnn(nb::module_& m) {
  nb::class_<PyRnnTape>(m, "RnnTape",
                        "What lstm_train / gru_train kept for rnn_backward: each layer's input and output, every "
                        "step's gate activations (and LSTM cell states), the states and the weights. NumPy "
                        "arguments were copied into it; torsh Tensors are kept by reference, so leave them "
                        "unchanged until rnn_backward.");
  m.def(
      "lstm_train",
      [](const TensorLike& x, const std::vector<TensorLike>& weights, std::optional<TensorLike> h0,
         std::optional<TensorLike> c0, std::int64_t num_layers, bool bidirectional, bool batch_first) {
        const ops::RnnResult res = lstm_forward(x, weights, h0, c0, {num_layers, bidirectional, batch_first, true});
        return std::make_tuple(res.output, std::make_pair(res.h_n, res.c_n), PyRnnTape{res.tape});
      },
      arg("x"), arg("weights"), arg("h0").none() = nb::none(), arg("c0").none() = nb::none(), nb::kw_only(),
      arg("num_layers") = 1, arg("bidirectional") = false, arg("batch_first") = false,
      "lstm's forward for training: returns (output, (h_n, c_n), tape); rnn_backward(tape, ...) gives the "
      "gradients.");
  m.def(
      "gru_train",
      [](const TensorLike& x, const std::vector<TensorLike>& weights, std::optional<TensorLike> h0,
         std::int64_t num_layers, bool bidirectional, bool batch_first) {
        const ops::RnnResult res = gru_forward(x, weights, h0, {num_layers, bidirectional, batch_first, true});
        return std::make_tuple(res.output, res.h_n, PyRnnTape{res.tape});
      },
      arg("x"), arg("weights"), arg("h0").none() = nb::none(), nb::kw_only(), arg("num_layers") = 1,
      arg("bidirectional") = false, arg("batch_first") = false,
      "gru's forward for training: returns (output, h_n, tape); rnn_backward(tape, ...) gives the gradients.");
  m.def(
      "rnn_backward",
      [](const PyRnnTape& tape, const TensorLike& grad_output, std::optional<TensorLike> grad_h_n,
         std::optional<TensorLike> grad_c_n) {
        Tensor g = as_tensor(grad_output);
        std::optional<Tensor> gh = maybe(grad_h_n, g, false), gc = maybe(grad_c_n, g, false);
        nb::gil_scoped_release r;
        const ops::RnnGrads d = ops::rnn_backward(*tape.tape, g, gh, gc);
        return std::make_tuple(d.input, d.h0, d.c0.defined() ? std::optional<Tensor>(d.c0) : std::nullopt, d.weights);
      },
      arg("tape"), arg("grad_output"), arg("grad_h_n").none() = nb::none(), arg("grad_c_n").none() = nb::none(),
      "Backpropagation through time: given the loss's gradients with respect to output, h_n and (LSTM) c_n "
      "(absent: 0), returns (grad_x, grad_h0, grad_c0 or None for a GRU, [grad of each weight, in the forward's "
      "order]).");

  m.def(
      "lstm",
      [](const TensorLike& x, const std::vector<TensorLike>& weights, std::optional<TensorLike> h0,
         std::optional<TensorLike> c0, std::int64_t num_layers, bool bidirectional, bool batch_first) {
        const ops::RnnResult res = lstm_forward(x, weights, h0, c0, {num_layers, bidirectional, batch_first});
        return std::make_pair(res.output, std::make_pair(res.h_n, res.c_n));
      },
      arg("x"), arg("weights"), arg("h0").none() = nb::none(), arg("c0").none() = nb::none(), nb::kw_only(),
      arg("num_layers") = 1, arg("bidirectional") = false, arg("batch_first") = false,
      "nn.LSTM's forward: weights are the module's parameters in order (list(lstm.parameters())), PyTorch's gate "
      "order (i, f, g, o) and layout. Returns (output, (h_n, c_n)).");
  m.def(
      "gru",
      [](const TensorLike& x, const std::vector<TensorLike>& weights, std::optional<TensorLike> h0,
         std::int64_t num_layers, bool bidirectional, bool batch_first) {
        const ops::RnnResult res = gru_forward(x, weights, h0, {num_layers, bidirectional, batch_first});
        return std::make_pair(res.output, res.h_n);
      },
      arg("x"), arg("weights"), arg("h0").none() = nb::none(), nb::kw_only(), arg("num_layers") = 1,
      arg("bidirectional") = false, arg("batch_first") = false,
      "nn.GRU's forward (gates r, z, n; n = tanh(W_in x + b_in + r * (W_hn h + b_hn))). Returns (output, h_n).");
  m.def(
      "lstm_cell",
      [](const TensorLike& x, const TensorLike& h, const TensorLike& c, const TensorLike& w_ih, const TensorLike& w_hh,
         std::optional<TensorLike> b_ih, std::optional<TensorLike> b_hh) {
        Tensor tx = as_tensor(x);
        Tensor th = as_tensor(h, &tx), tc = as_tensor(c, &tx), wi = as_tensor(w_ih, &tx), wh = as_tensor(w_hh, &tx);
        std::optional<Tensor> bi = maybe(b_ih, tx, false), bh = maybe(b_hh, tx, false);
        nb::gil_scoped_release r;
        return ops::lstm_cell(tx, th, tc, wi, wh, bi, bh);
      },
      arg("x"), arg("h"), arg("c"), arg("w_ih"), arg("w_hh"), arg("b_ih").none() = nb::none(),
      arg("b_hh").none() = nb::none(), "nn.LSTMCell's step: returns (h, c).");
  m.def(
      "gru_cell",
      [](const TensorLike& x, const TensorLike& h, const TensorLike& w_ih, const TensorLike& w_hh,
         std::optional<TensorLike> b_ih, std::optional<TensorLike> b_hh) {
        Tensor tx = as_tensor(x);
        Tensor th = as_tensor(h, &tx), wi = as_tensor(w_ih, &tx), wh = as_tensor(w_hh, &tx);
        std::optional<Tensor> bi = maybe(b_ih, tx, false), bh = maybe(b_hh, tx, false);
        nb::gil_scoped_release r;
        return ops::gru_cell(tx, th, wi, wh, bi, bh);
      },
      arg("x"), arg("h"), arg("w_ih"), arg("w_hh"), arg("b_ih").none() = nb::none(), arg("b_hh").none() = nb::none(),
      "nn.GRUCell's step: returns h.");
}

}  // namespace torsh::py
