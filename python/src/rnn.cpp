// LSTM and GRU with PyTorch's semantics: tb.lstm(x, list(module.parameters()), ...)
// returns (output, (h_n, c_n)) and tb.gru (output, h_n), as nn.LSTM / nn.GRU.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"

namespace torsh::py {
namespace {

using nb::arg;

std::vector<Tensor> tensors(const std::vector<TensorLike>& ws, const Tensor& like) {
  std::vector<Tensor> out;
  for (const TensorLike& w : ws) out.push_back(as_tensor(w, &like));
  return out;
}

std::optional<Tensor> maybe(const std::optional<TensorLike>& t, const Tensor& like) {
  if (!t || t->obj.is_none()) return std::nullopt;
  return as_tensor(*t, &like);
}

}  // namespace

void bind_rnn(nb::module_& m) {
  m.def("lstm", [](const TensorLike& x, const std::vector<TensorLike>& weights, std::optional<TensorLike> h0,
                   std::optional<TensorLike> c0, std::int64_t num_layers, bool bidirectional, bool batch_first) {
        Tensor tx = as_tensor(x);
        std::vector<Tensor> w = tensors(weights, tx);
        std::optional<Tensor> th = maybe(h0, tx), tc = maybe(c0, tx);
        nb::gil_scoped_release r;
        const ops::RnnResult res = ops::lstm(tx, w, th, tc, {num_layers, bidirectional, batch_first});
        return std::make_pair(res.output, std::make_pair(res.h_n, res.c_n));
      }, arg("x"), arg("weights"), arg("h0").none() = nb::none(), arg("c0").none() = nb::none(), nb::kw_only(),
      arg("num_layers") = 1, arg("bidirectional") = false, arg("batch_first") = false,
      "nn.LSTM's forward: weights are the module's parameters in order (list(lstm.parameters())), PyTorch's gate "
      "order (i, f, g, o) and layout. Returns (output, (h_n, c_n)).");
  m.def("gru", [](const TensorLike& x, const std::vector<TensorLike>& weights, std::optional<TensorLike> h0,
                  std::int64_t num_layers, bool bidirectional, bool batch_first) {
        Tensor tx = as_tensor(x);
        std::vector<Tensor> w = tensors(weights, tx);
        std::optional<Tensor> th = maybe(h0, tx);
        nb::gil_scoped_release r;
        const ops::RnnResult res = ops::gru(tx, w, th, {num_layers, bidirectional, batch_first});
        return std::make_pair(res.output, res.h_n);
      }, arg("x"), arg("weights"), arg("h0").none() = nb::none(), nb::kw_only(), arg("num_layers") = 1,
      arg("bidirectional") = false, arg("batch_first") = false,
      "nn.GRU's forward (gates r, z, n; n = tanh(W_in x + b_in + r * (W_hn h + b_hn))). Returns (output, h_n).");
  m.def("lstm_cell", [](const TensorLike& x, const TensorLike& h, const TensorLike& c, const TensorLike& w_ih,
                        const TensorLike& w_hh, std::optional<TensorLike> b_ih, std::optional<TensorLike> b_hh) {
        Tensor tx = as_tensor(x);
        Tensor th = as_tensor(h, &tx), tc = as_tensor(c, &tx), wi = as_tensor(w_ih, &tx), wh = as_tensor(w_hh, &tx);
        std::optional<Tensor> bi = maybe(b_ih, tx), bh = maybe(b_hh, tx);
        nb::gil_scoped_release r;
        return ops::lstm_cell(tx, th, tc, wi, wh, bi, bh);
      }, arg("x"), arg("h"), arg("c"), arg("w_ih"), arg("w_hh"), arg("b_ih").none() = nb::none(),
      arg("b_hh").none() = nb::none(), "nn.LSTMCell's step: returns (h, c).");
  m.def("gru_cell", [](const TensorLike& x, const TensorLike& h, const TensorLike& w_ih, const TensorLike& w_hh,
                       std::optional<TensorLike> b_ih, std::optional<TensorLike> b_hh) {
        Tensor tx = as_tensor(x);
        Tensor th = as_tensor(h, &tx), wi = as_tensor(w_ih, &tx), wh = as_tensor(w_hh, &tx);
        std::optional<Tensor> bi = maybe(b_ih, tx), bh = maybe(b_hh, tx);
        nb::gil_scoped_release r;
        return ops::gru_cell(tx, th, wi, wh, bi, bh);
      }, arg("x"), arg("h"), arg("w_ih"), arg("w_hh"), arg("b_ih").none() = nb::none(),
      arg("b_hh").none() = nb::none(), "nn.GRUCell's step: returns h.");
}

}  // namespace torsh::py
