#pragma once
// Recurrent layers with PyTorch's semantics, gate order and weight layout, so
// an nn.LSTM / nn.GRU's parameters load unchanged. For training, the forward
// pass (options.training) keeps what rnn_backward needs in result.tape.
//
// weights: the module's parameters in its own order (module._flat_weights):
// for each layer, the forward direction then (bidirectional) the reverse, each
// w_ih [G * H, I_l], w_hh [G * H, H], then b_ih [G * H], b_hh [G * H] when the
// module has biases (so 4 or 2 tensors per layer and direction). G = 4 for
// LSTM (gates i, f, g, o), 3 for GRU (r, z, n); I_0 is the input size, I_l =
// H * directions above the first layer.
//
// input: [T, B, I] ([B, T, I] when batch_first) or unbatched [T, I]; h0 / c0:
// [layers * directions, B, H] ([layers * directions, H] unbatched), zeros when
// absent. output: [T, B, directions * H] (batch_first: [B, T, ...]); h_n, c_n
// like h0. Each layer's input projection for the whole sequence is one GEMM;
// each step is one GEMM with the recurrent weights into the projection, then
// the gate arithmetic.
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "torsh/runtime/tensor.hpp"

namespace torsh::ops {

struct RnnOptions {
  std::int64_t num_layers = 1;
  bool bidirectional = false;
  bool batch_first = false;
  bool training = false;  // keep the activations rnn_backward reads
};

// What a training forward keeps: each layer's input and output, every step's
// gate activations (and, for an LSTM, cell states), the states and weights.
// About T * B * H * (gates + 2) values per layer and direction.
class RnnTape;

struct RnnResult {
  Tensor output, h_n, c_n;              // c_n: LSTM only
  std::shared_ptr<const RnnTape> tape;  // training only
};

// Gradients of a loss with respect to the forward's input, initial states and
// weights (in the order and shapes the forward took them), given its
// gradients with respect to output, h_n and (LSTM) c_n; absent ones are 0.
// h0 / c0 gradients are given whether or not the forward had them.
struct RnnGrads {
  Tensor input, h0, c0;  // c0: LSTM only
  std::vector<Tensor> weights;
};
// Backpropagation through time over the forward that made `tape`, on its
// device, composed of ops like the forward: per step, the gate derivatives
// and one product with w_hh; per layer and direction, one GEMM each for the
// input gradient, w_ih's and w_hh's gradients.
RnnGrads rnn_backward(const RnnTape& tape, const Tensor& grad_output,
                      const std::optional<Tensor>& grad_h_n = std::nullopt,
                      const std::optional<Tensor>& grad_c_n = std::nullopt);

RnnResult lstm(const Tensor& input, const std::vector<Tensor>& weights, const std::optional<Tensor>& h0 = std::nullopt,
               const std::optional<Tensor>& c0 = std::nullopt, const RnnOptions& options = {});
RnnResult gru(const Tensor& input, const std::vector<Tensor>& weights, const std::optional<Tensor>& h0 = std::nullopt,
              const RnnOptions& options = {});

// One step (nn.LSTMCell / nn.GRUCell): x [B, I], h and c [B, H]; biases optional.
std::pair<Tensor, Tensor> lstm_cell(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& w_ih,
                                    const Tensor& w_hh, const std::optional<Tensor>& b_ih = std::nullopt,
                                    const std::optional<Tensor>& b_hh = std::nullopt);
Tensor gru_cell(const Tensor& x, const Tensor& h, const Tensor& w_ih, const Tensor& w_hh,
                const std::optional<Tensor>& b_ih = std::nullopt, const std::optional<Tensor>& b_hh = std::nullopt);

}  // namespace torsh::ops
