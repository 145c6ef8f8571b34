// RoPE, attention, conv2d, pooling, Adam and random numbers on the CPU
// backend, each against a naive f64 reference written here.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>

#include "backends/cpu/philox.hpp"
#include "device_test_util.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
using torsh::test::error_code_of;
using torsh::test::make;
using torsh::test::rand_vec;

namespace {
Backend host() { return Backend::create(BackendType::Cpu); }
}  // namespace

TEST(OpsRope, NeoXAndGptJLayouts) {
  const int B = 2, S = 5, H = 3, D = 8, rot = 6, pos0 = 3;
  Backend b = host();
  auto [cs, sn] = ops::rope_cache(b, 16, rot);
  auto v = rand_vec(B * S * H * D, 1);
  for (auto style : {ops::RopeStyle::NeoX, ops::RopeStyle::GptJ}) {
    auto got = ops::rope(make(v, {B, S, H, D}), cs, sn, style, pos0, rot).to_vector();
    for (int bs = 0; bs < B * S; ++bs)
      for (int h = 0; h < H; ++h) {
        const int pos = pos0 + bs % S;
        const float* x = v.data() + (bs * H + h) * D;
        const float* y = got.data() + (bs * H + h) * D;
        for (int i = 0; i < rot / 2; ++i) {
          const double th = pos * std::pow(10000.0, -2.0 * i / rot);
          const int i0 = style == ops::RopeStyle::NeoX ? i : 2 * i,
                    i1 = style == ops::RopeStyle::NeoX ? i + rot / 2 : 2 * i + 1;
          EXPECT_NEAR(y[i0], x[i0] * std::cos(th) - x[i1] * std::sin(th), 1e-5);
          EXPECT_NEAR(y[i1], x[i1] * std::cos(th) + x[i0] * std::sin(th), 1e-5);
        }
        for (int i = rot; i < D; ++i) EXPECT_EQ(y[i], x[i]);
      }
  }
  EXPECT_EQ(error_code_of([&] {
              ops::rope(make(v, {B, S, H, D}), cs, sn, ops::RopeStyle::NeoX, 12, rot);
            }),
            ErrorCode::OutOfRange);
  EXPECT_EQ(error_code_of([&] {
              ops::rope(make(v, {B, S, H, D}), cs, sn, ops::RopeStyle::NeoX, 0, 4);
            }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_code_of([&] { ops::rope(make(v, {B * S, H, D}), cs, sn); }), ErrorCode::ShapeMismatch);
}

namespace {
std::vector<double> ref_attention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                                  int B, int Hq, int Hkv, int Sq, int Skv, int D, bool causal,
                                  bool bottom_right = false, int window = 0, double softcap = 0) {
  std::vector<double> out(static_cast<std::size_t>(B) * Hq * Sq * D);
  const double scale = 1 / std::sqrt(double(D));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hq; ++h) {
      const int kh = h / (Hq / Hkv);
      for (int i = 0; i < Sq; ++i) {
        std::vector<double> s(Skv, -INFINITY);
        double mx = -INFINITY;
        for (int j = 0; j < Skv; ++j) {
          const int last = i + (bottom_right ? Skv - Sq : 0);
          if (causal && j > last) continue;
          if (window > 0 && j <= last - window) continue;  // outside the sliding window
          double d = 0;
          for (int t = 0; t < D; ++t)
            d += double(q[((b * Hq + h) * Sq + i) * D + t]) * k[((b * Hkv + kh) * Skv + j) * D + t];
          s[j] = d * scale;
          if (softcap > 0) s[j] = softcap * std::tanh(s[j] / softcap);
          mx = std::max(mx, s[j]);
        }
        if (mx == -INFINITY) continue;  // a query that sees no key: zeros
        double sum = 0;
        for (int j = 0; j < Skv; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (int t = 0; t < D; ++t) {
          double acc = 0;
          for (int j = 0; j < Skv; ++j) acc += s[j] * v[((b * Hkv + kh) * Skv + j) * D + t];
          out[((b * Hq + h) * Sq + i) * D + t] = acc / sum;
        }
      }
    }
  return out;
}
}  // namespace

