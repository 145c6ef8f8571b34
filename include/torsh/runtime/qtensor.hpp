#pragma once
// A block-quantized 2-D weight [rows, cols]: each row is cols / 32 blocks of
// its QuantFormat, stored contiguously as bytes (a U8 tensor [rows, row_bytes])
// on any device. Ops take it where a dense weight would go (ops::qmatmul,
// ops::dequantize, ops::embedding).
#include <cstdint>
#include <memory>
#include <string>

#include "torsh/core/quant.hpp"
#include "torsh/runtime/tensor.hpp"

namespace torsh {

class QTensor {
 public:
  QTensor() = default;
  // Wraps `blocks`, a contiguous U8 tensor [rows, quant_row_bytes(format, cols)];
  // cols must be a multiple of 32. Throws InvalidArgument / ShapeMismatch otherwise.
  QTensor(Tensor blocks, QuantFormat format, std::int64_t rows, std::int64_t cols);

  // Quantizes a 2-D floating tensor (any device; the blocks land on the same device).
  static QTensor quantize(const Tensor& x, QuantFormat format);
  // Copies host blocks (rows * row_bytes bytes) into `backend`'s memory.
  static QTensor from_host(Backend& backend, QuantFormat format, std::int64_t rows, std::int64_t cols,
                           const void* blocks, std::size_t bytes);

  bool defined() const { return blocks_.defined(); }
  QuantFormat format() const { return format_; }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  Shape shape() const { return Shape{rows_, cols_}; }
  std::size_t row_bytes() const { return quant_row_bytes(format_, cols_); }
  std::size_t nbytes() const { return blocks_.nbytes(); }
  const Tensor& blocks() const { return blocks_; }
  Device device() const { return blocks_.device(); }
  QTensor to(Backend& target) const;
  std::string describe() const;  // "q4_1[576, 1536] on cpu:0"

 private:
  Tensor blocks_;
  QuantFormat format_ = QuantFormat::Q8_0;
  std::int64_t rows_ = 0, cols_ = 0;
};

}  // namespace torsh
