// LSTM and GRU layers and cells against a double-precision reference written
// from PyTorch's equations: one and two layers, both directions, batch_first,
// with and without biases, given and zero initial states, unbatched input,
// and clear errors for misshaped weights and states; the backward pass
// (rnn_backward) against central differences in f64. PyTorch itself is the
// reference in tests/python/test_rnn.py.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "torsh/torsh.hpp"

using namespace torsh;

namespace {

Backend& host() {
  static Backend b = Backend::create(BackendType::Cpu);
  return b;
}

using Vec = std::vector<double>;

Vec rnd(std::size_t n, std::uint32_t seed, double scale = 0.5) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  Vec v(n);
  for (auto& x : v) x = u(g);
  return v;
}

Tensor t32(const Vec& v, const Shape& s) {
  std::vector<float> f(v.begin(), v.end());
  return host().from_host(f.data(), s, DType::F32);
}

double sig(double x) { return 1 / (1 + std::exp(-x)); }

struct W {
  Vec w_ih, w_hh, b_ih, b_hh;  // row-major [G H, in], [G H, H], [G H]
};

// One direction of one layer over x [T][B][in]; returns out [T][B][H] and updates h, c [B][H].
void ref_dir(bool lstm, const W& w, const std::vector<Vec>& x, std::int64_t T, std::int64_t B, std::int64_t in,
             std::int64_t H, bool reverse, std::vector<Vec>& out, Vec& h, Vec& c) {
  const std::int64_t G = lstm ? 4 : 3;
  out.assign(static_cast<std::size_t>(T), Vec(static_cast<std::size_t>(B * H)));
  for (std::int64_t k = 0; k < T; ++k) {
    const std::int64_t t = reverse ? T - 1 - k : k;
    Vec hn(h.size()), cn(c.size());
    for (std::int64_t b = 0; b < B; ++b) {
      Vec gi(static_cast<std::size_t>(G * H)), gh(static_cast<std::size_t>(G * H));
      for (std::int64_t r = 0; r < G * H; ++r) {
        double si = w.b_ih.empty() ? 0 : w.b_ih[static_cast<std::size_t>(r)];
        double sh = w.b_hh.empty() ? 0 : w.b_hh[static_cast<std::size_t>(r)];
        for (std::int64_t j = 0; j < in; ++j)
          si += w.w_ih[static_cast<std::size_t>(r * in + j)] *
                x[static_cast<std::size_t>(t)][static_cast<std::size_t>(b * in + j)];
        for (std::int64_t j = 0; j < H; ++j)
          sh += w.w_hh[static_cast<std::size_t>(r * H + j)] * h[static_cast<std::size_t>(b * H + j)];
        gi[static_cast<std::size_t>(r)] = si;
        gh[static_cast<std::size_t>(r)] = sh;
      }
      for (std::int64_t j = 0; j < H; ++j) {
        const auto at = [&](const Vec& v, std::int64_t gate) { return v[static_cast<std::size_t>(gate * H + j)]; };
        const std::size_t o = static_cast<std::size_t>(b * H + j);
        if (lstm) {
          const double i = sig(at(gi, 0) + at(gh, 0)), f = sig(at(gi, 1) + at(gh, 1));
          const double g = std::tanh(at(gi, 2) + at(gh, 2)), og = sig(at(gi, 3) + at(gh, 3));
          cn[o] = f * c[o] + i * g;
          hn[o] = og * std::tanh(cn[o]);
        } else {
          const double r = sig(at(gi, 0) + at(gh, 0)), z = sig(at(gi, 1) + at(gh, 1));
          const double n = std::tanh(at(gi, 2) + r * at(gh, 2));
          hn[o] = (1 - z) * n + z * h[o];
        }
      }
    }
    h = hn;
    if (lstm) c = cn;
    out[static_cast<std::size_t>(t)] = h;
  }
}

