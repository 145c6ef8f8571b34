#pragma once
// The int8 product behind matmul_integer, qlinear_matmul and the int8
// convolutions (integer_conv.cpp): every operand checked, then one
// OpKind::IntegerMatmul launch.
#include <array>
#include <memory>
#include <optional>

#include "dispatch.hpp"

namespace torsh::ops::detail {

struct IntegerRequant {
  std::optional<Tensor> a_zp, b_zp, a_scale, b_scale, y_scale, y_zp, bias;
  // Every operand slot, in the order of rt::IntegerMatmulArgs's fields.
  std::array<const std::optional<Tensor>*, 7> slots() const {
    return {&a_zp, &b_zp, &a_scale, &b_scale, &y_scale, &y_zp, &bias};
  }
};

// out_dtype: I32 (the sums), U8 / I8 (requantized with y_scale, y_zp) or F32.
// b_prepared: b is an IntegerWeight's copy (2-D), whose forms kernels may keep.
Tensor integer_matmul(const char* op, const Tensor& a, const Tensor& b, const IntegerRequant& q, DType out_dtype,
                      const std::shared_ptr<rt::PreparedOperand>& b_prepared = nullptr);

}  // namespace torsh::ops::detail
