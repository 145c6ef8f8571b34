#pragma once
// The op layer: one definition per op. Arguments are validated here, output
// shapes and dtypes decided here, then the op runs on the inputs' device, or on
// the CPU with explicit, counted copies when that device lacks it.
#include <cstdint>
#include <optional>

#include "torsh/runtime/tensor.hpp"

namespace torsh::ops {

// Elementwise binary ops with NumPy broadcasting; both inputs share a dtype.
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor binary(rt::BinaryOp op, const Tensor& a, const Tensor& b);
// Writes into `out` (shape = broadcast shape); `out` may alias a or b exactly (in-place).
void binary_out(rt::BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out);
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// a @ b with batch broadcasting: [..., m, k] @ [..., k, n]; 1-D operands as in NumPy.
Tensor matmul(const Tensor& a, const Tensor& b);
// alpha * op(a) @ op(b) + beta * c, 2-D or batched 3-D; c may be absent when beta == 0.
Tensor gemm(const Tensor& a, const Tensor& b, float alpha = 1.0f, float beta = 0.0f,
            const std::optional<Tensor>& c = std::nullopt, bool trans_a = false, bool trans_b = false);

Tensor softmax(const Tensor& x, std::int64_t axis = -1);
Tensor log_softmax(const Tensor& x, std::int64_t axis = -1);

// Copies into a new tensor of `dtype` on the same device (contiguous).
Tensor cast(const Tensor& x, DType dtype);
Tensor contiguous(const Tensor& x);
// Strided copy with conversion: out must have x's shape.
void copy_into(const Tensor& x, Tensor& out);

// How often ops fell back to the CPU, and what that cost in copies.
struct FallbackStats {
  std::uint64_t ops = 0;
  std::uint64_t copies = 0;
  std::uint64_t bytes = 0;
};
FallbackStats fallback_stats();
void reset_fallback_stats();

}  // namespace torsh::ops
