// Mixed-precision training steps on OpenCL: a LossScaler's AdamW steps over
// f16, bf16 and f32 parameters give the CPU backend's parameters, moments and
// scale, with no op falling back to the CPU (the overflow check included) and
// no gradient read back to the host. Skips, with the registry's reason, where
// no OpenCL device is available.
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

// One model's optimizer state on one backend.
struct Trainer {
  Backend b;
  std::vector<Tensor> params, exp_avg, exp_avg_sq;
  LossScaler scaler;
  std::int64_t step = 0;

  Trainer(Backend backend, const std::vector<std::vector<float>>& init, const std::vector<Shape>& shapes,
          const std::vector<DType>& dtypes, const MixedPrecisionConfig& cfg)
      : b(std::move(backend)), scaler(cfg) {
    for (std::size_t i = 0; i < init.size(); ++i) {
      params.push_back(b.from_host(init[i].data(), shapes[i], DType::F32).cast(dtypes[i]));
      const std::vector<float> zeros(init[i].size(), 0.0f);
      exp_avg.push_back(b.from_host(zeros.data(), shapes[i], DType::F32));
      exp_avg_sq.push_back(b.from_host(zeros.data(), shapes[i], DType::F32));
    }
  }

  // Scaled gradients as a backward pass in `dtypes` would leave them.
  bool take_step(const std::vector<std::vector<float>>& grads, const std::vector<Shape>& shapes,
                 const ops::AdamConfig& adam) {
    std::vector<Tensor> g;
    for (std::size_t i = 0; i < grads.size(); ++i)
      g.push_back(b.from_host(grads[i].data(), shapes[i], DType::F32).cast(params[i].dtype()));
    return scaler.adam_step(params, g, exp_avg, exp_avg_sq, adam, step);
  }
};

std::vector<float> values(std::mt19937& rng, std::size_t n, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Largest |a - b| in units of 2^-23 of b's largest magnitude (a moment that
// cancels to near zero is judged against the tensor's scale, not its own).
double max_ulps(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0, top = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
    top = std::max(top, std::abs(static_cast<double>(b[i])));
  }
  return worst == 0 ? 0 : worst / (top * std::ldexp(1.0, -23));
}

TEST(OpenClTraining, LossScaledAdamWMatchesTheCpuWithNoFallback) {
  if (!backend_available(BackendType::OpenCl))
    GTEST_SKIP() << "OpenCL backend unavailable: " << unavailable_reason(BackendType::OpenCl);
  // Ten parameters (more than one launch takes operands), mixed dtypes, odd sizes.
  const std::vector<Shape> shapes{Shape{33, 17},  Shape{129},  Shape{5, 7}, Shape{1},      Shape{64, 3},
                                  Shape{2, 2, 9}, Shape{1000}, Shape{0, 4}, Shape{31, 31}, Shape{7}};
  const std::vector<DType> dtypes{DType::F16, DType::F16, DType::BF16, DType::F16,  DType::BF16,
                                  DType::F32, DType::F32, DType::F16,  DType::BF16, DType::F16};
  std::mt19937 rng(1234);
  std::vector<std::vector<float>> init;
  for (const Shape& s : shapes) init.push_back(values(rng, static_cast<std::size_t>(s.numel()), 0.5f));

  MixedPrecisionConfig cfg;
  cfg.scale_factor = 1024.0f;
  cfg.growth_interval = 2;  // grows within the run, so the scale path is exercised
  ops::AdamConfig adamw;
  adamw.adamw = true, adamw.lr = 1e-2f, adamw.weight_decay = 0.05f;

  Trainer cpu(Backend::create(BackendType::Cpu), init, shapes, dtypes, cfg);
  Trainer cl(Backend::create(BackendType::OpenCl), init, shapes, dtypes, cfg);

  ops::reset_fallback_stats();
  for (int it = 0; it < 6; ++it) {
    // Gradients scaled by the current loss scale; step 2 overflows in one tensor, step 4 in another (NaN).
    std::vector<std::vector<float>> grads;
    for (const Shape& s : shapes)
      grads.push_back(values(rng, static_cast<std::size_t>(s.numel()), 0.1f * cpu.scaler.scale()));
    if (it == 2) grads[4][17] = std::numeric_limits<float>::infinity();
    if (it == 4) grads[8][100] = std::numeric_limits<float>::quiet_NaN();
    const bool cpu_took = cpu.take_step(grads, shapes, adamw);
    const bool cl_took = cl.take_step(grads, shapes, adamw);
    EXPECT_EQ(cl_took, cpu_took) << "step " << it;
    EXPECT_EQ(cl_took, it != 2 && it != 4) << "step " << it;
    EXPECT_EQ(cl.scaler.scale(), cpu.scaler.scale()) << "step " << it;
  }
  const ops::FallbackStats fb = ops::fallback_stats();
  EXPECT_EQ(fb.ops, 0u) << fb.copies << " copies, " << fb.bytes << " bytes";
  EXPECT_EQ(fb.bytes, 0u);
  EXPECT_EQ(cl.step, 4);
  EXPECT_EQ(cl.scaler.skipped_steps(), 2);
  EXPECT_EQ(cl.scaler.scale(), 512.0f);  // 1024, grown after two finite steps, then backed off twice

  for (std::size_t i = 0; i < shapes.size(); ++i) {
    // f16 and bf16 steps are the CPU's arithmetic bit for bit; the CPU's f32
    // loop may fuse multiply-adds where the host has them (an ulp or so a step).
    const double allowed = dtypes[i] == DType::F32 ? 16.0 : 0.0;
    EXPECT_LE(max_ulps(cl.params[i].to_vector(), cpu.params[i].to_vector()), allowed) << "param " << i;
    EXPECT_LE(max_ulps(cl.exp_avg[i].to_vector(), cpu.exp_avg[i].to_vector()), allowed) << "exp_avg " << i;
    EXPECT_LE(max_ulps(cl.exp_avg_sq[i].to_vector(), cpu.exp_avg_sq[i].to_vector()), allowed) << "exp_avg_sq " << i;
  }
}

