#pragma once
// What a training forward of ops::lstm / ops::gru keeps for ops::rnn_backward
// (rnn.hpp), and the pieces both passes share.
#include <cstdint>
#include <optional>
#include <vector>

#include "torsh/ops/rnn.hpp"

namespace torsh::ops {

namespace rnn {

enum class Cell { Lstm, Gru };

// One layer and direction's parameters.
struct Layer {
  Tensor w_ih, w_hh;
  std::optional<Tensor> b_ih, b_hh;
};

// A 2-D view [rows, cols] of t's storage starting `offset` elements into it, rows `stride` apart.
inline Tensor view2d(const Tensor& t, std::int64_t offset, std::int64_t rows, std::int64_t cols, std::int64_t stride) {
  return Tensor(t.buffer(), t.dtype(), Shape{rows, cols}, {stride, 1}, t.offset() + offset);
}

// The scalar 1 in like's dtype, on its device.
Tensor one_like(const Tensor& like);

}  // namespace rnn

class RnnTape {
 public:
  rnn::Cell cell = rnn::Cell::Lstm;
  RnnOptions options;
  bool unbatched = false;
  bool biases = false;
  std::int64_t T = 0, B = 0, I = 0, H = 0, dirs = 1;
  std::vector<rnn::Layer> layers;       // [layer * dirs + direction]
  Tensor h0, c0;                        // [layers * dirs, B, H]
  std::vector<Tensor> inputs, outputs;  // per layer: [T, B, in], [T, B, dirs * H]
  // Per layer and direction, [T, B, 4 H]: LSTM i, f, g, o after their
  // activations; GRU r, z, n and the recurrent part of n (h W_hn^T + b_hn).
  std::vector<Tensor> acts;
  std::vector<Tensor> cells;  // LSTM: c_t, [T, B, H] per layer and direction
};

}  // namespace torsh::ops