struct Case {
  bool lstm;
  std::int64_t T, B, I, H, layers;
  bool bidir, bias, batch_first, states;
};

void check(const Case& k, std::uint32_t seed) {
  const std::int64_t G = k.lstm ? 4 : 3, D = k.bidir ? 2 : 1;
  std::vector<W> ws;
  std::vector<Tensor> flat;
  for (std::int64_t l = 0; l < k.layers; ++l)
    for (std::int64_t d = 0; d < D; ++d) {
      const std::int64_t in = l == 0 ? k.I : k.H * D;
      W w{rnd(static_cast<std::size_t>(G * k.H * in), seed++),
          rnd(static_cast<std::size_t>(G * k.H * k.H), seed++),
          {},
          {}};
      flat.push_back(t32(w.w_ih, Shape{G * k.H, in}));
      flat.push_back(t32(w.w_hh, Shape{G * k.H, k.H}));
      if (k.bias) {
        w.b_ih = rnd(static_cast<std::size_t>(G * k.H), seed++);
        w.b_hh = rnd(static_cast<std::size_t>(G * k.H), seed++);
        flat.push_back(t32(w.b_ih, Shape{G * k.H}));
        flat.push_back(t32(w.b_hh, Shape{G * k.H}));
      }
      ws.push_back(w);
    }
  // Round the reference's weights to f32 as the tensors hold them.
  const auto f32r = [](Vec& v) {
    for (auto& x : v) x = static_cast<float>(x);
  };
  for (auto& w : ws) f32r(w.w_ih), f32r(w.w_hh), f32r(w.b_ih), f32r(w.b_hh);
  Vec xv = rnd(static_cast<std::size_t>(k.T * k.B * k.I), seed++, 1.0);
  f32r(xv);
  Vec h0 = k.states ? rnd(static_cast<std::size_t>(k.layers * D * k.B * k.H), seed++)
                    : Vec(static_cast<std::size_t>(k.layers * D * k.B * k.H));
  Vec c0 = k.states ? rnd(h0.size(), seed++) : Vec(h0.size());
  f32r(h0), f32r(c0);

  // Reference, sequence-major.
  std::vector<Vec> layer_in(static_cast<std::size_t>(k.T));
  for (std::int64_t t = 0; t < k.T; ++t)
    layer_in[static_cast<std::size_t>(t)].assign(xv.begin() + t * k.B * k.I, xv.begin() + (t + 1) * k.B * k.I);
  Vec hn(h0.size()), cn(c0.size());
  for (std::int64_t l = 0; l < k.layers; ++l) {
    std::vector<Vec> out(static_cast<std::size_t>(k.T), Vec(static_cast<std::size_t>(k.B * D * k.H)));
    const std::int64_t in = l == 0 ? k.I : k.H * D;
    for (std::int64_t d = 0; d < D; ++d) {
      const std::size_t s = static_cast<std::size_t>((l * D + d) * k.B * k.H);
      Vec h(h0.begin() + static_cast<std::ptrdiff_t>(s), h0.begin() + static_cast<std::ptrdiff_t>(s + k.B * k.H));
      Vec c(c0.begin() + static_cast<std::ptrdiff_t>(s), c0.begin() + static_cast<std::ptrdiff_t>(s + k.B * k.H));
      std::vector<Vec> od;
      ref_dir(k.lstm, ws[static_cast<std::size_t>(l * D + d)], layer_in, k.T, k.B, in, k.H, d == 1, od, h, c);
      for (std::int64_t t = 0; t < k.T; ++t)
        for (std::int64_t b = 0; b < k.B; ++b)
          for (std::int64_t j = 0; j < k.H; ++j)
            out[static_cast<std::size_t>(t)][static_cast<std::size_t>((b * D + d) * k.H + j)] =
                od[static_cast<std::size_t>(t)][static_cast<std::size_t>(b * k.H + j)];
      std::copy(h.begin(), h.end(), hn.begin() + static_cast<std::ptrdiff_t>(s));
      std::copy(c.begin(), c.end(), cn.begin() + static_cast<std::ptrdiff_t>(s));
    }
    layer_in = out;
  }

  Tensor x = t32(xv, Shape{k.T, k.B, k.I});
  if (k.batch_first) x = x.transpose(0, 1).contiguous();
  ops::RnnOptions o{k.layers, k.bidir, k.batch_first};
  const Shape ss{k.layers * D, k.B, k.H};
  const std::optional<Tensor> th0 = k.states ? std::optional<Tensor>(t32(h0, ss)) : std::nullopt;
  const std::optional<Tensor> tc0 = k.states ? std::optional<Tensor>(t32(c0, ss)) : std::nullopt;
  const ops::RnnResult r = k.lstm ? ops::lstm(x, flat, th0, tc0, o) : ops::gru(x, flat, th0, o);
  Tensor out = r.output;
  if (k.batch_first) out = out.transpose(0, 1).contiguous();
  ASSERT_EQ(out.shape(), (Shape{k.T, k.B, D * k.H}));
  const auto got = out.to_vector();
  const double tol = 2e-5 * std::sqrt(static_cast<double>(k.H + k.I)) * static_cast<double>(k.layers);
  for (std::int64_t t = 0; t < k.T; ++t)
    for (std::int64_t i = 0; i < k.B * D * k.H; ++i)
      ASSERT_NEAR(got[static_cast<std::size_t>(t * k.B * D * k.H + i)],
                  layer_in[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)], tol)
          << "t " << t << " i " << i;
  const auto gh = r.h_n.to_vector();
  for (std::size_t i = 0; i < hn.size(); ++i) ASSERT_NEAR(gh[i], hn[i], tol) << "h_n " << i;
  if (k.lstm) {
    const auto gc = r.c_n.to_vector();
    for (std::size_t i = 0; i < cn.size(); ++i) ASSERT_NEAR(gc[i], cn[i], tol) << "c_n " << i;
  }
}

}  // namespace