TEST(OpenClTraining, ClaimsAdamRandomAndTheOverflowCheck) {
  if (!backend_available(BackendType::OpenCl))
    GTEST_SKIP() << "OpenCL backend unavailable: " << unavailable_reason(BackendType::OpenCl);
  Backend dev = Backend::create(BackendType::OpenCl);
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    EXPECT_TRUE(dev.supports(rt::OpKind::Adam, t)) << dtype_name(t);
    EXPECT_TRUE(dev.supports(rt::OpKind::Random, t)) << dtype_name(t);
    EXPECT_TRUE(dev.supports(rt::OpKind::NonFinite, t)) << dtype_name(t);
  }
  EXPECT_FALSE(dev.supports(rt::OpKind::Adam, DType::F64));      // the CPU refuses f64 parameters too
  EXPECT_TRUE(dev.supports(rt::OpKind::NonFinite, DType::F64));  // a bit test: no doubles needed
  // f64 random numbers need doubles on the device; the op falls back, counted, where it has none.
  ops::reset_fallback_stats();
  const std::vector<float> got = ops::randn(dev, Shape{9}, 4, DType::F64).to_vector();
  Backend cpu = Backend::create(BackendType::Cpu);
  const std::vector<float> want = ops::randn(cpu, Shape{9}, 4, DType::F64).to_vector();
  EXPECT_EQ(got, want);
  EXPECT_EQ(ops::fallback_stats().ops, dev.capabilities().f64 ? 0u : 1u);
}

TEST(OpenClTraining, NonFiniteCheckReadsOneFlag) {
  if (!backend_available(BackendType::OpenCl))
    GTEST_SKIP() << "OpenCL backend unavailable: " << unavailable_reason(BackendType::OpenCl);
  Backend dev = Backend::create(BackendType::OpenCl);
  std::vector<float> v(4097, 1.0f);
  std::vector<Tensor> grads;
  for (int i = 0; i < 12; ++i) grads.push_back(dev.from_host(v.data(), Shape{4097}, DType::F32).cast(DType::F16));
  ops::reset_fallback_stats();
  Tensor flag = ops::any_non_finite(grads);
  EXPECT_EQ(flag.dtype(), DType::Bool);
  EXPECT_EQ(flag.device(), dev.device());
  EXPECT_EQ(flag.to_vector(), std::vector<float>{0.0f});
  EXPECT_FALSE(LossScaler::has_non_finite(grads));
  v[4096] = -std::numeric_limits<float>::infinity();
  grads[11] = dev.from_host(v.data(), Shape{4097}, DType::F32).cast(DType::F16);
  EXPECT_TRUE(LossScaler::has_non_finite(grads));
  EXPECT_EQ(ops::fallback_stats().ops, 0u);
}

}  // namespace
