// Conformance: every op against PyTorch golden data (scripts/golden/make-golden.py),
// on every available backend. Ops a device lacks run through the CPU fallback,
// so each backend must still produce PyTorch's answer.
#include <gtest/gtest.h>

#include <cmath>

#include "golden.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;

namespace {

std::vector<Device> devices() {
  std::vector<Device> out;
  for (const auto& st : backend_statuses())
    for (const auto& d : st.devices) out.push_back(Device{st.type, d.index});
  return out;
}

// |got - want| <= atol + rtol * |want|, NaN matching NaN.
void expect_close(const Tensor& got_t, const golden::Array& want_a, double atol, double rtol, const std::string& what) {
  const auto got = got_t.to_vector();
  const auto want = want_a.f32();
  ASSERT_EQ(got.size(), want.size()) << what;
  ASSERT_EQ(got_t.shape(), Shape(want_a.dims)) << what;
  int bad = 0;
  for (std::size_t i = 0; i < got.size() && bad < 5; ++i) {
    if (std::isnan(want[i]) && std::isnan(got[i])) continue;
    if (!(std::abs(double(got[i]) - want[i]) <= atol + rtol * std::abs(double(want[i])))) {
      ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", PyTorch " << want[i];
      ++bad;
    }
  }
}

class Golden : public ::testing::TestWithParam<Device> {
 protected:
  Backend b = Backend::create(GetParam().type, GetParam().index);
};

}  // namespace

TEST_P(Golden, Unary) {
  auto g = golden::load("unary");
  Tensor x = g["x"].on(b), xp = g["xp"].on(b);
  using U = rt::UnaryOp;
  const std::pair<const char*, U> on_x[] = {
      {"neg", U::Neg},         {"abs", U::Abs},   {"exp", U::Exp},   {"tanh", U::Tanh},
      {"sigmoid", U::Sigmoid}, {"relu", U::Relu}, {"gelu", U::Gelu}, {"gelu_tanh", U::GeluTanh},
      {"silu", U::Silu}};
  for (auto [name, op] : on_x) expect_close(ops::unary(op, x), g[name], 1e-6, 2e-6, name);
  const std::pair<const char*, U> on_xp[] = {{"log", U::Log}, {"sqrt", U::Sqrt}, {"rsqrt", U::Rsqrt}};
  for (auto [name, op] : on_xp) expect_close(ops::unary(op, xp), g[name], 1e-6, 2e-6, name);
}

TEST_P(Golden, BinaryBroadcast) {
  auto g = golden::load("binary");
  Tensor a = g["a"].on(b), bb = g["b"].on(b), ap = g["ap"].on(b), bp = g["bp"].on(b);
  expect_close(ops::add(a, bb), g["add"], 1e-6, 1e-6, "add");
  expect_close(ops::sub(a, bb), g["sub"], 1e-6, 1e-6, "sub");
  expect_close(ops::mul(a, bb), g["mul"], 1e-6, 1e-6, "mul");
  expect_close(ops::div(a, bp), g["div"], 1e-6, 1e-6, "div");
  expect_close(ops::maximum(a, bb), g["maximum"], 0, 0, "maximum");
  expect_close(ops::minimum(a, bb), g["minimum"], 0, 0, "minimum");
  expect_close(ops::pow(ap, bp), g["pow"], 1e-6, 2e-6, "pow");
}

TEST_P(Golden, Matmul) {
  auto g = golden::load("matmul");
  expect_close(ops::matmul(g["a"].on(b), g["b"].on(b)), g["out"], 1e-5, 1e-5, "matmul");
  expect_close(ops::matmul(g["ba"].on(b), g["bb"].on(b)), g["bout"], 1e-5, 1e-5, "batched matmul");
  expect_close(ops::gemm(g["ga"].on(b), g["gb"].on(b), 2.0f, 0.5f, g["gc"].on(b), true, true), g["gemm"], 1e-5, 1e-5,
               "gemm");
  expect_close(ops::matmul(g["ha"].on(b).cast(DType::BF16), g["hb"].on(b).cast(DType::BF16)).cast(DType::F32),
               g["bf16_out"], 2e-2, 1e-2, "bf16 matmul (f32 accumulate, bf16 output)");
}

TEST_P(Golden, Softmax) {
  auto g = golden::load("softmax");
  Tensor x = g["x"].on(b);
  expect_close(ops::softmax(x, 0), g["sm0"], 1e-7, 1e-5, "softmax axis 0");
  expect_close(ops::softmax(x, 1), g["sm1"], 1e-7, 1e-5, "softmax axis 1");
  expect_close(ops::log_softmax(x, 0), g["lsm0"], 1e-5, 1e-6, "log_softmax axis 0");
  expect_close(ops::log_softmax(x, 1), g["lsm1"], 1e-5, 1e-6, "log_softmax axis 1");
}

