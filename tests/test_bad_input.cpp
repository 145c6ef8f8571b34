// Input a hostile caller can build through the C++ API (issue 16): every case
// is a torsh::Error naming the op (and the limit it broke), never a crash, an
// undefined overflow or a standard-library exception.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "torsh/torsh.hpp"

using namespace torsh;

namespace {
Backend cpu() { return Backend::create(BackendType::Cpu); }

// Runs f, expects an Error of `code` from `op` whose text holds `words`.
template <class F>
Error expect_error(ErrorCode code, const std::string& op, const std::string& words, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(e.context().op, op) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    EXPECT_FALSE(e.suggestions().empty()) << e.what();
    return e;
  }
  ADD_FAILURE() << op << ": expected " << error_code_name(code) << " (" << words << ")";
  return Error(ErrorCode::Internal, "none");
}
}  // namespace

// ---- reshape's -1 (item 2)

TEST(BadInput, ReshapeCannotInferMinusOneBesideAZero) {
  Tensor huge = cpu().zeros(Shape{1}, DType::F32).broadcast_to(Shape{std::int64_t{1} << 40});
  expect_error(ErrorCode::ShapeMismatch, "reshape", "cannot infer the -1 in [-1, 0]: 1099511627776 elements", [&] {
    huge.reshape({-1, 0});
  });
  expect_error(ErrorCode::ShapeMismatch, "reshape", "another size is 0", [&] {
    cpu().zeros(Shape{0}, DType::F32).reshape({-1, 0});
  });
  expect_error(ErrorCode::ShapeMismatch, "reshape", "7 elements are not a multiple of 3", [&] {
    cpu().zeros(Shape{7}, DType::F32).reshape({-1, 3});
  });
  expect_error(ErrorCode::InvalidArgument, "reshape", "size -2", [&] {
    cpu().zeros(Shape{4}, DType::F32).reshape({-2, -2});
  });
  // A known product that wraps around must not pass for a match.
  const std::int64_t big = std::int64_t{1} << 32;
  expect_error(ErrorCode::ShapeMismatch, "reshape", "more than 2^63 - 1", [&] {
    cpu().zeros(Shape{1}, DType::F32).reshape({big, big, big});
  });
  EXPECT_EQ(cpu().zeros(Shape{2, 6}, DType::F32).reshape({-1, 4}).shape(), (Shape{3, 4}));
}

// ---- the Tensor constructor's bounds check and null host memory (item 3)

TEST(BadInput, ViewsWhoseSpanOverflowsAreRefused) {
  Buffer buf = cpu().allocate(64);
  // 3 * 0x5555555555555556 wraps around to 2: the unchecked product passed for a span of two elements.
  expect_error(ErrorCode::OutOfRange, "Tensor", "beyond any addressable element",
               [&] { (void)Tensor(buf, DType::F32, Shape{4}, Strides{6148914691236517206}); });
  expect_error(ErrorCode::OutOfRange, "Tensor", "beyond any addressable element",
               [&] { (void)Tensor(buf, DType::F32, Shape{4}, Strides{-6148914691236517206}, 3); });
  expect_error(ErrorCode::OutOfRange, "Tensor", "beyond any addressable element",
               [&] { (void)Tensor(buf, DType::F32, Shape{2}, Strides{1}, std::numeric_limits<std::int64_t>::max()); });
  expect_error(ErrorCode::OutOfRange, "Tensor", "reaches element 16", [&] {
    (void)Tensor(buf, DType::F32, Shape{2, 2}, Strides{15, 1});
  });
  EXPECT_NO_THROW(Tensor(buf, DType::F32, Shape{4, 4}, Strides{-4, 1}, 12));
}

TEST(BadInput, ShapesWhoseElementCountOverflowsAreRefused) {
  const std::int64_t big = std::int64_t{1} << 32;
  expect_error(ErrorCode::InvalidArgument, "shape", "multiply past 2^63 - 1", [&] { (void)Shape{big, big}; });
  // Empty, but numel() and contiguous_strides() would overflow before reaching the 0.
  expect_error(ErrorCode::InvalidArgument, "shape", "multiply past 2^63 - 1", [&] { (void)Shape{big, big, 0}; });
  EXPECT_EQ((Shape{big, 0, big / 4}.numel()), 0);
  EXPECT_EQ(contiguous_strides(Shape{big, 0, big / 4}), (Strides{big / 4, big / 4, 1}));
}

TEST(BadInput, NullHostPointers) {
  expect_error(ErrorCode::InvalidArgument, "from_host", "null host pointer",
               [&] { cpu().from_host(nullptr, Shape{4}, DType::F32); });
  EXPECT_EQ(cpu().from_host(nullptr, Shape{0, 3}, DType::F32).numel(), 0);
  Buffer buf = cpu().allocate(16);
  expect_error(ErrorCode::InvalidArgument, "copy_from_host", "null host pointer",
               [&] { buf.copy_from_host(nullptr, 16); });
  expect_error(ErrorCode::InvalidArgument, "copy_to_host", "null host pointer", [&] { buf.copy_to_host(nullptr, 16); });
}

// ---- exact integers (item 9)