TEST(Rnn, LstmMatchesPyTorchsEquations) {
  std::uint32_t seed = 1;
  for (const Case& k :
       {Case{true, 5, 3, 4, 6, 1, false, true, false, false}, Case{true, 4, 2, 3, 5, 2, true, true, true, true},
        Case{true, 3, 1, 7, 4, 1, true, false, false, true}, Case{true, 1, 4, 2, 3, 3, false, true, false, true}})
    check(k, seed += 100);
}

TEST(Rnn, GruMatchesPyTorchsEquations) {
  std::uint32_t seed = 7;
  for (const Case& k :
       {Case{false, 5, 3, 4, 6, 1, false, true, false, false}, Case{false, 4, 2, 3, 5, 2, true, true, true, true},
        Case{false, 6, 1, 7, 4, 1, true, false, false, true}})
    check(k, seed += 100);
}

TEST(Rnn, UnbatchedInputAndCells) {
  const Tensor w_ih = t32(rnd(4 * 3 * 2, 1), Shape{12, 2}), w_hh = t32(rnd(4 * 3 * 3, 2), Shape{12, 3});
  const Tensor x = t32(rnd(5 * 2, 3), Shape{5, 2});
  const ops::RnnResult u = ops::lstm(x, {w_ih, w_hh});
  EXPECT_EQ(u.output.shape(), (Shape{5, 3}));
  EXPECT_EQ(u.h_n.shape(), (Shape{1, 3}));
  const ops::RnnResult b = ops::lstm(x.unsqueeze(1), {w_ih, w_hh});
  EXPECT_EQ(u.output.to_vector(), b.output.reshape({5, 3}).to_vector());
  // A cell step equals a one-step layer.
  const Tensor h = t32(rnd(2 * 3, 4), Shape{2, 3}), c = t32(rnd(2 * 3, 5), Shape{2, 3}),
               xb = t32(rnd(2 * 2, 6), Shape{2, 2});
  const auto [h1, c1] = ops::lstm_cell(xb, h, c, w_ih, w_hh);
  const ops::RnnResult one = ops::lstm(xb.unsqueeze(0), {w_ih, w_hh}, h.unsqueeze(0), c.unsqueeze(0));
  EXPECT_EQ(h1.to_vector(), one.h_n.reshape({2, 3}).to_vector());
  EXPECT_EQ(c1.to_vector(), one.c_n.reshape({2, 3}).to_vector());
  const Tensor g_ih = t32(rnd(3 * 3 * 2, 7), Shape{9, 2}), g_hh = t32(rnd(3 * 3 * 3, 8), Shape{9, 3});
  EXPECT_EQ(ops::gru_cell(xb, h, g_ih, g_hh).shape(), (Shape{2, 3}));
}