TEST_P(Golden, Norms) {
  auto g = golden::load("norm");
  Tensor x = g["x"].on(b), w = g["w"].on(b), bias = g["b"].on(b);
  expect_close(ops::layer_norm(x, w, bias, 1e-5f), g["layer_norm"], 1e-5, 1e-5, "layer_norm");
  expect_close(ops::rms_norm(x, w, 1e-6f), g["rms_norm"], 1e-5, 1e-5, "rms_norm");
  Tensor bnx = g["bnx"].on(b);
  expect_close(ops::batch_norm(bnx, g["rm"].on(b), g["rv"].on(b), g["bnw"].on(b), g["bnb"].on(b), false), g["bn_eval"],
               1e-5, 1e-5, "batch_norm eval");
  Tensor rm = g["rm"].on(b), rv = g["rv"].on(b);
  expect_close(ops::batch_norm(bnx, rm, rv, std::nullopt, std::nullopt, true, 0.1f, 1e-5f), g["bn_train"], 1e-5, 1e-5,
               "batch_norm train");
  expect_close(rm, g["rm_after"], 1e-6, 1e-5, "running_mean");
  expect_close(rv, g["rv_after"], 1e-6, 1e-5, "running_var");
}

TEST_P(Golden, Reductions) {
  auto g = golden::load("reduce");
  Tensor x = g["x"].on(b);
  expect_close(ops::sum(x, {0, 2}), g["sum_02"], 1e-5, 1e-6, "sum");
  expect_close(ops::mean(x, {1}, true), g["mean_1"], 1e-6, 1e-6, "mean");
  expect_close(ops::var(x, {2}), g["var_2"], 1e-5, 1e-5, "var");
  expect_close(ops::max(x).reshape({1}), g["max_all"], 0, 0, "max");
  expect_close(ops::min(x, {0}), g["min_0"], 0, 0, "min");
  EXPECT_EQ(ops::argmax(x, 1).to_host<std::int64_t>(), g["argmax_1"].i64());
}

TEST_P(Golden, ConvAndPool) {
  auto g = golden::load("conv");
  ops::Conv2dParams p;
  p.stride_h = 2, p.pad_h = p.pad_w = 1, p.dil_w = 2, p.groups = 2;
  expect_close(ops::conv2d(g["x"].on(b), g["w"].on(b), g["b"].on(b), p), g["out"], 1e-5, 1e-5, "conv2d");
  ops::Pool2dParams pp;
  pp.kernel_h = pp.kernel_w = 3, pp.stride_h = pp.stride_w = 2, pp.pad_h = pp.pad_w = 1;
  Tensor px = g["px"].on(b);
  expect_close(ops::max_pool2d(px, pp), g["maxpool"], 0, 0, "max_pool2d");
  pp.count_include_pad = false;
  expect_close(ops::avg_pool2d(px, pp), g["avgpool"], 1e-6, 1e-6, "avg_pool2d");
  ops::Pool2dParams p2;
  expect_close(ops::avg_pool2d(px, p2), g["avgpool_incl"], 1e-6, 1e-6, "avg_pool2d 2x2");
}

TEST_P(Golden, AttentionAndRope) {
  auto g = golden::load("attention");
  expect_close(ops::attention(g["q"].on(b), g["k"].on(b), g["v"].on(b), true), g["out"], 1e-5, 1e-5,
               "causal grouped-query attention");
  auto r = golden::load("rope");
  auto [c, s] = ops::rope_cache(b, 16, 6);
  expect_close(ops::rope(r["x"].on(b), c, s, ops::RopeStyle::NeoX, 3, 6), r["neox"], 1e-5, 1e-5, "rope neox");
  expect_close(ops::rope(r["x"].on(b), c, s, ops::RopeStyle::GptJ, 3, 6), r["gptj"], 1e-5, 1e-5, "rope gptj");
}

TEST_P(Golden, AdamAndAdamW) {
  auto g = golden::load("adam");
  for (std::string name : {"adam", "adamw"}) {
    std::vector<Tensor> p{g[name + "_p0"].on(b)};
    const auto n = p[0].shape();
    std::vector<Tensor> m{b.zeros(n, DType::F32)}, v{b.zeros(n, DType::F32)};
    ops::AdamConfig cfg;
    cfg.lr = 0.01f;
    cfg.weight_decay = 0.1f;
    cfg.adamw = name == "adamw";
    for (int i = 0; i < 3; ++i) ops::adam_step(p, {g[name + "_g" + std::to_string(i)].on(b)}, m, v, cfg, i + 1);
    expect_close(p[0], g[name + "_p3"], 1e-6, 1e-5, name);
  }
}

INSTANTIATE_TEST_SUITE_P(AllDevices, Golden, ::testing::ValuesIn(devices()), [](const auto& info) {
  return std::string(backend_key(info.param.type)) + std::to_string(info.param.index);
});
