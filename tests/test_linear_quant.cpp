// int8 quantization with ONNX's QuantizeLinear / DequantizeLinear semantics on
// the CPU backend: per tensor and per channel along any axis, round half to
// even, saturation, infinities and NaN, every floating input dtype, strided
// inputs, empty tensors, and a clear error for each bad input. The other
// backends are compared with the CPU by tests/backend_ops (linear_quant cases).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "torsh/torsh.hpp"

using namespace torsh;

namespace {

Backend& cpu() {
  static Backend b = Backend::create(BackendType::Cpu);
  return b;
}

Tensor f32(const std::vector<float>& v, const Shape& s) { return cpu().from_host(v.data(), s, DType::F32); }
template <class Q>
Tensor ints(const std::vector<Q>& v, const Shape& s, DType t) {
  return cpu().from_host(v.data(), s, t);
}

// ONNX's formula in f32, element by element.
template <class Q>
Q quantize_ref(float x, float scale, int zp) {
  const float q = std::nearbyint(x / scale) + static_cast<float>(zp);
  if (q != q) return static_cast<Q>(zp);
  const float lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  return static_cast<Q>(q < lo ? lo : q > hi ? hi : q);
}

template <class F>
ErrorCode error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("quantize_linear"), std::string::npos) << e.what();
    return e.code();
  }
  ADD_FAILURE() << "no error";
  return ErrorCode::Internal;
}

}  // namespace

TEST(QuantizeLinear, HalvesRoundToEvenAndValuesSaturate) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x{0.25f, 0.75f,  1.25f, -0.25f, -0.75f,        -1.25f,
                             1e30f, -1e30f, inf,   -inf,   std::nanf(""), 63.75f};
  const std::vector<int> u8_want{10, 12, 12, 10, 8, 8, 255, 0, 255, 0, 10, 138};
  const auto q =
      ops::quantize_linear(f32(x, Shape{12}), f32({0.5f}, Shape{}), ints<std::uint8_t>({10}, Shape{}, DType::U8))
          .to_host<std::uint8_t>();
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(q[i], u8_want[i]) << "x = " << x[i];
  const std::vector<int> i8_want{0, 2, 2, 0, -2, -2, 127, -128, 127, -128, 0, 127};
  const auto s =
      ops::quantize_linear(f32(x, Shape{12}), f32({0.5f}, Shape{1}), ints<std::int8_t>({0}, Shape{1}, DType::I8))
          .to_host<std::int8_t>();
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(s[i], i8_want[i]) << "x = " << x[i];
}

TEST(QuantizeLinear, PerChannelAlongEveryAxisMatchesOnnx) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> val(-4.0f, 4.0f), sc(0.01f, 0.1f);
  std::uniform_int_distribution<int> zpd(-30, 30);
  const Shape shape{3, 4, 5};
  std::vector<float> x(60);
  for (float& v : x) v = val(rng);
  for (int axis : {0, 1, 2, -1, -3}) {
    const std::int64_t ax = axis < 0 ? axis + 3 : axis, C = shape[static_cast<std::size_t>(ax)];
    std::vector<float> scale(static_cast<std::size_t>(C));
    std::vector<std::int8_t> zp(static_cast<std::size_t>(C));
    for (auto& s : scale) s = sc(rng);
    for (auto& z : zp) z = static_cast<std::int8_t>(zpd(rng));
    const Tensor tx = f32(x, shape), ts = f32(scale, Shape{C}), tz = ints(zp, Shape{C}, DType::I8);
    const auto q = ops::quantize_linear(tx, ts, tz, axis).to_host<std::int8_t>();
    const auto d = ops::dequantize_linear(ops::quantize_linear(tx, ts, tz, axis), ts, tz, axis).to_host<float>();
    std::int64_t inner = 1;
    for (std::int64_t k = ax + 1; k < 3; ++k) inner *= shape[static_cast<std::size_t>(k)];
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::size_t c = (i / static_cast<std::size_t>(inner)) % static_cast<std::size_t>(C);
      const std::int8_t want = quantize_ref<std::int8_t>(x[i], scale[c], zp[c]);
      ASSERT_EQ(q[i], want) << "axis " << axis << " i " << i;
      ASSERT_EQ(d[i], (static_cast<float>(want) - static_cast<float>(zp[c])) * scale[c])
          << "axis " << axis << " i " << i;
    }
  }
}

