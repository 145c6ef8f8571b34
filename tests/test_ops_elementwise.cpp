// Unary ops, reductions and norms on the CPU backend against f64 references.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "device_test_util.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
using torsh::test::error_code_of;
using torsh::test::make;
using torsh::test::rand_vec;

namespace {
Backend cpu() { return Backend::create(BackendType::Cpu); }
double ref_unary(rt::UnaryOp op, double x) {
  switch (op) {
    case rt::UnaryOp::Neg: return -x;
    case rt::UnaryOp::Abs: return std::fabs(x);
    case rt::UnaryOp::Exp: return std::exp(x);
    case rt::UnaryOp::Log: return std::log(x);
    case rt::UnaryOp::Sqrt: return std::sqrt(x);
    case rt::UnaryOp::Rsqrt: return 1 / std::sqrt(x);
    case rt::UnaryOp::Tanh: return std::tanh(x);
    case rt::UnaryOp::Sigmoid: return 1 / (1 + std::exp(-x));
    case rt::UnaryOp::Relu: return x > 0 ? x : 0;
    case rt::UnaryOp::Gelu: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case rt::UnaryOp::GeluTanh: return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case rt::UnaryOp::Silu: return x / (1 + std::exp(-x));
  }
  return 0;
}
}  // namespace

TEST(OpsUnary, AllOpsMatchReferenceOnOddSizes) {
  using U = rt::UnaryOp;
  for (U op : {U::Neg, U::Abs, U::Exp, U::Log, U::Sqrt, U::Rsqrt, U::Tanh, U::Sigmoid, U::Relu, U::Gelu, U::GeluTanh,
               U::Silu}) {
    const bool positive = op == U::Log || op == U::Sqrt || op == U::Rsqrt;
    for (int n : {1, 7, 33, 1023}) {
      auto v = rand_vec(n, n, positive ? 0.01f : -6.f, 6.f);
      auto got = ops::unary(op, make(v, {n})).to_vector();
      for (int i = 0; i < n; ++i) {
        const double r = ref_unary(op, v[i]);
        ASSERT_NEAR(got[i], r, 2e-6 * (1 + std::fabs(r))) << rt::unary_op_name(op) << " x=" << v[i];
      }
    }
  }
}

// Outputs larger than the last-level cache (48 MiB here) are written with
// non-temporal stores; every element must still land, including a tail and
// the row ends that are not on a 16-byte boundary.
TEST(OpsUnary, OutputsLargerThanTheCacheAreWrittenIntact) {
  const std::int64_t rows = 2929, cols = 4099, n = rows * cols;
  const auto v = rand_vec(static_cast<std::size_t>(n), 77, -4.f, 4.f);
  const Tensor x = make(v, {rows, cols});
  const auto gelu = ops::unary(rt::UnaryOp::Gelu, x).to_vector();
  const auto sum = ops::add(x, x).to_vector();
  const auto sm = ops::softmax(x).to_vector();
  const auto ln = ops::layer_norm(x).to_vector();
  for (std::int64_t r : {std::int64_t{0}, std::int64_t{1}, rows / 2, rows - 1}) {
    const float* xr = v.data() + r * cols;
    double mx = -1e30, se = 0, mean = 0, ss = 0;
    for (std::int64_t j = 0; j < cols; ++j) mx = std::max<double>(mx, xr[j]), mean += xr[j];
    mean /= static_cast<double>(cols);
    for (std::int64_t j = 0; j < cols; ++j) se += std::exp(xr[j] - mx), ss += (xr[j] - mean) * (xr[j] - mean);
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(cols) + 1e-5);
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::size_t i = static_cast<std::size_t>(r * cols + j);
      ASSERT_NEAR(gelu[i], ref_unary(rt::UnaryOp::Gelu, xr[j]), 2e-6 * (1 + std::fabs(xr[j]))) << "gelu at " << i;
      ASSERT_EQ(sum[i], xr[j] + xr[j]) << "add at " << i;
      ASSERT_NEAR(sm[i], std::exp(xr[j] - mx) / se, 1e-6 * std::exp(xr[j] - mx) / se + 1e-12) << "softmax at " << i;
      ASSERT_NEAR(ln[i], (xr[j] - mean) * inv, 1e-4) << "layer_norm at " << i;
    }
  }
}