TEST(BadInput, IntegersLoadExactly) {
  for (std::int64_t v : {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min(),
                         (std::int64_t{1} << 53) + 1, std::int64_t{-7}}) {
    EXPECT_EQ(load_as_int64(&v, DType::I64), v);
    Tensor t = cpu().from_host(&v, Shape{}, DType::I64);
    EXPECT_EQ(load_as_int64(t.to_host_bytes().data(), DType::I64), v);
  }
  const std::uint8_t u = 255, b = 2;
  EXPECT_EQ(load_as_int64(&u, DType::U8), 255);
  EXPECT_EQ(load_as_int64(&b, DType::Bool), 1);
  const float f = -3.75f, nan = std::nanf("");
  EXPECT_EQ(load_as_int64(&f, DType::F32), -3);
  EXPECT_EQ(load_as_int64(&nan, DType::F32), 0);
  const double huge = 1e300;
  EXPECT_EQ(load_as_int64(&huge, DType::F64), std::numeric_limits<std::int64_t>::max());
}

// ---- empty tensors are contiguous (item 13)

TEST(BadInput, TensorsWithoutElementsAreContiguous) {
  EXPECT_TRUE(is_contiguous(Shape{3, 0}, contiguous_strides(Shape{3, 0})));
  EXPECT_TRUE(is_contiguous(Shape{0, 3}, Strides{7, 2}));
  EXPECT_TRUE(is_contiguous(Shape{5, 0, 0}, contiguous_strides(Shape{5, 0, 0})));
  EXPECT_FALSE(is_contiguous(Shape{2, 3}, Strides{1, 2}));
  Tensor c = ops::matmul(cpu().zeros(Shape{2, 3}, DType::F32), cpu().zeros(Shape{3, 0}, DType::F32));
  EXPECT_EQ(c.shape(), (Shape{2, 0}));
  EXPECT_EQ(cpu().zeros(Shape{5, 0, 0}, DType::F32).reshape({0, 3}).shape(), (Shape{0, 3}));
  EXPECT_EQ(ops::matmul(cpu().zeros(Shape{0, 3}, DType::F32), cpu().zeros(Shape{3, 4}, DType::F32)).shape(),
            (Shape{0, 4}));
}

// ---- limits are torsh errors (item 14)

TEST(BadInput, MoreThanEightDimensionsNamesTheLimit) {
  expect_error(ErrorCode::InvalidArgument, "shape", "at most 8 dimensions; this one would have 9",
               [] { (void)Shape{1, 1, 1, 1, 1, 1, 1, 1, 1}; });
  expect_error(ErrorCode::InvalidArgument, "shape", "at most 8", [] { (void)Shape(std::vector<std::int64_t>(12, 1)); });
  Tensor t8 = cpu().zeros(Shape{1, 1, 1, 1, 1, 1, 1, 2}, DType::F32);
  expect_error(ErrorCode::InvalidArgument, "unsqueeze", "at most 8", [&] { t8.unsqueeze(0); });
  expect_error(ErrorCode::InvalidArgument, "reshape", "at most 8",
               [&] { t8.reshape(std::vector<std::int64_t>(9, 1)); });
}

TEST(BadInput, RopeCacheTooLargeIsOutOfMemoryOfTheOp) {
  // Beyond the device's memory, and within it but beyond a pool limit: refused before any allocation.
  Backend host = cpu();
  const Error e = expect_error(ErrorCode::OutOfMemory, "rope_cache", "the device has",
                               [&] { ops::rope_cache(host, std::int64_t{1} << 40, 8); });
  EXPECT_NE(std::string(e.what()).find("two tables of [1099511627776, 4] f32"), std::string::npos) << e.what();
  Backend small = Backend::builder().backend_type(BackendType::Cpu).memory_pool_size(std::size_t{1} << 30).build();
  expect_error(ErrorCode::OutOfMemory, "rope_cache", "limit 1",
               [&] { ops::rope_cache(small, std::int64_t{1} << 28, 8); });
  expect_error(ErrorCode::OutOfRange, "rope_cache", "exceed 2^63 - 1 bytes",
               [&] { ops::rope_cache(small, std::int64_t{1} << 62, 8); });
  auto [c, s] = ops::rope_cache(small, 70000, 4);  // several blocks of rows
  const auto cv = c.to_vector(), sv = s.to_vector();
  for (std::int64_t p : {0, 1, 65535, 65536, 69999}) {
    EXPECT_FLOAT_EQ(cv[static_cast<std::size_t>(p * 2 + 1)], static_cast<float>(std::cos(p * std::pow(10000.0, -0.5))));
    EXPECT_FLOAT_EQ(sv[static_cast<std::size_t>(p * 2)], static_cast<float>(std::sin(double(p))));
  }
}

// ---- pooling stride (item 18)

TEST(BadInput, PoolingStrideZeroIsAnError) {
  Tensor x = cpu().zeros(Shape{1, 1, 4, 4}, DType::F32);
  ops::Pool2dParams p;
  p.stride_h = 0;
  expect_error(ErrorCode::InvalidArgument, "max_pool2d", "stride (0, 2) must be >= 1", [&] { ops::max_pool2d(x, p); });
  p.stride_h = 1, p.stride_w = -1;
  expect_error(ErrorCode::InvalidArgument, "avg_pool2d", "stride (1, -1)", [&] { ops::avg_pool2d(x, p); });
  EXPECT_EQ(ops::max_pool2d(x, ops::Pool2dParams{}).shape(), (Shape{1, 1, 2, 2}));  // unset: the kernel size
  p.stride_h = p.stride_w = 1;
  EXPECT_EQ(ops::max_pool2d(x, p).shape(), (Shape{1, 1, 3, 3}));
}
