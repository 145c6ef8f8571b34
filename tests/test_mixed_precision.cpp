// Mixed precision: f16/bf16 storage accumulates in f32 (matmul, conv2d), and
// the dynamic loss scaler grows, backs off and skips overflowing steps.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "torsh/torsh.hpp"

using namespace torsh;

namespace {
std::vector<Backend> backends() {
  std::vector<Backend> out;
  for (auto t : Backend::available()) out.push_back(Backend::create(t));
  return out;
}

Tensor filled(Backend& b, const Shape& s, float v, DType dt) {
  std::vector<float> h(static_cast<std::size_t>(s.numel()), v);
  return b.from_host(h.data(), s, DType::F32).cast(dt);
}
}  // namespace

// 4096 ones summed: exact in f32, but an f16 accumulator stops at 2048 and a
// bf16 one at 256, so the result shows the accumulator's precision.
TEST(MixedPrecision, MatmulAccumulatesInF32) {
  for (Backend b : backends()) {
    for (DType dt : {DType::F16, DType::BF16}) {
      SCOPED_TRACE(b.name() + " " + std::string(dtype_name(dt)));
      Tensor a = filled(b, {3, 4096}, 1.0f, dt), w = filled(b, {4096, 2}, 1.0f, dt);
      Tensor c = ops::matmul(a, w);
      EXPECT_EQ(c.dtype(), dt);
      for (float v : c.to_vector()) EXPECT_EQ(v, 4096.0f);
    }
  }
}

TEST(MixedPrecision, Conv2dAccumulatesInF32) {
  for (Backend b : backends()) {
    for (DType dt : {DType::F16, DType::BF16}) {
      SCOPED_TRACE(b.name() + " " + std::string(dtype_name(dt)));
      Tensor x = filled(b, {1, 4096, 2, 2}, 1.0f, dt), w = filled(b, {2, 4096, 1, 1}, 1.0f, dt);
      for (float v : ops::conv2d(x, w).to_vector()) EXPECT_EQ(v, 4096.0f);
      // 3x3 with padding (the packed-from-the-image path): each output sums
      // 512 ones per tap inside the image, 2048 to 4608.
      Tensor x3 = filled(b, {1, 512, 5, 5}, 1.0f, dt), w3 = filled(b, {2, 512, 3, 3}, 1.0f, dt);
      ops::Conv2dParams same;
      same.pad_h = same.pad_w = 1;
      const auto y = ops::conv2d(x3, w3, std::nullopt, same).to_vector();
      ASSERT_EQ(y.size(), 50u);
      auto taps = [](int i) { return i == 0 || i == 4 ? 2 : 3; };
      for (int k = 0; k < 2; ++k)
        for (int p = 0; p < 5; ++p)
          for (int q = 0; q < 5; ++q) EXPECT_EQ(y[(k * 5 + p) * 5 + q], 512.0f * taps(p) * taps(q)) << p << "," << q;
    }
  }
}

TEST(LossScaler, RejectsUnusableConfigs) {
  auto code = [](MixedPrecisionConfig c) {
    try {
      LossScaler s(c);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("MixedPrecisionConfig"), std::string::npos);
      return e.code();
    }
    return ErrorCode::Internal;
  };
  MixedPrecisionConfig c;
  c.compute_dtype = DType::I8;
  EXPECT_EQ(code(c), ErrorCode::InvalidArgument);
  c = {};
  c.backoff_factor = 1.5f;
  EXPECT_EQ(code(c), ErrorCode::InvalidArgument);
  c = {};
  c.growth_factor = 1.0f;
  EXPECT_EQ(code(c), ErrorCode::InvalidArgument);
  c = {};
  c.scale_factor = 1e30f;
  EXPECT_EQ(code(c), ErrorCode::InvalidArgument);
  c = {};
  c.growth_interval = 0;
  EXPECT_EQ(code(c), ErrorCode::InvalidArgument);
  EXPECT_NO_THROW(LossScaler{MixedPrecisionConfig{}});
}