TEST(OpsUnary, StridedInPlaceHalfAndSpecialValues) {
  auto v = rand_vec(12, 5, -3, 3);
  Tensor t = make(v, {3, 4});
  Tensor tt = t.transpose(0, 1);
  auto g = ops::exp(tt).to_vector();
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(g[j * 3 + i], std::exp(v[i * 4 + j]), 1e-5 * std::exp(3.0));
  ops::unary_out(rt::UnaryOp::Relu, t, t);
  for (float x : t.to_vector()) EXPECT_GE(x, 0.f);
  auto h = ops::silu(make(v, {12}).cast(DType::BF16)).to_vector();
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(h[i], ref_unary(rt::UnaryOp::Silu, bf16_to_f32(f32_to_bf16(v[i]))), 2e-2);
  auto s = ops::unary(rt::UnaryOp::Relu, make({NAN, -INFINITY, INFINITY}, {3})).to_vector();
  EXPECT_TRUE(std::isnan(s[0]));
  EXPECT_EQ(s[1], 0.f);
  EXPECT_EQ(s[2], INFINITY);
  EXPECT_TRUE(std::isnan(ops::log(make({-1.f}, {1})).to_vector()[0]));
  std::vector<std::int32_t> iv = {-3, 4};
  EXPECT_EQ(ops::abs(cpu().from_host(iv.data(), Shape{2}, DType::I32)).to_host<std::int32_t>(),
            (std::vector<std::int32_t>{3, 4}));
  EXPECT_EQ(error_code_of([&] { ops::exp(cpu().from_host(iv.data(), Shape{2}, DType::I32)); }),
            ErrorCode::DTypeMismatch);
  Tensor out = make({0, 0}, {2});
  EXPECT_EQ(error_code_of([&] { ops::unary_out(rt::UnaryOp::Exp, t, out); }), ErrorCode::ShapeMismatch);
  auto p = ops::pow(make({2, 9, 4}, {3}), make({3, 0.5f, -1}, {3})).to_vector();
  EXPECT_FLOAT_EQ(p[0], 8.f);
  EXPECT_FLOAT_EQ(p[1], 3.f);
  EXPECT_FLOAT_EQ(p[2], 0.25f);
}