TEST(QuantizeLinear, EveryFloatingInputStridedAndEmpty) {
  std::vector<float> x(24);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.37f * static_cast<float>(i) - 4.0f;
  const Tensor base = f32(x, Shape{4, 6});
  const Tensor scale = f32({0.05f}, Shape{1}), zp = ints<std::uint8_t>({100}, Shape{1}, DType::U8);
  const auto want = ops::quantize_linear(base, scale, zp).to_host<std::uint8_t>();
  for (DType t : {DType::F16, DType::BF16, DType::F64}) {
    // Values exact in every dtype here: 0.37 * i - 4 rounds differently in bf16, so compare to the rounded input.
    const Tensor xt = base.cast(t);
    const auto got = ops::quantize_linear(xt, scale, zp).to_host<std::uint8_t>();
    const auto rounded = xt.to_vector();
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], quantize_ref<std::uint8_t>(rounded[i], 0.05f, 100)) << dtype_name(t) << " i " << i;
  }
  // A transposed view is read element by element in its own order.
  const auto tq = ops::quantize_linear(base.transpose(0, 1), scale, zp);
  EXPECT_EQ(tq.shape(), (Shape{6, 4}));
  const auto tv = tq.to_host<std::uint8_t>();
  for (std::int64_t r = 0; r < 6; ++r)
    for (std::int64_t c = 0; c < 4; ++c) ASSERT_EQ(tv[r * 4 + c], want[c * 6 + r]);
  // Without a zero point: 0 of the requested dtype.
  const auto i8 = ops::quantize_linear(base, scale, std::nullopt, 1, DType::I8).to_host<std::int8_t>();
  EXPECT_EQ(i8[0], quantize_ref<std::int8_t>(x[0], 0.05f, 0));
  EXPECT_EQ(ops::quantize_linear(cpu().zeros(Shape{0, 3}, DType::F32), scale).numel(), 0);
  // Dequantized to f16 and bf16: the f32 result, rounded once.
  const Tensor q = ops::quantize_linear(base, scale, zp);
  const auto d32 = ops::dequantize_linear(q, scale, zp).to_host<float>();
  for (DType t : {DType::F16, DType::BF16}) {
    const auto d = ops::dequantize_linear(q, scale, zp, 1, t).to_vector();
    const auto r = f32(d32, Shape{24}).cast(t).to_vector();
    for (std::size_t i = 0; i < d.size(); ++i) ASSERT_EQ(d[i], r[i]) << dtype_name(t);
  }
}

TEST(QuantizeLinear, BadInputIsAClearError) {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const Tensor zp1 = ints<std::uint8_t>({3}, Shape{1}, DType::U8);
  EXPECT_EQ(error_of([&] { ops::quantize_linear(x, f32({0.0f}, Shape{1})); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of([&] { ops::quantize_linear(x, f32({-1.0f}, Shape{1})); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of([&] { ops::quantize_linear(x, f32({std::nanf("")}, Shape{1})); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of([&] {
              ops::quantize_linear(x, f32({0.1f, 0.2f, std::numeric_limits<float>::infinity()}, Shape{3}));
            }),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of([&] { ops::quantize_linear(x, f32({0.1f}, Shape{1}).cast(DType::F16)); }),
            ErrorCode::DTypeMismatch);
  EXPECT_EQ(error_of([&] { ops::quantize_linear(x, f32({0.1f, 0.2f}, Shape{1, 2})); }), ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_of([&] {
              ops::quantize_linear(x, f32({0.1f, 0.2f}, Shape{2}), std::nullopt, 1);
            }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_of([&] {
              ops::quantize_linear(x, f32({0.1f, 0.2f, 0.3f}, Shape{3}), std::nullopt, 2);
            }),
            ErrorCode::OutOfRange);
  EXPECT_EQ(error_of([&] {
              ops::quantize_linear(x, f32({0.1f}, Shape{1}), ints<std::uint8_t>({1, 2}, Shape{2}, DType::U8));
            }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(
      error_of([&] { ops::quantize_linear(x, f32({0.1f}, Shape{1}), ints<std::int32_t>({1}, Shape{1}, DType::I32)); }),
      ErrorCode::DTypeMismatch);
  EXPECT_EQ(error_of([&] { ops::quantize_linear(x.cast(DType::I32), f32({0.1f}, Shape{1})); }),
            ErrorCode::DTypeMismatch);
  EXPECT_EQ(error_of([&] { ops::quantize_linear(x, f32({0.1f}, Shape{1}), std::nullopt, 1, DType::I32); }),
            ErrorCode::DTypeMismatch);
  EXPECT_EQ(error_of([&] { ops::dequantize_linear(x, f32({0.1f}, Shape{1})); }), ErrorCode::DTypeMismatch);
  const Tensor q = ops::quantize_linear(x, f32({0.1f}, Shape{1}), zp1);
  EXPECT_EQ(
      error_of([&] { ops::dequantize_linear(q, f32({0.1f}, Shape{1}), ints<std::int8_t>({3}, Shape{1}, DType::I8)); }),
      ErrorCode::DTypeMismatch);
  EXPECT_EQ(error_of([&] { ops::dequantize_linear(q, f32({0.1f}, Shape{1}), zp1, 1, DType::F64); }),
            ErrorCode::DTypeMismatch);
  EXPECT_EQ(error_of([&] { ops::dequantize_linear(q, f32({0.0f}, Shape{1}), zp1); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of([&] { ops::quantize_linear(Tensor{}, f32({0.1f}, Shape{1})); }), ErrorCode::InvalidState);
}