TEST(OpsAttention, MatchesReferenceCausalAndGrouped) {
  struct Case {
    int B, Hq, Hkv, Sq, Skv, D;
    bool causal;
  };
  for (auto c : {Case{1, 1, 1, 1, 1, 4, false}, Case{2, 4, 2, 33, 33, 16, true}, Case{1, 2, 1, 7, 200, 8, false},
                 Case{1, 8, 8, 130, 130, 64, true}, Case{1, 2, 2, 3, 150, 8, true}, Case{1, 2, 1, 70, 9, 8, true},
                 Case{1, 1, 1, 1, 40, 8, true},
                 // Decoding (the split-K path): deep caches, a few rows per head group, odd head sizes.
                 Case{1, 9, 3, 1, 4096, 64, true}, Case{2, 8, 2, 3, 1000, 64, true}, Case{1, 4, 4, 1, 777, 40, true},
                 Case{1, 6, 1, 2, 1500, 96, false}})
    for (bool bottom_right : {false, true}) {
      auto q = rand_vec(c.B * c.Hq * c.Sq * c.D, 1), k = rand_vec(c.B * c.Hkv * c.Skv * c.D, 2),
           v = rand_vec(c.B * c.Hkv * c.Skv * c.D, 3);
      auto got = ops::attention(make(q, {c.B, c.Hq, c.Sq, c.D}), make(k, {c.B, c.Hkv, c.Skv, c.D}),
                                make(v, {c.B, c.Hkv, c.Skv, c.D}), c.causal, std::nullopt,
                                bottom_right ? ops::CausalAlign::BottomRight : ops::CausalAlign::TopLeft)
                     .to_vector();
      auto ref = ref_attention(q, k, v, c.B, c.Hq, c.Hkv, c.Sq, c.Skv, c.D, c.causal, bottom_right);
      for (std::size_t i = 0; i < ref.size(); ++i) {
        // Never NaN: with Sq > Skv, bottom-right rows that see no key are zeros.
        ASSERT_FALSE(std::isnan(got[i])) << "Sq=" << c.Sq << " Skv=" << c.Skv << " i=" << i;
        ASSERT_NEAR(got[i], ref[i], 2e-5)
            << "Sq=" << c.Sq << " Skv=" << c.Skv << " bottom_right=" << bottom_right << " i=" << i;
      }
    }
  // A large-magnitude query must not overflow the online softmax.
  std::vector<float> q(8, 100.f), k = rand_vec(4 * 8, 5), v = rand_vec(4 * 8, 6);
  auto big = ops::attention(make(q, {1, 1, 1, 8}), make(k, {1, 1, 4, 8}), make(v, {1, 1, 4, 8})).to_vector();
  for (float x : big) EXPECT_TRUE(std::isfinite(x));
  EXPECT_EQ(error_code_of([&] {
              ops::attention(make(q, {1, 1, 1, 8}), make(k, {1, 1, 4, 8}), make(v, {1, 1, 8, 4}));
            }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_code_of([&] {
              ops::attention(make(rand_vec(24, 1), {1, 3, 1, 8}), make(k, {1, 2, 2, 8}), make(v, {1, 2, 2, 8}));
            }),
            ErrorCode::ShapeMismatch);
  // Seed-002 helpers are matmuls.
  auto w = rand_vec(12, 7), x = rand_vec(4, 8);
  auto mv = ops::matmul_vec(make(w, {3, 4}), make(x, {4})).to_vector();
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(mv[i], w[i * 4] * x[0] + w[i * 4 + 1] * x[1] + w[i * 4 + 2] * x[2] + w[i * 4 + 3] * x[3], 1e-6);
  auto ws = ops::weighted_sum_rows(make({1, 2, 3}, {3}), make(w, {3, 4})).to_vector();
  EXPECT_NEAR(ws[1], w[1] + 2 * w[5] + 3 * w[9], 1e-6);
}

// conv2d in f64 at output (n, k, p, q), with the sum of |terms| beside it
// (the scale of the rounding error).
struct ConvRef {
  double value, magnitude;
};
ConvRef ref_conv_at(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& bias, int C,
                    int H, int W, int K, int R, int S, const ops::Conv2dParams& cp, int n, int k, int p, int q) {
  const int G = int(cp.groups), Cg = C / G, Kg = K / G, g = k / Kg;
  ConvRef r{bias.empty() ? 0.0 : bias[k], 0.0};
  for (int ci = 0; ci < Cg; ++ci)
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < S; ++j) {
        const int h = p * int(cp.stride_h) - int(cp.pad_h) + i * int(cp.dil_h);
        const int ww = q * int(cp.stride_w) - int(cp.pad_w) + j * int(cp.dil_w);
        if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
        const double t = double(x[((n * C + g * Cg + ci) * H + h) * W + ww]) * w[((k * Cg + ci) * R + i) * S + j];
        r.value += t;
        r.magnitude += std::fabs(t);
      }
  return r;
}

