// Core types: dtypes and conversions, shapes, devices, errors.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "torsh/torsh.hpp"

using namespace torsh;

TEST(DType, SizesAndNames) {
  EXPECT_EQ(dtype_size(DType::F32), 4u);
  EXPECT_EQ(dtype_size(DType::F64), 8u);
  EXPECT_EQ(dtype_size(DType::F16), 2u);
  EXPECT_EQ(dtype_size(DType::BF16), 2u);
  EXPECT_EQ(dtype_size(DType::I8), 1u);
  EXPECT_EQ(dtype_size(DType::U8), 1u);
  EXPECT_EQ(dtype_size(DType::I32), 4u);
  EXPECT_EQ(dtype_size(DType::I64), 8u);
  EXPECT_EQ(dtype_size(DType::Bool), 1u);
  for (DType t : kAllDTypes) EXPECT_EQ(dtype_from_name(dtype_name(t)), t);
  EXPECT_EQ(dtype_from_name("float16"), DType::F16);
  EXPECT_EQ(dtype_from_name("BFloat16"), DType::BF16);
  EXPECT_FALSE(dtype_from_name("f128").has_value());
}

TEST(DType, HalfRoundTripIsExactForAllHalfValues) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_to_f32(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f))));
      continue;
    }
    ASSERT_EQ(f32_to_f16(f), h) << "half bits " << h;
  }
}

TEST(DType, HalfRoundsToNearestEven) {
  // 1 + 2^-11 is exactly halfway between 1 and the next half (1 + 2^-10): ties to even -> 1.
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9 (even) -> rounds up.
  EXPECT_EQ(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // overflow to inf
  EXPECT_EQ(f32_to_f16(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -26)), 0x0000);  // below half of it
  EXPECT_FLOAT_EQ(f16_to_f32(0x3555), 0.333251953125f);
}

TEST(DType, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  // 1 + 2^-8 is halfway between bf16 1.0 and 1 + 2^-7: ties to even -> 1.0
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(3.0e38f)), bf16_to_f32(0x7f62));
}

TEST(DType, ConvertSaturatesAndTruncates) {
  const float src[] = {1.9f, -1.9f, 300.0f, -300.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f};
  std::int8_t i8[6];
  convert(src, DType::F32, i8, DType::I8, 6);
  EXPECT_EQ(i8[0], 1);
  EXPECT_EQ(i8[1], -1);
  EXPECT_EQ(i8[2], 127);
  EXPECT_EQ(i8[3], -128);
  EXPECT_EQ(i8[4], 0);
  std::uint8_t b[6];
  convert(src, DType::F32, b, DType::Bool, 6);
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(b[5], 0);
  std::int32_t i32[] = {1, -7, 1 << 24};
  float f[3];
  convert(i32, DType::I32, f, DType::F32, 3);
  EXPECT_EQ(f[1], -7.0f);
  EXPECT_EQ(f[2], 16777216.0f);
}

TEST(Shape, BasicsAndStrides) {
  Shape s{2, 3, 4};
  EXPECT_EQ(s.numel(), 24);
  EXPECT_EQ(s.ndim(), 3u);
  EXPECT_EQ(s.to_string(), "[2, 3, 4]");
  EXPECT_EQ(contiguous_strides(s), (Strides{12, 4, 1}));
  EXPECT_TRUE(is_contiguous(s, {12, 4, 1}));
  EXPECT_FALSE(is_contiguous(s, {1, 2, 6}));
  EXPECT_EQ(s.dim(-1), 4);
  EXPECT_EQ(Shape{}.numel(), 1);
  EXPECT_EQ((Shape{3, 0}).numel(), 0);
  // Empty tensors are contiguous whatever their strides: no element is out of place.
  EXPECT_TRUE(is_contiguous(Shape{2, 0}, contiguous_strides(Shape{2, 0})));
  EXPECT_TRUE(is_contiguous(Shape{0, 3}, {1, 2}));
}

TEST(Shape, BadInputIsAClearError) {
  try {
    Shape s{2, -1};
    FAIL() << "negative dimension accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("negative"), std::string::npos);
  }
  try {
    (void)Shape{2, 3}.dim(5, "softmax");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfRange);
    EXPECT_EQ(e.context().op, "softmax");
    EXPECT_FALSE(e.suggestions().empty());
  }
}

TEST(Device, NamesRoundTrip) {
  for (BackendType t : kConcreteBackends) EXPECT_EQ(backend_from_name(backend_key(t)), t);
  EXPECT_EQ(backend_from_name("OpenCL"), BackendType::OpenCl);
  EXPECT_EQ(backend_from_name("hip"), BackendType::Rocm);
  EXPECT_FALSE(backend_from_name("vulkan-ish").has_value());
  EXPECT_EQ((Device{BackendType::OpenCl, 1}).to_string(), "opencl:1");
}

TEST(Error, CarriesContextAndSuggestions) {
  Error e(ErrorCode::ShapeMismatch, "bad shapes",
          {.op = "add", .shapes = {"[2, 3]", "[4]"}, .dtypes = {"f32", "f32"}, .device = "cpu:0"}, {"do X"});
  const std::string w = e.what();
  EXPECT_NE(w.find("ShapeMismatch in add: bad shapes"), std::string::npos);
  EXPECT_NE(w.find("[2, 3], [4]"), std::string::npos);
  EXPECT_NE(w.find("f32, f32"), std::string::npos);
  EXPECT_NE(w.find("cpu:0"), std::string::npos);
  EXPECT_EQ(e.suggestions().front(), "do X");
  EXPECT_GT(e.suggestions().size(), 1u);  // defaults appended
  Error oom(ErrorCode::OutOfMemory, "x");
  EXPECT_NE(std::string(oom.what()).find("Reduce batch size"), std::string::npos);
}
