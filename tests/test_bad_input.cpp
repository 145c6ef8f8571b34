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