TEST(OpsConv, MatchesReferenceWithStrideDilationGroupsBias) {
  struct Case {
    int N, C, H, W, K, R, S;
    ops::Conv2dParams p;
  };
  for (auto c :
       {Case{1, 1, 5, 5, 1, 3, 3, {}}, Case{2, 4, 9, 7, 6, 3, 3, {2, 1, 1, 1, 1, 1, 2}},
        Case{1, 6, 8, 8, 4, 3, 3, {1, 1, 2, 2, 2, 2, 2}}, Case{2, 8, 5, 5, 8, 1, 1, {}},
        Case{1, 4, 6, 6, 4, 3, 3, {1, 1, 1, 1, 1, 1, 4}},
        // Padding wider than the image (whole rows and columns of taps
        // fall outside), a width stride of 3, a strided 1x1.
        Case{1, 2, 4, 3, 3, 3, 3, {2, 3, 3, 3, 1, 2, 1}}, Case{2, 3, 7, 9, 5, 1, 1, {2, 2, 0, 1, 1, 1, 1}},
        // Batches that split unevenly over threads (one image per thread, or images in turn).
        Case{3, 3, 5, 6, 4, 3, 3, {1, 1, 1, 1, 1, 1, 1}}, Case{9, 2, 5, 5, 4, 3, 3, {1, 1, 1, 1, 1, 1, 2}},
        // Several k blocks and column panels of the GEMM, on one image
        // split over the threads and on one image per thread.
        Case{1, 32, 30, 30, 16, 3, 3, {1, 1, 1, 1, 1, 1, 1}}, Case{2, 40, 12, 11, 20, 3, 3, {1, 1, 1, 1, 1, 1, 1}}}) {
    const int G = int(c.p.groups), Cg = c.C / G, Kg = c.K / G;
    auto x = rand_vec(c.N * c.C * c.H * c.W, 1), w = rand_vec(c.K * Cg * c.R * c.S, 2), bias = rand_vec(c.K, 3);
    Tensor out = ops::conv2d(make(x, {c.N, c.C, c.H, c.W}), make(w, {c.K, Cg, c.R, c.S}), make(bias, {c.K}), c.p);
    const int P = int(out.shape()[2]), Q = int(out.shape()[3]);
    EXPECT_EQ(P, (c.H + 2 * c.p.pad_h - c.p.dil_h * (c.R - 1) - 1) / c.p.stride_h + 1);
    auto got = out.to_vector();
    for (int n = 0; n < c.N; ++n)
      for (int k = 0; k < c.K; ++k)
        for (int p = 0; p < P; ++p)
          for (int q = 0; q < Q; ++q) {
            double acc = bias[k];
            const int g = k / Kg;
            for (int ci = 0; ci < Cg; ++ci)
              for (int r = 0; r < c.R; ++r)
                for (int s = 0; s < c.S; ++s) {
                  const int h = p * c.p.stride_h - c.p.pad_h + r * c.p.dil_h,
                            ww = q * c.p.stride_w - c.p.pad_w + s * c.p.dil_w;
                  if (h < 0 || h >= c.H || ww < 0 || ww >= c.W) continue;
                  acc += double(x[((n * c.C + g * Cg + ci) * c.H + h) * c.W + ww]) *
                         w[((k * Cg + ci) * c.R + r) * c.S + s];
                }
            ASSERT_NEAR(got[((n * c.K + k) * P + p) * Q + q], acc, 1e-4);
          }
  }
  auto x = rand_vec(2 * 3 * 4 * 4, 1);
  EXPECT_EQ(error_code_of([&] {
              ops::conv2d(make(x, {2, 3, 4, 4}), make(rand_vec(2 * 2 * 9, 1), {2, 2, 3, 3}));
            }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_code_of([&] {
              ops::conv2d(make(x, {2, 3, 4, 4}), make(rand_vec(3 * 3 * 25, 1), {3, 3, 5, 5}));
            }),
            ErrorCode::ShapeMismatch);
  ops::Conv2dParams bad;
  bad.stride_h = 0;
  EXPECT_EQ(error_code_of([&] {
              ops::conv2d(make(x, {2, 3, 4, 4}), make(rand_vec(27, 1), {1, 3, 3, 3}), std::nullopt, bad);
            }),
            ErrorCode::InvalidArgument);
}

// Winograd F(2x2, 3x3), asked for and picked by Auto: odd and even output
// sizes (partial tiles), padding 0 to 2, groups, a batch whose tile rows
// split into several chunks, bias. Its error grows with the magnitude of
// the terms, a few times the direct sum's.
TEST(OpsConv, WinogradMatchesReference) {
  struct Case {
    int N, C, H, W, K;
    ops::Conv2dParams p;
  };
  for (auto algo : {ops::ConvAlgo::Winograd, ops::ConvAlgo::Auto, ops::ConvAlgo::Gemm})
    for (auto c : {Case{1, 1, 5, 5, 1, {}}, Case{2, 3, 7, 9, 5, {1, 1, 1, 1}}, Case{1, 4, 4, 4, 2, {1, 1, 2, 2}},
                   Case{2, 8, 6, 11, 6, {1, 1, 1, 0, 1, 1, 2}}, Case{1, 2, 3, 3, 3, {1, 1, 0, 0}},
                   Case{3, 20, 30, 29, 24, {1, 1, 1, 1}}, Case{2, 32, 9, 9, 32, {1, 1, 1, 1, 1, 1, 2}},
                   Case{1, 17, 64, 70, 19, {1, 1, 1, 1}}}) {
      c.p.algo = algo;
      const int Cg = c.C / int(c.p.groups);
      auto x = rand_vec(c.N * c.C * c.H * c.W, 11), w = rand_vec(c.K * Cg * 9, 12), bias = rand_vec(c.K, 13);
      Tensor out = ops::conv2d(make(x, {c.N, c.C, c.H, c.W}), make(w, {c.K, Cg, 3, 3}), make(bias, {c.K}), c.p);
      const int P = int(out.shape()[2]), Q = int(out.shape()[3]);
      ASSERT_EQ(P, c.H + 2 * int(c.p.pad_h) - 2);
      ASSERT_EQ(Q, c.W + 2 * int(c.p.pad_w) - 2);
      auto got = out.to_vector();
      for (int n = 0; n < c.N; ++n)
        for (int k = 0; k < c.K; ++k)
          for (int p = 0; p < P; ++p)
            for (int q = 0; q < Q; ++q) {
              const ConvRef r = ref_conv_at(x, w, bias, c.C, c.H, c.W, c.K, 3, 3, c.p, n, k, p, q);
              ASSERT_NEAR(got[((n * c.K + k) * P + p) * Q + q], r.value, 1e-5 + 2e-6 * r.magnitude)
                  << "algo " << int(algo) << " C=" << c.C << " H=" << c.H << " W=" << c.W << " at " << n << "," << k
                  << "," << p << "," << q;
            }
    }
  // Winograd where it does not apply: a clear error, not a silent fallback.
  auto x = rand_vec(2 * 4 * 6 * 6, 1);
  ops::Conv2dParams strided;
  strided.stride_h = strided.stride_w = 2;
  strided.algo = ops::ConvAlgo::Winograd;
  EXPECT_EQ(error_code_of([&] {
              ops::conv2d(make(x, {2, 4, 6, 6}), make(rand_vec(4 * 4 * 9, 2), {4, 4, 3, 3}), std::nullopt, strided);
            }),
            ErrorCode::InvalidArgument);
  ops::Conv2dParams wino;
  wino.algo = ops::ConvAlgo::Winograd;
  EXPECT_EQ(error_code_of([&] {
              ops::conv2d(make(x, {2, 4, 6, 6}), make(rand_vec(4 * 4 * 25, 2), {4, 4, 5, 5}), std::nullopt, wino);
            }),
            ErrorCode::InvalidArgument);
  const Tensor x64 = host().from_host(std::vector<double>(2 * 4 * 6 * 6, 1.0).data(), {2, 4, 6, 6}, DType::F64);
  const Tensor w64 = host().from_host(std::vector<double>(4 * 4 * 9, 1.0).data(), {4, 4, 3, 3}, DType::F64);
  EXPECT_EQ(error_code_of([&] { ops::conv2d(x64, w64, std::nullopt, wino); }), ErrorCode::InvalidArgument);
}

TEST(OpsPool, MaxAndAvgWithPadding) {
  auto v = rand_vec(1 * 2 * 5 * 5, 4);
  ops::Pool2dParams p;
  p.kernel_h = p.kernel_w = 3;
  p.stride_h = p.stride_w = 2;
  p.pad_h = p.pad_w = 1;
  auto mx = ops::max_pool2d(make(v, {1, 2, 5, 5}), p);
  EXPECT_EQ(mx.shape(), (Shape{1, 2, 3, 3}));
  p.count_include_pad = false;
  auto av = ops::avg_pool2d(make(v, {1, 2, 5, 5}), p).to_vector();
  auto mv = mx.to_vector();
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double best = -INFINITY, sum = 0;
        int cnt = 0;
        for (int r = 0; r < 3; ++r)
          for (int s = 0; s < 3; ++s) {
            const int h = i * 2 - 1 + r, w = j * 2 - 1 + s;
            if (h < 0 || h >= 5 || w < 0 || w >= 5) continue;
            best = std::max(best, double(v[(c * 5 + h) * 5 + w]));
            sum += v[(c * 5 + h) * 5 + w];
            ++cnt;
          }
        EXPECT_FLOAT_EQ(mv[(c * 3 + i) * 3 + j], float(best));
        EXPECT_NEAR(av[(c * 3 + i) * 3 + j], sum / cnt, 1e-6);
      }
  ops::Pool2dParams big;
  big.kernel_h = big.kernel_w = 7;
  EXPECT_EQ(error_code_of([&] { ops::max_pool2d(make(v, {1, 2, 5, 5}), big); }), ErrorCode::ShapeMismatch);
}

