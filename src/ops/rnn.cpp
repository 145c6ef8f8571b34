// LSTM and GRU layers on the op layer (rnn.hpp): every step is ops, so every
// backend runs them and the profiler and graph capture see each one: the
// recurrent GEMM, then the gates as one fused op (OpKind::RnnGates) where the
// device has that kernel, else as ops (slices of the gate tensor, sigmoid /
// tanh, elementwise).
#include "torsh/ops/rnn.hpp"

#include <string>

#include "dispatch.hpp"
#include "rnn_tape.hpp"

namespace torsh::ops {

namespace rnn {
Tensor one_like(const Tensor& like) {
  const float one = 1.0f;
  Backend b = like.backend();
  const Tensor t = b.from_host(&one, Shape{}, DType::F32);
  return like.dtype() == DType::F32 ? t : cast(t, like.dtype());
}
}  // namespace rnn

namespace {

using rnn::Cell;
using rnn::Layer;
using rnn::view2d;

std::int64_t gates_of(Cell c) { return c == Cell::Lstm ? 4 : 3; }
const char* name_of(Cell c) { return c == Cell::Lstm ? "lstm" : "gru"; }

// One step's new state and the four activations a training forward keeps
// (rnn_tape.hpp's acts).
struct Step {
  Tensor h, c;
  Tensor act[4];
};

// One LSTM step from the gates' pre-activations [B, 4H] (i, f, g, o).
Step lstm_gates(const Tensor& gates, const Tensor& c, std::int64_t hid) {
  const Tensor i = sigmoid(gates.slice(1, 0, hid)), f = sigmoid(gates.slice(1, hid, 2 * hid));
  const Tensor g = tanh(gates.slice(1, 2 * hid, 3 * hid)), o = sigmoid(gates.slice(1, 3 * hid, 4 * hid));
  const Tensor c2 = add(mul(f, c), mul(i, g));
  return {mul(o, tanh(c2)), c2, {i, f, g, o}};
}

// One GRU step from the input part gi [B, 3H] (x W_ih^T + b_ih) and the
// recurrent part gh [B, 3H] (h W_hh^T + b_hh): PyTorch's
// n = tanh(gi_n + r * gh_n), h' = (1 - z) * n + z * h.
Step gru_gates(const Tensor& gi, const Tensor& gh, const Tensor& h, const Tensor& one, std::int64_t hid) {
  const Tensor r = sigmoid(add(gi.slice(1, 0, hid), gh.slice(1, 0, hid)));
  const Tensor z = sigmoid(add(gi.slice(1, hid, 2 * hid), gh.slice(1, hid, 2 * hid)));
  const Tensor ghn = gh.slice(1, 2 * hid, 3 * hid);
  const Tensor n = tanh(add(gi.slice(1, 2 * hid, 3 * hid), mul(r, ghn)));
  return {add(mul(sub(one, z), n), mul(z, h)), Tensor(), {r, z, n, ghn}};
}

// One step's gates as one op (OpKind::RnnGates) on devices with the kernel:
// h_new [B, H] (and for an LSTM c_new), the activations written straight
// into acts [B, 4H] when training.
void fused_gates(Cell cell, const Tensor& gates, const Tensor& gh, const Tensor& state, const Tensor& h_new,
                 const Tensor& c_new, const Tensor& acts, std::int64_t hid) {
  const bool lstm = cell == Cell::Lstm, keep = acts.defined();
  const rt::RnnCell kind = lstm ? rt::RnnCell::Lstm : rt::RnnCell::Gru;
  std::vector<Tensor> in{gates, state}, out{h_new};
  if (!lstm) in.push_back(gh);
  if (lstm) out.push_back(c_new);
  if (keep) out.push_back(acts);
  detail::launch<rt::OpKind::RnnGates>(name_of(cell), in, out, [=](auto& i, auto& o) {
    rt::RnnGatesArgs a;
    a.cell = kind;
    a.gates = i[0], a.state = i[1];
    if (!lstm) a.gh = i[2];
    a.h_out = o[0];
    if (lstm) a.c_out = o[1];
    if (keep) a.acts = o[lstm ? 2 : 1];
    a.hidden = hid;
    return a;
  });
}

// h [B, H] @ w_hh^T [H, G H] + add (broadcast), for one step. One sequence
// (B = 1) is a matrix-vector product w_hh @ h, which streams w_hh once; as a
// GEMM with a transposed right operand it would be packed every step.
Tensor recurrent(const Tensor& w_hh, const Tensor& h, const std::optional<Tensor>& add_to) {
  if (h.shape()[0] == 1) {
    const Tensor g = matmul(w_hh, h.reshape({h.shape()[1]})).reshape({1, w_hh.shape()[0]});
    return add_to ? add(g, *add_to) : g;
  }
  return gemm(h, w_hh, 1.0f, add_to ? 1.0f : 0.0f, add_to, false, true);
}

void check_weights(Cell cell, const std::vector<Tensor>& w, std::int64_t layers, std::int64_t dirs,
                   std::int64_t input_size, const Tensor& input, std::vector<Layer>& out, std::int64_t& hid) {
  const char* op = name_of(cell);
  // layers < 1 is refused before it divides.
  const std::size_t per = layers < 1 ? 0 : w.size() / static_cast<std::size_t>(layers * dirs);
  if (layers < 1 || w.empty() || (per != 2 && per != 4) || per * static_cast<std::size_t>(layers * dirs) != w.size())
    throw Error(ErrorCode::InvalidArgument,
                std::to_string(w.size()) + " weight tensors for " + std::to_string(layers) + " layer(s) x " +
                    std::to_string(dirs) + " direction(s): expected 4 (w_ih, w_hh, b_ih, b_hh) or 2 (no biases) each",
                {.op = op}, {"Pass the module's parameters in order (list(module.parameters()) in PyTorch)"});
  const std::int64_t g = gates_of(cell);
  if (w[0].ndim() != 2 || w[0].shape()[0] % g != 0)
    throw Error(ErrorCode::ShapeMismatch,
                "w_ih_l0 has shape " + w[0].shape().to_string() + ": expected [" + std::to_string(g) + " * H, I]",
                detail::context(op, {w[0]}));
  hid = w[0].shape()[0] / g;
  for (std::int64_t l = 0; l < layers; ++l)
    for (std::int64_t d = 0; d < dirs; ++d) {
      const std::size_t at = static_cast<std::size_t>(l * dirs + d) * per;
      Layer L{w[at], w[at + 1], std::nullopt, std::nullopt};
      if (per == 4) L.b_ih = w[at + 2], L.b_hh = w[at + 3];
      const std::int64_t in = l == 0 ? input_size : hid * dirs;
      const auto expect = [&](const Tensor& t, Shape s, const std::string& what) {
        if (t.shape() != s)
          throw Error(ErrorCode::ShapeMismatch,
                      what + " of layer " + std::to_string(l) + (d ? " (reverse)" : "") + " has shape " +
                          t.shape().to_string() + ", expected " + s.to_string(),
                      detail::context(op, {t}), {"Check the weights' order, hidden size and input size"});
        if (t.dtype() != input.dtype())
          throw Error(ErrorCode::DTypeMismatch,
                      what + " is " + std::string(dtype_name(t.dtype())) + " but the input is " +
                          std::string(dtype_name(input.dtype())),
                      detail::context(op, {t, input}), {"Cast the weights to the input's dtype"});
      };
      expect(L.w_ih, Shape{g * hid, in}, "w_ih");
      expect(L.w_hh, Shape{g * hid, hid}, "w_hh");
      if (L.b_ih) expect(*L.b_ih, Shape{g * hid}, "b_ih");
      if (L.b_hh) expect(*L.b_hh, Shape{g * hid}, "b_hh");
      out.push_back(L);
    }
}

RnnResult run(Cell cell, const Tensor& input_in, const std::vector<Tensor>& weights, const std::optional<Tensor>& h0_in,
              const std::optional<Tensor>& c0_in, const RnnOptions& o) {
  const char* op = name_of(cell);
  if (!input_in.defined()) throw Error(ErrorCode::InvalidState, "the input is undefined", {.op = op});
  if (!is_floating(input_in.dtype()))
    throw Error(ErrorCode::DTypeMismatch, std::string(op) + " takes a floating input", detail::context(op, {input_in}));
  if (input_in.ndim() != 2 && input_in.ndim() != 3)
    throw Error(ErrorCode::ShapeMismatch, std::string(op) + " takes input [T, B, I] ([B, T, I] batch_first) or [T, I]",
                detail::context(op, {input_in}));
  std::vector<Tensor> all = weights;
  all.push_back(input_in);
  for (const auto* t : {&h0_in, &c0_in})
    if (*t) all.push_back(**t);
  for (const Tensor& t : all)
    if (!t.defined()) throw Error(ErrorCode::InvalidState, "an operand is undefined", {.op = op});
  for (const Tensor& t : all)
    if (t.device() != input_in.device())
      throw Error(ErrorCode::DeviceMismatch, "the weights, states and input must share a device",
                  detail::context(op, {t, input_in}));

  const bool unbatched = input_in.ndim() == 2;
  // Sequence-major [T, B, I], contiguous.
  Tensor x = unbatched ? input_in.unsqueeze(1) : (o.batch_first ? input_in.transpose(0, 1) : input_in);
  x = x.contiguous();
  const std::int64_t T = x.shape()[0], B = x.shape()[1], I = x.shape()[2];
  const std::int64_t dirs = o.bidirectional ? 2 : 1;
  std::vector<Layer> layers;
  std::int64_t H = 0;
  check_weights(cell, weights, o.num_layers, dirs, I, input_in, layers, H);
  const std::int64_t G = gates_of(cell), LD = o.num_layers * dirs;

  const auto state = [&](const std::optional<Tensor>& s, const char* what) {
    Backend b = input_in.backend();
    if (!s) return b.zeros(Shape{LD, B, H}, input_in.dtype());
    const Shape want = unbatched ? Shape{LD, H} : Shape{LD, B, H};
    if (s->shape() != want || s->dtype() != input_in.dtype())
      throw Error(s->dtype() != input_in.dtype() ? ErrorCode::DTypeMismatch : ErrorCode::ShapeMismatch,
                  std::string(what) + " is " + std::string(dtype_name(s->dtype())) + s->shape().to_string() +
                      ", expected " + std::string(dtype_name(input_in.dtype())) + want.to_string(),
                  detail::context(op, {*s}));
    return (unbatched ? s->unsqueeze(1) : *s).contiguous();
  };
  const Tensor h0 = state(h0_in, "h0");
  const Tensor c0 = cell == Cell::Lstm ? state(c0_in, "c0") : Tensor();
  Backend dev = input_in.backend();
  Tensor h_n = dev.empty(Shape{LD, B, H}, x.dtype());
  Tensor c_n = cell == Cell::Lstm ? dev.empty(Shape{LD, B, H}, x.dtype()) : Tensor();
  const Tensor one = cell == Cell::Gru ? rnn::one_like(x) : Tensor();
  // Devices without the fused gates kernel (or dtype) run the steps' gates as ops.
  const bool fused = dev.supports(rt::OpKind::RnnGates, x.dtype());

  std::shared_ptr<RnnTape> tape;
  if (o.training) {
    tape = std::make_shared<RnnTape>();
    tape->cell = cell;
    tape->options = o;
    tape->unbatched = unbatched;
    tape->biases = layers[0].b_ih.has_value();
    tape->T = T, tape->B = B, tape->I = I, tape->H = H, tape->dirs = dirs;
    tape->layers = layers;
    tape->h0 = h0;
    tape->c0 = c0;
  }

  Tensor layer_in = x;
  for (std::int64_t l = 0; l < o.num_layers; ++l) {
    Tensor out = dev.empty(Shape{T, B, dirs * H}, x.dtype());
    const std::int64_t in = layer_in.shape()[2];
    if (tape) {
      tape->inputs.push_back(layer_in);
      tape->outputs.push_back(out);
    }
    for (std::int64_t d = 0; d < dirs; ++d) {
      Tensor acts, cells;
      if (tape) {
        acts = dev.empty(Shape{T, B, 4 * H}, x.dtype());
        tape->acts.push_back(acts);
        if (cell == Cell::Lstm) {
          cells = dev.empty(Shape{T, B, H}, x.dtype());
          tape->cells.push_back(cells);
        }
      }
      const Layer& L = layers[static_cast<std::size_t>(l * dirs + d)];
      const std::int64_t s = l * dirs + d;
      // The whole sequence's input projection: one GEMM [T * B, I] x [I, G H].
      std::optional<Tensor> bias;
      if (cell == Cell::Lstm && L.b_ih && L.b_hh)
        bias = add(*L.b_ih, *L.b_hh);
      else if (L.b_ih)
        bias = L.b_ih;
      const Tensor proj = gemm(layer_in.reshape({T * B, in}), L.w_ih, 1.0f, bias ? 1.0f : 0.0f, bias, false, true);
      Tensor h = h0.slice(0, s, s + 1).reshape({B, H});
      Tensor c = cell == Cell::Lstm ? c0.slice(0, s, s + 1).reshape({B, H}) : Tensor();
      for (std::int64_t k = 0; k < T; ++k) {
        const std::int64_t t = d == 0 ? k : T - 1 - k;
        const Tensor pt = view2d(proj, t * B * G * H, B, G * H, G * H);
        if (fused) {
          const Tensor h_new = dev.empty(Shape{B, H}, x.dtype());
          const Tensor c_new = cell != Cell::Lstm ? Tensor()
                               : tape             ? view2d(cells, t * B * H, B, H, H)
                                                  : dev.empty(Shape{B, H}, x.dtype());
          const Tensor a = tape ? view2d(acts, t * B * 4 * H, B, 4 * H, 4 * H) : Tensor();
          if (cell == Cell::Lstm)
            fused_gates(cell, recurrent(L.w_hh, h, pt), Tensor(), c, h_new, c_new, a, H);
          else
            fused_gates(cell, pt, recurrent(L.w_hh, h, L.b_hh), h, h_new, Tensor(), a, H);
          h = h_new;
          c = c_new;
          view2d(out, t * B * dirs * H + d * H, B, H, dirs * H).copy_(h);
          continue;
        }
        const Step st = cell == Cell::Lstm ? lstm_gates(recurrent(L.w_hh, h, pt), c, H)
                                           : gru_gates(pt, recurrent(L.w_hh, h, L.b_hh), h, one, H);
        h = st.h;
        c = st.c;
        view2d(out, t * B * dirs * H + d * H, B, H, dirs * H).copy_(h);
        if (tape) {
          for (std::int64_t q = 0; q < 4; ++q) view2d(acts, t * B * 4 * H + q * H, B, H, 4 * H).copy_(st.act[q]);
          if (cell == Cell::Lstm) view2d(cells, t * B * H, B, H, H).copy_(c);
        }
      }
      view2d(h_n, s * B * H, B, H, H).copy_(h);
      if (cell == Cell::Lstm) view2d(c_n, s * B * H, B, H, H).copy_(c);
    }
    layer_in = out;
  }
  RnnResult r;
  r.output = layer_in;
  if (o.batch_first && !unbatched) r.output = r.output.transpose(0, 1).contiguous();
  if (unbatched) {
    r.output = r.output.reshape({T, dirs * H});
    h_n = h_n.reshape({LD, H});
    if (c_n.defined()) c_n = c_n.reshape({LD, H});
  }
  r.h_n = h_n;
  r.c_n = c_n;
  r.tape = tape;
  return r;
}

// A cell's x ([B, I], or [I] unbatched) and state s ([B, H], or [H]): the
// cell's own names in the error, before the sequence op sees them as h0 / c0.
void check_cell_state(const char* op, const Tensor& x, const Tensor& s, const char* what) {
  if (!x.defined() || !s.defined()) throw Error(ErrorCode::InvalidState, "an operand is undefined", {.op = op});
  if (x.ndim() != 1 && x.ndim() != 2)
    throw Error(ErrorCode::ShapeMismatch, "x is " + x.shape().to_string() + ": expected [B, I], or [I] unbatched",
                detail::context(op, {x, s}));
  if (s.dtype() != x.dtype())
    throw Error(ErrorCode::DTypeMismatch,
                std::string(what) + " is " + std::string(dtype_name(s.dtype())) + " but x is " +
                    std::string(dtype_name(x.dtype())),
                detail::context(op, {x, s}), {"Give the state x's dtype"});
  if (s.ndim() != x.ndim() || (x.ndim() == 2 && s.shape()[0] != x.shape()[0]))
    throw Error(ErrorCode::ShapeMismatch,
                std::string(what) + " is " + s.shape().to_string() + " for x " + x.shape().to_string() +
                    (x.ndim() == 2 ? ": expected [" + std::to_string(x.shape()[0]) + ", H]" : ": expected [H]"),
                detail::context(op, {x, s}));
}

std::vector<std::int64_t> dims_of(const Tensor& t) { return {t.shape().dims().begin(), t.shape().dims().end()}; }

}  // namespace

RnnResult lstm(const Tensor& input, const std::vector<Tensor>& weights, const std::optional<Tensor>& h0,
               const std::optional<Tensor>& c0, const RnnOptions& options) {
  return run(Cell::Lstm, input, weights, h0, c0, options);
}

RnnResult gru(const Tensor& input, const std::vector<Tensor>& weights, const std::optional<Tensor>& h0,
              const RnnOptions& options) {
  return run(Cell::Gru, input, weights, h0, std::nullopt, options);
}

std::pair<Tensor, Tensor> lstm_cell(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& w_ih,
                                    const Tensor& w_hh, const std::optional<Tensor>& b_ih,
                                    const std::optional<Tensor>& b_hh) {
  std::vector<Tensor> w{w_ih, w_hh};
  if (b_ih.has_value() != b_hh.has_value())
    throw Error(ErrorCode::InvalidArgument, "give both biases or neither", {.op = "lstm_cell"});
  if (b_ih) w.insert(w.end(), {*b_ih, *b_hh});
  check_cell_state("lstm_cell", x, h, "h");
  check_cell_state("lstm_cell", x, c, "c");
  const RnnResult r = run(Cell::Lstm, x.unsqueeze(0), w, h.unsqueeze(0), c.unsqueeze(0), {});
  return {r.h_n.reshape(dims_of(h)), r.c_n.reshape(dims_of(c))};
}

Tensor gru_cell(const Tensor& x, const Tensor& h, const Tensor& w_ih, const Tensor& w_hh,
                const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  std::vector<Tensor> w{w_ih, w_hh};
  if (b_ih.has_value() != b_hh.has_value())
    throw Error(ErrorCode::InvalidArgument, "give both biases or neither", {.op = "gru_cell"});
  if (b_ih) w.insert(w.end(), {*b_ih, *b_hh});
  check_cell_state("gru_cell", x, h, "h");
  const RnnResult r = run(Cell::Gru, x.unsqueeze(0), w, h.unsqueeze(0), std::nullopt, {});
  return r.h_n.reshape(dims_of(h));
}

}  // namespace torsh::ops
