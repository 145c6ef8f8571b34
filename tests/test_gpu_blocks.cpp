// Whole blocks of a model on every GPU backend present (OpenCL on PoCL and
// WebGPU on lavapipe in CI; CUDA and ROCm where a GPU is): a pre-norm
// transformer block, a convolutional block and an AdamW step with loss
// scaling, each compared with the CPU backend and required to run with no op
// falling back to the CPU. The cross-backend harness checks each op alone;
// this checks that a real sequence of them stays on the device. A backend
// that is not available is skipped with the registry's reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "device_test_util.hpp"
#include "torsh/ops/mixed_precision.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
using torsh::test::backend_available;
using torsh::test::error_code_of;
using torsh::test::rand_vec;
using torsh::test::unavailable_reason;

namespace {

std::vector<float> values(std::mt19937& rng, std::int64_t n, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

// The same tensors on the device and on the CPU.
struct Pair {
  Tensor dev, cpu;
};

class GpuBlocks : public ::testing::TestWithParam<BackendType> {
 protected:
  void SetUp() override {
    const auto av = Backend::available();
    if (std::find(av.begin(), av.end(), GetParam()) == av.end())
      GTEST_SKIP() << backend_name(GetParam()) << " unavailable: " << unavailable_reason(GetParam());
    dev = Backend::create(GetParam());
    cpu = Backend::create(BackendType::Cpu);
  }
  Pair make(const Shape& s, float scale, DType t = DType::F32) {
    const auto v = values(rng, s.numel(), scale);
    return {dev.from_host(v.data(), s, DType::F32).cast(t), cpu.from_host(v.data(), s, DType::F32).cast(t)};
  }
  // |device - cpu| / max |cpu| over the whole tensor.
  static double rel_error(const Tensor& got, const Tensor& want) {
    const auto g = got.to_vector(), w = want.to_vector();
    EXPECT_EQ(g.size(), w.size());
    double err = 0, top = 0;
    for (std::size_t i = 0; i < g.size() && i < w.size(); ++i) {
      err = std::max(err, std::abs(static_cast<double>(g[i]) - w[i]));
      top = std::max(top, std::abs(static_cast<double>(w[i])));
    }
    return err / std::max(top, 1e-30);
  }

  Backend dev, cpu;
  std::mt19937 rng{42};
};

// A GPT-style block: x + attn(ln1(x)), then + mlp(ln2(.)), causal, 4 heads.
Tensor transformer_block(const Tensor& x, const std::vector<Tensor>& w, std::int64_t heads) {
  const std::int64_t b = x.shape()[0], s = x.shape()[1], d = x.shape()[2], hd = d / heads;
  const Tensor h = ops::layer_norm(x, w[0], w[1]);
  const Tensor qkv = ops::matmul(h, w[2]);    // [b, s, 3d]
  const auto head = [&](std::int64_t part) {  // [b, heads, s, hd]
    return qkv.slice(2, part * d, (part + 1) * d).contiguous().reshape({b, s, heads, hd}).permute({0, 2, 1, 3});
  };
  const Tensor a = ops::attention(head(0), head(1), head(2), true);  // [b, heads, s, hd]
  const Tensor merged = a.permute({0, 2, 1, 3}).contiguous().reshape({b, s, d});
  const Tensor x1 = ops::add(x, ops::matmul(merged, w[3]));
  const Tensor m = ops::gelu(ops::add(ops::matmul(ops::layer_norm(x1, w[4], w[5]), w[6]), w[7]));
  return ops::add(x1, ops::matmul(m, w[8]));
}

TEST_P(GpuBlocks, TransformerBlockRunsOnTheDevice) {
  const std::int64_t b = 2, s = 24, d = 64, heads = 4;
  std::vector<Pair> w = {make({d}, 0.1f),         make({d}, 0.1f),     make({d, 3 * d}, 0.15f),
                         make({d, d}, 0.15f),     make({d}, 0.1f),     make({d}, 0.1f),
                         make({d, 4 * d}, 0.15f), make({4 * d}, 0.1f), make({4 * d, d}, 0.1f)};
  const Pair x = make({b, s, d}, 1.0f);
  std::vector<Tensor> wd, wc;
  for (const Pair& p : w) wd.push_back(p.dev), wc.push_back(p.cpu);
  ops::reset_fallback_stats();
  const Tensor got = transformer_block(x.dev, wd, heads);
  const auto fb = ops::fallback_stats();
  const Tensor want = transformer_block(x.cpu, wc, heads);
  EXPECT_EQ(fb.ops, 0u) << fb.copies << " copies";
  EXPECT_LT(rel_error(got, want), 1e-4);
}

// conv -> batch norm (training, running statistics) -> relu -> max pool ->
// grouped conv -> average pool -> mean over space -> linear -> softmax.
Tensor conv_block(const Tensor& x, const std::vector<Tensor>& w, Tensor& running_mean, Tensor& running_var) {
  ops::Conv2dParams p3;
  p3.pad_h = p3.pad_w = 1;
  Tensor y = ops::conv2d(x, w[0], w[1], p3);
  y = ops::relu(ops::batch_norm(y, running_mean, running_var, w[2], w[3], true, 0.1f));
  y = ops::max_pool2d(y, {.kernel_h = 2, .kernel_w = 2});
  ops::Conv2dParams pg;
  pg.stride_h = pg.stride_w = 2;
  pg.pad_h = pg.pad_w = 1;
  pg.groups = 4;
  y = ops::conv2d(y, w[4], std::nullopt, pg);
  y = ops::avg_pool2d(y, {.kernel_h = 2, .kernel_w = 2, .stride_h = 1, .stride_w = 1});
  const Tensor pooled = ops::mean(y, {2, 3});  // [n, c]
  return ops::softmax(ops::matmul(pooled, w[5]));
}

TEST_P(GpuBlocks, ConvBlockRunsOnTheDevice) {
  const std::int64_t n = 2, c = 3, hw = 16, k = 16;
  std::vector<Pair> w = {make({k, c, 3, 3}, 0.3f),     make({k}, 0.1f),    make({k}, 0.2f), make({k}, 0.1f),
                         make({k, k / 4, 3, 3}, 0.3f), make({k, 10}, 0.3f)};
  const Pair x = make({n, c, hw, hw}, 1.0f);
  Pair rm = make({k}, 0.1f), rv = make({k}, 0.1f);
  const std::vector<float> ones(k, 1.0f);
  rv = {dev.from_host(ones.data(), Shape{k}, DType::F32), cpu.from_host(ones.data(), Shape{k}, DType::F32)};
  std::vector<Tensor> wd, wc;
  for (const Pair& p : w) wd.push_back(p.dev), wc.push_back(p.cpu);
  ops::reset_fallback_stats();
  const Tensor got = conv_block(x.dev, wd, rm.dev, rv.dev);
  const auto fb = ops::fallback_stats();
  const Tensor want = conv_block(x.cpu, wc, rm.cpu, rv.cpu);
  EXPECT_EQ(fb.ops, 0u) << fb.copies << " copies";
  EXPECT_LT(rel_error(got, want), 1e-4);
  EXPECT_LT(rel_error(rm.dev, rm.cpu), 1e-4);  // the running statistics moved alike
  EXPECT_LT(rel_error(rv.dev, rv.cpu), 1e-4);
}

TEST_P(GpuBlocks, LossScaledAdamWStepRunsOnTheDevice) {
  const std::vector<Shape> shapes{Shape{33, 17}, Shape{129}, Shape{5, 7}, Shape{1000}};
  const std::vector<DType> dtypes{DType::F16, DType::BF16, DType::F32, DType::F16};
  MixedPrecisionConfig cfg;
  cfg.scale_factor = 256.0f;
  ops::AdamConfig adamw;
  adamw.adamw = true, adamw.lr = 1e-2f, adamw.weight_decay = 0.05f;
  std::vector<Tensor> pd, pc, md, mc, vd, vc;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Pair p = make(shapes[i], 0.5f, dtypes[i]);
    pd.push_back(p.dev), pc.push_back(p.cpu);
    md.push_back(dev.zeros(shapes[i], DType::F32)), mc.push_back(cpu.zeros(shapes[i], DType::F32));
    vd.push_back(dev.zeros(shapes[i], DType::F32)), vc.push_back(cpu.zeros(shapes[i], DType::F32));
  }
  LossScaler sd(cfg), sc(cfg);
  std::int64_t step_d = 0, step_c = 0;
  ops::reset_fallback_stats();
  std::uint64_t device_fallbacks = 0;
  for (int it = 0; it < 3; ++it) {
    std::vector<Tensor> gd, gc;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      auto g = values(rng, shapes[i].numel(), 0.1f * sc.scale());
      if (it == 1 && i == 2) g[3] = std::numeric_limits<float>::infinity();  // this step is skipped
      gd.push_back(dev.from_host(g.data(), shapes[i], DType::F32).cast(dtypes[i]));
      gc.push_back(cpu.from_host(g.data(), shapes[i], DType::F32).cast(dtypes[i]));
    }
    const auto before = ops::fallback_stats().ops;
    const bool took = sd.adam_step(pd, gd, md, vd, adamw, step_d);
    device_fallbacks += ops::fallback_stats().ops - before;
    EXPECT_EQ(took, sc.adam_step(pc, gc, mc, vc, adamw, step_c)) << "step " << it;
    EXPECT_EQ(took, it != 1);
  }
  EXPECT_EQ(device_fallbacks, 0u);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    EXPECT_LT(rel_error(pd[i], pc[i]), 1e-5) << "param " << i;
    EXPECT_LT(rel_error(md[i], mc[i]), 1e-5) << "exp_avg " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, GpuBlocks,
                         ::testing::Values(BackendType::OpenCl, BackendType::WebGpu, BackendType::Cuda,
                                           BackendType::Rocm),
                         [](const auto& info) { return std::string(backend_key(info.param)); });

}  // namespace