namespace {

Tensor t64(const Vec& v, const Shape& s) { return host().from_host(v.data(), s, DType::F64); }

double dot(const Tensor& a, const Vec& w) {
  const std::vector<double> v = a.contiguous().to_host<double>();
  double s = 0;
  for (std::size_t i = 0; i < v.size(); ++i) s += v[i] * w[i];
  return s;
}

struct GradCase {
  bool lstm;
  std::int64_t T, B, I, H, layers;
  bool bidir, biases, batch_first, unbatched;
};

// rnn_backward against central differences of L = <output, R> + <h_n, Rh> (+ <c_n, Rc>) in f64,
// at a few elements of the input, the states and every weight tensor.
void check_grads(const GradCase& k, std::uint32_t seed) {
  const std::int64_t D = k.bidir ? 2 : 1, G = k.lstm ? 4 : 3, LD = k.layers * D;
  std::vector<Tensor> w;
  for (std::int64_t l = 0; l < k.layers; ++l)
    for (std::int64_t d = 0; d < D; ++d) {
      const std::int64_t in = l == 0 ? k.I : D * k.H;
      w.push_back(t64(rnd(static_cast<std::size_t>(G * k.H * in), ++seed), Shape{G * k.H, in}));
      w.push_back(t64(rnd(static_cast<std::size_t>(G * k.H * k.H), ++seed), Shape{G * k.H, k.H}));
      if (k.biases) {
        w.push_back(t64(rnd(static_cast<std::size_t>(G * k.H), ++seed), Shape{G * k.H}));
        w.push_back(t64(rnd(static_cast<std::size_t>(G * k.H), ++seed), Shape{G * k.H}));
      }
    }
  const Shape xs = k.unbatched ? Shape{k.T, k.I} : k.batch_first ? Shape{k.B, k.T, k.I} : Shape{k.T, k.B, k.I};
  const Shape ss = k.unbatched ? Shape{LD, k.H} : Shape{LD, k.B, k.H};
  const std::int64_t Bn = k.unbatched ? 1 : k.B;
  Tensor x = t64(rnd(static_cast<std::size_t>(k.T * Bn * k.I), ++seed, 1.0), xs);
  Tensor h0 = t64(rnd(static_cast<std::size_t>(LD * Bn * k.H), ++seed), ss);
  Tensor c0 = t64(rnd(static_cast<std::size_t>(LD * Bn * k.H), ++seed), ss);
  const Vec R = rnd(static_cast<std::size_t>(k.T * Bn * D * k.H), ++seed, 1.0);
  const Vec Rh = rnd(static_cast<std::size_t>(LD * Bn * k.H), ++seed, 1.0), Rc = rnd(Rh.size(), ++seed, 1.0);
  ops::RnnOptions o;
  o.num_layers = k.layers, o.bidirectional = k.bidir, o.batch_first = k.batch_first;
  const auto forward = [&](bool training) {
    o.training = training;
    return k.lstm ? ops::lstm(x, w, h0, c0, o) : ops::gru(x, w, h0, o);
  };
  const auto loss = [&] {
    const ops::RnnResult r = forward(false);
    return dot(r.output, R) + dot(r.h_n, Rh) + (k.lstm ? dot(r.c_n, Rc) : 0.0);
  };
  const ops::RnnResult r = forward(true);
  ASSERT_TRUE(r.tape);
  const ops::RnnGrads g = ops::rnn_backward(*r.tape, t64(R, r.output.shape()), t64(Rh, ss),
                                            k.lstm ? std::optional<Tensor>(t64(Rc, ss)) : std::nullopt);
  ASSERT_EQ(g.weights.size(), w.size());
  ASSERT_EQ(g.input.shape(), xs);
  ASSERT_EQ(g.h0.shape(), ss);
  // Perturbs element i of t (a tensor the forward reads) by +-eps.
  const auto numeric = [&](Tensor& t, std::size_t i) {
    std::vector<double> v = t.to_host<double>();
    const double eps = 1e-6, keep = v[i];
    Buffer buf = t.buffer();
    v[i] = keep + eps;
    buf.copy_from_host(v.data(), v.size() * 8, 0);
    const double up = loss();
    v[i] = keep - eps;
    buf.copy_from_host(v.data(), v.size() * 8, 0);
    const double down = loss();
    v[i] = keep;
    buf.copy_from_host(v.data(), v.size() * 8, 0);
    return (up - down) / (2 * eps);
  };
  std::mt19937 pick(seed);
  const auto probe = [&](Tensor& t, const Tensor& grad, const std::string& what) {
    ASSERT_EQ(grad.shape(), t.shape()) << what;
    const std::vector<double> gv = grad.contiguous().to_host<double>();
    for (int n = 0; n < 4; ++n) {
      const std::size_t i = pick() % gv.size();
      const double want = numeric(t, i);
      ASSERT_NEAR(gv[i], want, 1e-6 * (1 + std::abs(want))) << what << "[" << i << "]";
    }
  };
  probe(x, g.input, "input");
  probe(h0, g.h0, "h0");
  if (k.lstm) probe(c0, g.c0, "c0");
  for (std::size_t j = 0; j < w.size(); ++j) probe(w[j], g.weights[j], "weight " + std::to_string(j));
}

}  // namespace