TEST(OpsReduce, AnyAxesKeepdimAndDtypes) {
  const int A = 3, B = 5, C = 7;
  auto v = rand_vec(A * B * C, 9, -3, 3);
  Tensor x = make(v, {A, B, C});
  auto at = [&](int a, int b, int c) { return double(v[(a * B + b) * C + c]); };
  // sum over {0, 2} (not a block) and mean over {1}
  auto s = ops::sum(x, {0, 2});
  EXPECT_EQ(s.shape(), Shape{B});
  auto sv = s.to_vector();
  for (int b = 0; b < B; ++b) {
    double r = 0;
    for (int a = 0; a < A; ++a)
      for (int c = 0; c < C; ++c) r += at(a, b, c);
    EXPECT_NEAR(sv[b], r, 1e-4);
  }
  auto m = ops::mean(x, {1}, true);
  EXPECT_EQ(m.shape(), (Shape{A, 1, C}));
  auto mv = m.to_vector();
  for (int a = 0; a < A; ++a)
    for (int c = 0; c < C; ++c) {
      double r = 0;
      for (int b = 0; b < B; ++b) r += at(a, b, c);
      EXPECT_NEAR(mv[a * C + c], r / B, 1e-5);
    }
  auto var = ops::var(x, {-1}).to_vector();
  for (int a = 0; a < A; ++a)
    for (int b = 0; b < B; ++b) {
      double mu = 0, q = 0;
      for (int c = 0; c < C; ++c) mu += at(a, b, c);
      mu /= C;
      for (int c = 0; c < C; ++c) q += (at(a, b, c) - mu) * (at(a, b, c) - mu);
      EXPECT_NEAR(var[a * B + b], q / (C - 1), 1e-4);
    }
  auto mx = ops::max(x).to_vector();
  EXPECT_EQ(mx.size(), 1u);
  EXPECT_EQ(mx[0], *std::max_element(v.begin(), v.end()));
  EXPECT_EQ(ops::min(x, {0, 1, 2}).to_vector()[0], *std::min_element(v.begin(), v.end()));
  auto am = ops::argmax(x, 1).to_host<std::int64_t>();
  for (int a = 0; a < A; ++a)
    for (int c = 0; c < C; ++c) {
      int best = 0;
      for (int b = 1; b < B; ++b)
        if (at(a, b, c) > at(a, best, c)) best = b;
      EXPECT_EQ(am[a * C + c], best);
    }
  EXPECT_EQ(ops::argmax(make({1, NAN, 5}, {3}), 0).to_host<std::int64_t>()[0], 1);
  EXPECT_TRUE(std::isnan(ops::max(make({1, NAN, 5}, {3})).to_vector()[0]));
  EXPECT_EQ(ops::sum(cpu().empty(Shape{0, 3}, DType::F32), {0}).to_vector(), std::vector<float>(3, 0.f));
  EXPECT_TRUE(std::isnan(ops::mean(cpu().empty(Shape{0}, DType::F32)).to_vector()[0]));
  EXPECT_EQ(error_code_of([&] { ops::max(cpu().empty(Shape{0}, DType::F32)); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_code_of([&] { ops::sum(x, {3}); }), ErrorCode::OutOfRange);
  EXPECT_EQ(error_code_of([&] { ops::sum(x, {1, -2}); }), ErrorCode::InvalidArgument);
  // Large-magnitude sums keep precision (lane accumulation).
  std::vector<float> ones(1 << 20, 1.0f);
  EXPECT_EQ(ops::sum(make(ones, {1 << 20})).to_vector()[0], float(1 << 20));
}

TEST(OpsNorm, LayerNormRmsNormBatchNorm) {
  const int R = 6, N = 33;
  auto v = rand_vec(R * N, 3, -4, 4), w = rand_vec(N, 4, -3, 3), b = rand_vec(N, 5, -3, 3);
  auto ln = ops::layer_norm(make(v, {2, 3, N}), make(w, {N}), make(b, {N}), 1e-5f).to_vector();
  auto rn = ops::rms_norm(make(v, {R, N}), make(w, {N}), 1e-6f).to_vector();
  for (int r = 0; r < R; ++r) {
    double mu = 0, q = 0, sq = 0;
    for (int i = 0; i < N; ++i) mu += v[r * N + i], sq += double(v[r * N + i]) * v[r * N + i];
    mu /= N;
    for (int i = 0; i < N; ++i) q += (v[r * N + i] - mu) * (v[r * N + i] - mu);
    const double inv = 1 / std::sqrt(q / N + 1e-5), rinv = 1 / std::sqrt(sq / N + 1e-6);
    for (int i = 0; i < N; ++i) {
      EXPECT_NEAR(ln[r * N + i], (v[r * N + i] - mu) * inv * w[i] + b[i], 1e-5);
      EXPECT_NEAR(rn[r * N + i], v[r * N + i] * rinv * w[i], 1e-5);
    }
  }
  EXPECT_EQ(error_code_of([&] { ops::layer_norm(make(v, {R, N}), make(w, {N - 1})); }), ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_code_of([&] {
              ops::rms_norm(make(v, {R, N}), make(w, {N}).cast(DType::F16));
            }),
            ErrorCode::DTypeMismatch);

  // batch_norm: x [2, 3, 4]
  const int Nb = 2, C = 3, S = 4;
  auto xb = rand_vec(Nb * C * S, 7, -3, 3);
  Tensor rm = make({0, 0, 0}, {C}), rv = make({1, 1, 1}, {C});
  auto y = ops::batch_norm(make(xb, {Nb, C, S}), rm, rv, std::nullopt, std::nullopt, true, 0.1f, 1e-5f).to_vector();
  auto rmv = rm.to_vector(), rvv = rv.to_vector();
  for (int c = 0; c < C; ++c) {
    double mu = 0, q = 0;
    for (int n = 0; n < Nb; ++n)
      for (int i = 0; i < S; ++i) mu += xb[(n * C + c) * S + i];
    mu /= Nb * S;
    for (int n = 0; n < Nb; ++n)
      for (int i = 0; i < S; ++i) q += std::pow(xb[(n * C + c) * S + i] - mu, 2);
    for (int n = 0; n < Nb; ++n)
      for (int i = 0; i < S; ++i)
        EXPECT_NEAR(y[(n * C + c) * S + i], (xb[(n * C + c) * S + i] - mu) / std::sqrt(q / (Nb * S) + 1e-5), 1e-5);
    EXPECT_NEAR(rmv[c], 0.1 * mu, 1e-6);
    EXPECT_NEAR(rvv[c], 0.9 + 0.1 * q / (Nb * S - 1), 1e-6);
  }
  auto yi = ops::batch_norm(make(xb, {Nb, C, S}), rm, rv).to_vector();
  EXPECT_NEAR(yi[0], (xb[0] - rmv[0]) / std::sqrt(rvv[0] + 1e-5), 1e-5);
  EXPECT_EQ(error_code_of([&] {
              ops::batch_norm(make(xb, {Nb, C, S}), std::nullopt, std::nullopt);
            }),
            ErrorCode::InvalidArgument);
}