TEST(LossScaler, GrowsAfterIntervalAndBacksOffOnOverflow) {
  MixedPrecisionConfig c;
  c.scale_factor = 1024;
  c.growth_interval = 3;
  LossScaler s(c);
  s.update(false);
  s.update(false);
  EXPECT_EQ(s.scale(), 1024);
  s.update(false);
  EXPECT_EQ(s.scale(), 2048);
  s.update(true);
  EXPECT_EQ(s.scale(), 1024);
  EXPECT_EQ(s.finite_streak(), 0);
  for (int i = 0; i < 100; ++i) s.update(true);
  EXPECT_EQ(s.scale(), c.min_scale);
  c.scale_factor = c.max_scale;
  c.growth_interval = 1;
  LossScaler top(c);
  top.update(false);
  EXPECT_EQ(top.scale(), c.max_scale);
}

TEST(LossScaler, DetectsInfAndNaNInLowPrecisionGradients) {
  for (Backend b : backends()) {
    SCOPED_TRACE(b.name());
    std::vector<float> g(33, 0.5f);
    Tensor ok = b.from_host(g.data(), {33}, DType::F32).cast(DType::F16);
    EXPECT_FALSE(LossScaler::has_non_finite({ok}));
    g[17] = 70000.0f;  // overflows f16 on the cast
    Tensor inf = b.from_host(g.data(), {33}, DType::F32).cast(DType::F16);
    EXPECT_TRUE(LossScaler::has_non_finite({ok, inf}));
    g[17] = std::numeric_limits<float>::quiet_NaN();
    Tensor nan = b.from_host(g.data(), {3, 11}, DType::F32).cast(DType::BF16);
    EXPECT_TRUE(LossScaler::has_non_finite({nan}));
  }
}

TEST(LossScaler, AdamStepUnscalesAndSkipsOverflow) {
  Backend b = Backend::create(BackendType::Cpu);
  std::vector<float> p0{1.0f, -2.0f, 0.5f, 3.0f}, g0{0.1f, -0.2f, 0.3f, -0.4f};
  MixedPrecisionConfig mc;
  mc.scale_factor = 1024;
  LossScaler s(mc);
  auto f32 = [&](const std::vector<float>& v) { return b.from_host(v.data(), {4}, DType::F32); };
  std::vector<Tensor> params{f32(p0)}, m{f32({0, 0, 0, 0})}, v{f32({0, 0, 0, 0})};
  std::vector<Tensor> ref_p{f32(p0)}, ref_m{f32({0, 0, 0, 0})}, ref_v{f32({0, 0, 0, 0})};
  std::vector<float> scaled(4);
  for (int i = 0; i < 4; ++i) scaled[i] = g0[i] * s.scale();
  ops::AdamConfig adam;
  adam.lr = 0.01f;
  std::int64_t step = 0;
  EXPECT_TRUE(s.adam_step(params, {f32(scaled)}, m, v, adam, step));
  EXPECT_EQ(step, 1);
  ops::adam_step(ref_p, {f32(g0)}, ref_m, ref_v, adam, 1);
  const auto got = params[0].to_vector(), want = ref_p[0].to_vector();
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], want[i], 1e-6f);

  std::vector<float> bad = scaled;
  bad[2] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(s.adam_step(params, {f32(bad)}, m, v, adam, step));
  EXPECT_EQ(step, 1);
  EXPECT_EQ(s.skipped_steps(), 1);
  EXPECT_EQ(s.scale(), 512);
  EXPECT_EQ(params[0].to_vector(), got);  // skipped: untouched
}

TEST(LossScaler, ScaleLossIsF32OnTheLossDevice) {
  for (Backend b : backends()) {
    Tensor loss = filled(b, {}, 0.75f, DType::F16);
    LossScaler s;
    Tensor scaled = s.scale_loss(loss);
    EXPECT_EQ(scaled.dtype(), DType::F32);  // 0.75 * 65536 is beyond f16's range
    EXPECT_EQ(scaled.device(), b.device());
    EXPECT_EQ(scaled.to_vector().at(0), 0.75f * 65536.0f);
  }
}