TEST(Rnn, LstmBackwardMatchesFiniteDifferences) {
  check_grads({true, 5, 3, 4, 3, 2, true, true, true, false}, 11);
  check_grads({true, 4, 1, 3, 5, 1, false, false, false, false}, 12);
  check_grads({true, 3, 1, 2, 4, 1, true, true, false, true}, 13);
}

TEST(Rnn, GruBackwardMatchesFiniteDifferences) {
  check_grads({false, 5, 3, 4, 3, 2, true, true, false, false}, 21);
  check_grads({false, 4, 2, 3, 5, 1, false, false, true, false}, 22);
  check_grads({false, 3, 1, 2, 4, 2, false, true, false, true}, 23);
}

TEST(Rnn, BackwardRefusesMismatchedGradients) {
  const Tensor w_ih = host().zeros(Shape{12, 2}, DType::F32), w_hh = host().zeros(Shape{12, 3}, DType::F32);
  const Tensor x = host().zeros(Shape{5, 1, 2}, DType::F32);
  ops::RnnOptions o;
  EXPECT_FALSE(ops::lstm(x, {w_ih, w_hh}).tape);  // inference keeps nothing
  o.training = true;
  const ops::RnnResult r = ops::lstm(x, {w_ih, w_hh}, std::nullopt, std::nullopt, o);
  ASSERT_TRUE(r.tape);
  const auto code = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("rnn_backward"), std::string::npos) << e.what();
      return e.code();
    }
    ADD_FAILURE() << "no error";
    return ErrorCode::Internal;
  };
  EXPECT_EQ(code([&] {
              ops::rnn_backward(*r.tape, host().zeros(Shape{5, 1, 4}, DType::F32));
            }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(code([&] {
              ops::rnn_backward(*r.tape, host().zeros(Shape{5, 1, 3}, DType::F64));
            }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(
      code([&] {
        ops::rnn_backward(*r.tape, host().zeros(Shape{5, 1, 3}, DType::F32), host().zeros(Shape{2, 1, 3}, DType::F32));
      }),
      ErrorCode::ShapeMismatch);
  const ops::RnnResult gr =
      ops::gru(x, {host().zeros(Shape{9, 2}, DType::F32), host().zeros(Shape{9, 3}, DType::F32)}, std::nullopt, o);
  EXPECT_EQ(code([&] {
              ops::rnn_backward(*gr.tape, host().zeros(Shape{5, 1, 3}, DType::F32), std::nullopt,
                                host().zeros(Shape{1, 1, 3}, DType::F32));
            }),
            ErrorCode::InvalidArgument);
  // Zero gradients in, zero gradients out, shapes as the forward's.
  const ops::RnnGrads g = ops::rnn_backward(*r.tape, host().zeros(Shape{5, 1, 3}, DType::F32));
  EXPECT_EQ(g.input.shape(), x.shape());
  EXPECT_EQ(g.weights.size(), 2u);
  for (float v : g.weights[1].to_host<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(Rnn, BadWeightsAndStatesAreRefusedClearly) {
  const Tensor w_ih = host().zeros(Shape{12, 2}, DType::F32), w_hh = host().zeros(Shape{12, 3}, DType::F32);
  const Tensor x = host().zeros(Shape{5, 1, 2}, DType::F32);
  const auto code = [](auto&& f, const char* says) {
    try {
      f();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
      return e.code();
    }
    ADD_FAILURE() << "no error";
    return ErrorCode::Internal;
  };
  EXPECT_EQ(code([&] { ops::lstm(x, {w_ih}); }, "weight tensors"), ErrorCode::InvalidArgument);
  EXPECT_EQ(code(
                [&] {
                  ops::lstm(x, {w_ih, host().zeros(Shape{12, 4}, DType::F32)});
                },
                "w_hh"),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(code(
                [&] {
                  ops::lstm(host().zeros(Shape{5, 1, 3}, DType::F32), {w_ih, w_hh});
                },
                "w_ih"),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(code(
                [&] {
                  ops::gru(x, {w_ih, w_hh});
                },
                "w_hh"),
            ErrorCode::ShapeMismatch);  // 12 rows is not 3 * H for H = 3
  EXPECT_EQ(code(
                [&] {
                  ops::lstm(x, {w_ih, w_hh}, host().zeros(Shape{1, 2, 3}, DType::F32));
                },
                "h0"),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(code([&] { ops::lstm(x.cast(DType::F64), {w_ih, w_hh}); }, "f64"), ErrorCode::DTypeMismatch);
  ops::RnnOptions two;
  two.num_layers = 2;
  EXPECT_EQ(code(
                [&] {
                  ops::lstm(x, {w_ih, w_hh}, std::nullopt, std::nullopt, two);
                },
                "weight tensors"),
            ErrorCode::InvalidArgument);
  ops::RnnOptions none;  // 0 layers: an error, not a division by zero
  none.num_layers = 0;
  EXPECT_EQ(code(
                [&] {
                  ops::lstm(x, {w_ih, w_hh}, std::nullopt, std::nullopt, none);
                },
                "0 layer(s)"),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(code([&] { ops::gru(x, {w_ih, w_hh}, std::nullopt, none); }, "0 layer(s)"), ErrorCode::InvalidArgument);
  EXPECT_EQ(code(
                [&] {
                  ops::lstm(x, {w_ih, w_hh}, host().zeros(Shape{1, 1, 3}, DType::F64));
                },
                "h0 is f64"),
            ErrorCode::DTypeMismatch);
  // Cells name themselves and their state.
  const Tensor xb = host().zeros(Shape{2, 2}, DType::F32);
  EXPECT_EQ(code(
                [&] {
                  ops::lstm_cell(xb, host().zeros(Shape{3, 3}, DType::F32), host().zeros(Shape{2, 3}, DType::F32), w_ih,
                                 w_hh);
                },
                "lstm_cell"),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(code(
                [&] {
                  ops::gru_cell(xb, host().zeros(Shape{2, 3}, DType::F64), w_ih, w_hh);
                },
                "gru_cell"),
            ErrorCode::DTypeMismatch);
}

TEST(Rnn, UnbatchedCellsTakeOneDimensionalStates) {
  // PyTorch's LSTMCell / GRUCell take x [I] and h [H]; the result is [H].
  const Tensor w_ih = t32(rnd(4 * 3 * 2, 1), Shape{12, 2}), w_hh = t32(rnd(4 * 3 * 3, 2), Shape{12, 3});
  const Tensor x = t32(rnd(2, 3), Shape{2}), h = t32(rnd(3, 4), Shape{3}), c = t32(rnd(3, 5), Shape{3});
  const auto [h1, c1] = ops::lstm_cell(x, h, c, w_ih, w_hh);
  const auto [hb, cb] = ops::lstm_cell(x.unsqueeze(0), h.unsqueeze(0), c.unsqueeze(0), w_ih, w_hh);
  EXPECT_EQ(h1.shape(), (Shape{3}));
  EXPECT_EQ(h1.to_vector(), hb.to_vector());
  EXPECT_EQ(c1.to_vector(), cb.to_vector());
  const Tensor g_ih = t32(rnd(3 * 3 * 2, 7), Shape{9, 2}), g_hh = t32(rnd(3 * 3 * 3, 8), Shape{9, 3});
  const Tensor g = ops::gru_cell(x, h, g_ih, g_hh);
  EXPECT_EQ(g.shape(), (Shape{3}));
  EXPECT_EQ(g.to_vector(), ops::gru_cell(x.unsqueeze(0), h.unsqueeze(0), g_ih, g_hh).to_vector());
}

TEST(Rnn, BackwardOfAnEmptySequencePassesTheStatesThrough) {
  const Tensor w_ih = t32(rnd(4 * 3 * 2, 1), Shape{12, 2}), w_hh = t32(rnd(4 * 3 * 3, 2), Shape{12, 3});
  const Tensor b = t32(rnd(12, 3), Shape{12});
  ops::RnnOptions o;
  o.training = true;
  o.bidirectional = true;
  const ops::RnnResult r = ops::lstm(host().zeros(Shape{0, 2, 2}, DType::F32), {w_ih, w_hh, b, b, w_ih, w_hh, b, b},
                                     std::nullopt, std::nullopt, o);
  ASSERT_TRUE(r.tape);
  const Tensor gh = t32(rnd(2 * 2 * 3, 4), Shape{2, 2, 3}), gc = t32(rnd(2 * 2 * 3, 5), Shape{2, 2, 3});
  const ops::RnnGrads g = ops::rnn_backward(*r.tape, host().zeros(Shape{0, 2, 6}, DType::F32), gh, gc);
  EXPECT_EQ(g.input.shape(), (Shape{0, 2, 2}));
  EXPECT_EQ(g.h0.to_vector(), gh.to_vector());
  EXPECT_EQ(g.c0.to_vector(), gc.to_vector());
  ASSERT_EQ(g.weights.size(), 8u);
  for (std::size_t i = 0; i < g.weights.size(); ++i) {
    EXPECT_EQ(g.weights[i].shape(), i % 4 == 0 ? w_ih.shape() : i % 4 == 1 ? w_hh.shape() : b.shape());
    for (float v : g.weights[i].to_vector()) EXPECT_EQ(v, 0.0f);
  }
}