TEST(OpsAdam, AdamAndAdamWMatchReferenceOverSteps) {
  for (bool adamw : {false, true}) {
    ops::AdamConfig cfg;
    cfg.lr = 0.01f;
    cfg.weight_decay = 0.1f;
    cfg.adamw = adamw;
    const int n = 37;
    auto p0 = rand_vec(n, 1);
    std::vector<Tensor> params{make(p0, {n})}, m{make(std::vector<float>(n, 0.f), {n})},
        v{make(std::vector<float>(n, 0.f), {n})};
    std::vector<double> rp(p0.begin(), p0.end()), rm(n, 0), rv(n, 0);
    for (int step = 1; step <= 3; ++step) {
      auto g = rand_vec(n, 10 + step);
      ops::adam_step(params, {make(g, {n})}, m, v, cfg, step);
      for (int i = 0; i < n; ++i) {
        double gi = g[i];
        if (!adamw)
          gi += cfg.weight_decay * rp[i];
        else
          rp[i] *= 1 - cfg.lr * cfg.weight_decay;
        rm[i] = 0.9 * rm[i] + 0.1 * gi;
        rv[i] = 0.999 * rv[i] + 0.001 * gi * gi;
        const double mh = rm[i] / (1 - std::pow(0.9, step)), vh = rv[i] / (1 - std::pow(0.999, step));
        rp[i] -= cfg.lr * mh / (std::sqrt(vh) + cfg.eps);
      }
    }
    auto got = params[0].to_vector();
    for (int i = 0; i < n; ++i) EXPECT_NEAR(got[i], rp[i], 1e-5) << (adamw ? "adamw" : "adam");
  }
  // Bad input changes nothing.
  std::vector<Tensor> p{make({1, 2}, {2})}, m{make({0, 0}, {2})}, v{make({0, 0}, {2})};
  EXPECT_EQ(error_code_of([&] { ops::adam_step(p, {make({1, 2, 3}, {3})}, m, v, {}, 1); }), ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_code_of([&] { ops::adam_step(p, {}, m, v, {}, 1); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(p[0].to_vector(), (std::vector<float>{1, 2}));
}

// Units in the last place of the f32 nearest `want` between got and want.
static double ulps_off(float got, double want) {
  const float w = static_cast<float>(want);
  const double ulp = std::nextafter(std::abs(w), INFINITY) - std::abs(w);
  return std::abs(static_cast<double>(got) - want) / ulp;
}

TEST(OpsRandom, BoxMullerMathIsWithinAFewUlpsOfLibm) {
  namespace px = torsh::cpu::philox;
  // Every input Box-Muller gives them: u = k / 2^24.
  double worst_log = 0, worst_sin = 0, worst_cos = 0, worst_sqrt = 0;
  for (std::uint32_t k = 0; k < (1u << 24); ++k) {
    const float u = static_cast<float>(k) / 16777216.0f;
    // libm in f64 on the angle less its nearest quarter turn q (exact in f64),
    // so the reference keeps its digits near the zeros as well.
    const double q = std::nearbyint(4.0 * u), x = 2.0 * M_PI * (static_cast<double>(u) - q / 4.0);
    const int quadrant = static_cast<int>(q) & 3;
    const double sn = std::sin(x), cs = std::cos(x);
    const double want_sin = quadrant == 0 ? sn : quadrant == 1 ? cs : quadrant == 2 ? -sn : -cs;
    const double want_cos = quadrant == 0 ? cs : quadrant == 1 ? -sn : quadrant == 2 ? -cs : sn;
    worst_sin = std::max(worst_sin, ulps_off(px::philox_sincos_turns(u, 0), want_sin));
    worst_cos = std::max(worst_cos, ulps_off(px::philox_sincos_turns(u, 1), want_cos));
    const float u1 = static_cast<float>(k + 1) / 16777216.0f;
    if (u1 < 1.0f) worst_log = std::max(worst_log, ulps_off(px::philox_log(u1), std::log(static_cast<double>(u1))));
    const float v = -2.0f * std::log(u1);
    worst_sqrt = std::max(worst_sqrt, ulps_off(px::philox_sqrt(v), std::sqrt(static_cast<double>(v))));
  }
  // sin and cos near their zeros are judged by the ulp of the tiny result:
  // the reduction is exact, so they stay close even there.
  EXPECT_LE(worst_log, 2.0);
  EXPECT_LE(worst_sqrt, 1.0);
  EXPECT_LE(worst_sin, 2.0);
  EXPECT_LE(worst_cos, 2.0);
  EXPECT_EQ(px::philox_log(1.0f), 0.0f);
  EXPECT_EQ(px::philox_sqrt(0.0f), 0.0f);
  EXPECT_EQ(px::philox_sincos_turns(0.25f, 0), 1.0f);
  EXPECT_EQ(px::philox_sincos_turns(0.0f, 1), 1.0f);
  std::cout << "max ulps from libm (f64): log " << worst_log << ", sqrt " << worst_sqrt << ", sin " << worst_sin
            << ", cos " << worst_cos << "\n";
}

TEST(OpsRandom, PhiloxKnownAnswersAndReproducibility) {
  // Random123 known-answer vectors for philox4x32-10.
  auto z = torsh::cpu::philox::philox4x32_10_full(0, 0, 0, 0, 0, 0);
  EXPECT_EQ(z.v[0], 0x6627e8d5u);
  EXPECT_EQ(z.v[1], 0xe169c58du);
  EXPECT_EQ(z.v[2], 0xbc57ac4cu);
  EXPECT_EQ(z.v[3], 0x9b00dbd8u);
  auto f = torsh::cpu::philox::philox4x32_10_full(~0u, ~0u, ~0u, ~0u, ~0u, ~0u);
  EXPECT_EQ(f.v[0], 0x408f276du);
  EXPECT_EQ(f.v[3], 0x6d5451fdu);
  auto pi =
      torsh::cpu::philox::philox4x32_10_full(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0);
  EXPECT_EQ(pi.v[0], 0xd16cfe09u);
  EXPECT_EQ(pi.v[1], 0x94fdccebu);
  EXPECT_EQ(pi.v[2], 0x5001e420u);
  EXPECT_EQ(pi.v[3], 0x24126ea1u);

  Backend b = host();
  const int n = 1 << 18;
  auto u1 = ops::rand(b, Shape{n}, 42).to_vector();
  Backend one = Backend::builder().backend_type(BackendType::Cpu).num_threads(1).build();
  auto u_single = ops::rand(one, Shape{n}, 42).to_vector();
  Backend::builder().backend_type(BackendType::Cpu).num_threads(2).build();
  EXPECT_EQ(u1, u_single);  // independent of the thread count
  EXPECT_NE(u1, ops::rand(b, Shape{n}, 43).to_vector());
  // Offsets continue the stream: elements [4, n) of seed 42 == offset 1.
  auto shifted = ops::rand(b, Shape{n - 4}, 42, DType::F32, 0, 1, 1).to_vector();
  EXPECT_TRUE(std::equal(shifted.begin(), shifted.end(), u1.begin() + 4));
  double mean = 0, var = 0;
  for (float x : u1) {
    ASSERT_GE(x, 0.f);
    ASSERT_LT(x, 1.f);
    mean += x;
  }
  mean /= n;
  EXPECT_NEAR(mean, 0.5, 0.005);
  auto g = ops::randn(b, Shape{n}, 7, DType::F32, 2.0f, 3.0f).to_vector();
  mean = 0;
  for (float x : g) mean += x;
  mean /= n;
  for (float x : g) var += (x - mean) * (x - mean);
  var /= n;
  EXPECT_NEAR(mean, 2.0, 0.03);
  EXPECT_NEAR(std::sqrt(var), 3.0, 0.03);
  auto bern = ops::bernoulli(b, Shape{n}, 0.25f, 9).to_vector();
  double ones = 0;
  for (float x : bern) {
    ASSERT_TRUE(x == 0.f || x == 1.f);
    ones += x;
  }
  EXPECT_NEAR(ones / n, 0.25, 0.005);
  EXPECT_EQ(ops::rand(b, Shape{8}, 1, DType::BF16).dtype(), DType::BF16);
  EXPECT_EQ(error_code_of([&] { ops::rand(b, Shape{4}, 1, DType::F32, 1.f, 1.f); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_code_of([&] { ops::bernoulli(b, Shape{4}, 1.5f, 1); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_code_of([&] { ops::randn(b, Shape{4}, 1, DType::I32); }), ErrorCode::DTypeMismatch);
}

// A sliding window and a logit soft-cap (Mistral's / Gemma's local layers,
// Gemma 2) on both CPU paths: prompts (flash tiles, windows starting inside
// a key tile) and decoding (split-K, the window cutting the cache), windows
// shorter and longer than the tiles; on a q8_0 cache against the same cache
// dequantized.
TEST(OpsAttention, SlidingWindowAndSoftCapMatchReference) {
  struct Case {
    int B, Hq, Hkv, Sq, Skv, D, window;
    float softcap;
  };
  for (auto c :
       {Case{1, 2, 1, 70, 70, 16, 5, 0}, Case{1, 4, 2, 130, 300, 64, 100, 0}, Case{2, 2, 2, 33, 33, 8, 1, 0},
        Case{1, 2, 1, 300, 300, 64, 257, 0}, Case{1, 4, 4, 40, 40, 16, 0, 2.5f}, Case{1, 4, 2, 70, 90, 64, 30, 1.0f},
        Case{1, 9, 3, 1, 2000, 64, 512, 0}, Case{2, 8, 2, 3, 1000, 64, 300, 50.0f}, Case{1, 4, 4, 1, 777, 40, 4096, 0},
        Case{1, 6, 1, 2, 1500, 96, 0, 0.5f}})
    for (bool bottom_right : {false, true}) {
      auto q = rand_vec(c.B * c.Hq * c.Sq * c.D, 1), k = rand_vec(c.B * c.Hkv * c.Skv * c.D, 2),
           v = rand_vec(c.B * c.Hkv * c.Skv * c.D, 3);
      for (auto& x : q) x *= 4.0f;  // scores large enough for the soft-cap to bend them
      const auto align = bottom_right ? ops::CausalAlign::BottomRight : ops::CausalAlign::TopLeft;
      auto got = ops::attention(make(q, {c.B, c.Hq, c.Sq, c.D}), make(k, {c.B, c.Hkv, c.Skv, c.D}),
                                make(v, {c.B, c.Hkv, c.Skv, c.D}), true, std::nullopt, align, c.window, c.softcap)
                     .to_vector();
      auto ref = ref_attention(q, k, v, c.B, c.Hq, c.Hkv, c.Sq, c.Skv, c.D, true, bottom_right, c.window, c.softcap);
      for (std::size_t i = 0; i < ref.size(); ++i)
        ASSERT_NEAR(got[i], ref[i], 2e-5) << "Sq=" << c.Sq << " Skv=" << c.Skv << " window=" << c.window
                                          << " softcap=" << c.softcap << " bottom_right=" << bottom_right << " i=" << i;
      if (c.D % 32 || !bottom_right) continue;
      // The same on a q8_0 cache, against that cache dequantized.
      auto q8 = [&](const std::vector<float>& x) {
        const QTensor blocks = QTensor::quantize(make(x, {c.B * c.Hkv * c.Skv, c.D}), QuantFormat::Q8_0);
        const auto rb = static_cast<std::int64_t>(blocks.row_bytes());
        return std::pair{blocks.blocks().reshape({c.B, c.Hkv, c.Skv, rb}),
                         ops::dequantize(blocks).reshape({c.B, c.Hkv, c.Skv, c.D})};
      };
      const auto [kq, kf] = q8(k);
      const auto [vq, vf] = q8(v);
      const Tensor qt = make(q, {c.B, c.Hq, c.Sq, c.D});
      const auto g8 =
          ops::attention(qt, kq, vq, QuantFormat::Q8_0, true, std::nullopt, align, c.window, c.softcap).to_vector();
      const auto w8 = ops::attention(qt, kf, vf, true, std::nullopt, align, c.window, c.softcap).to_vector();
      for (std::size_t i = 0; i < g8.size(); ++i) ASSERT_NEAR(g8[i], w8[i], 1e-5) << "q8_0 window=" << c.window;
    }
  // Refused, naming the op: a window without causal, a negative one, a negative or non-finite cap.
  const Tensor q = make(rand_vec(64, 1), {1, 1, 4, 16});
  EXPECT_EQ(error_code_of([&] { ops::attention(q, q, q, false, std::nullopt, ops::CausalAlign::TopLeft, 4); }),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(error_code_of([&] { ops::attention(q, q, q, true, std::nullopt, ops::CausalAlign::TopLeft, -1); }),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(error_code_of([&] { ops::attention(q, q, q, true, std::nullopt, ops::CausalAlign::TopLeft, 0, -1.0f); }),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(error_code_of([&] { ops::attention(q, q, q, true, std::nullopt, ops::CausalAlign::TopLeft, 0, NAN); }),
            ErrorCode::InvalidArgument);
}

// Attention on a q8_0 KV cache against the f32 attention on the same cache
// dequantized (the blocks are what both read): decode shapes (the split-K
// path) and a prompt (the flash path), grouped heads, both alignments.
TEST(OpsAttention, Q8CacheMatchesTheDequantizedCache) {
  struct Case {
    int Hq, Hkv, Sq, Skv, D, Dv;
    bool causal;
  };
  for (auto c : {Case{9, 3, 1, 2000, 64, 64, true}, Case{4, 2, 3, 700, 32, 96, true}, Case{2, 1, 70, 90, 64, 64, true},
                 Case{2, 2, 1, 300, 128, 64, false}}) {
    Backend cpu = Backend::create(BackendType::Cpu);
    auto q8 = [&](int heads, int d, unsigned seed) {
      const Tensor f = make(rand_vec(heads * c.Skv * d, seed), {heads * c.Skv, d});
      const QTensor blocks = QTensor::quantize(f, QuantFormat::Q8_0);
      const auto rb = static_cast<std::int64_t>(blocks.row_bytes());
      return std::pair{blocks.blocks().reshape({1, heads, c.Skv, rb}),
                       ops::dequantize(blocks).reshape({1, heads, c.Skv, d})};
    };
    const auto [kq, kf] = q8(c.Hkv, c.D, 2);
    const auto [vq, vf] = q8(c.Hkv, c.Dv, 3);
    const Tensor q = make(rand_vec(c.Hq * c.Sq * c.D, 1), {1, c.Hq, c.Sq, c.D});
    const auto got =
        ops::attention(q, kq, vq, QuantFormat::Q8_0, c.causal, std::nullopt, ops::CausalAlign::BottomRight).to_vector();
    const auto want = ops::attention(q, kf, vf, c.causal, std::nullopt, ops::CausalAlign::BottomRight).to_vector();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << "Skv=" << c.Skv << " i=" << i;
  }
  // Refused with the op named: another format, rows that are not q8_0 rows of D.
  const Tensor q = make(rand_vec(64, 1), {1, 1, 1, 64});
  const Tensor k = make(rand_vec(64, 2), {1, 1, 1, 64}).cast(DType::U8);
  EXPECT_THROW(ops::attention(q, k, k, QuantFormat::Q4_0), Error);
  EXPECT_THROW(ops::attention(q, k, k, QuantFormat::Q8_0), Error);
}
