#include "torsh/runtime/qtensor.hpp"

#include <vector>

namespace torsh {
namespace {

ErrorContext ctx_of(const char* op, const Tensor& t) {
  if (!t.defined()) return {.op = op};
  return {.op = op,
          .shapes = {t.shape().to_string()},
          .dtypes = {std::string(dtype_name(t.dtype()))},
          .device = t.device().to_string()};
}

void check_cols(const char* op, QuantFormat format, std::int64_t rows, std::int64_t cols, const ErrorContext& ctx) {
  const std::int64_t block = quant_block_elems(format);
  if (rows < 0 || cols <= 0 || cols % block != 0)
    throw Error(ErrorCode::ShapeMismatch,
                std::string(quant_format_name(format)) + " weights [" + std::to_string(rows) + ", " +
                    std::to_string(cols) + "]: the row length must be a positive multiple of " + std::to_string(block),
                ctx,
                {std::string(quant_format_name(format)) + " packs " + std::to_string(block) +
                 " consecutive elements of a row into one block; pad the rows or pick a format with 32-element "
                 "blocks (q8_0, q5_1, ...)"});
}

}  // namespace

QTensor::QTensor(Tensor blocks, QuantFormat format, std::int64_t rows, std::int64_t cols)
    : blocks_(std::move(blocks)), format_(format), rows_(rows), cols_(cols) {
  const char* op = "QTensor";
  if (!blocks_.defined()) throw Error(ErrorCode::InvalidArgument, "the block tensor is undefined", {.op = op});
  check_cols(op, format, rows, cols, ctx_of(op, blocks_));
  if (blocks_.dtype() != DType::U8)
    throw Error(ErrorCode::DTypeMismatch, "block bytes must be a u8 tensor, got " + blocks_.describe(),
                ctx_of(op, blocks_), {"View the raw block bytes as u8"});
  const Shape want{rows, static_cast<std::int64_t>(quant_row_bytes(format, cols))};
  if (blocks_.shape() != want)
    throw Error(ErrorCode::ShapeMismatch,
                std::string(quant_format_name(format)) + " [" + std::to_string(rows) + ", " + std::to_string(cols) +
                    "] needs u8 blocks " + want.to_string() + ", got " + blocks_.shape().to_string(),
                ctx_of(op, blocks_),
                {"Each row holds cols / " + std::to_string(quant_block_elems(format)) + " blocks of " +
                 std::to_string(quant_block_bytes(format)) + " bytes"});
  if (!blocks_.is_contiguous())
    throw Error(ErrorCode::InvalidArgument, "block bytes must be contiguous", ctx_of(op, blocks_),
                {"Call contiguous() on the block tensor first"});
}

QTensor QTensor::quantize(const Tensor& x, QuantFormat format) {
  const char* op = "quantize";
  if (!x.defined()) throw Error(ErrorCode::InvalidArgument, "the input tensor is undefined", {.op = op});
  if (!is_floating(x.dtype()))
    throw Error(ErrorCode::DTypeMismatch, "quantize needs a floating tensor, got " + x.describe(), ctx_of(op, x),
                {"Cast to f32 first"});
  if (x.ndim() != 2)
    throw Error(ErrorCode::ShapeMismatch, "quantize takes a 2-D [rows, cols] tensor, got " + x.describe(),
                ctx_of(op, x), {"Reshape to [rows, cols]; blocks run along the last dimension"});
  const std::int64_t rows = x.shape()[0], cols = x.shape()[1];
  check_cols(op, format, rows, cols, ctx_of(op, x));
  // The reference quantizers run on the host; the blocks go back to x's device.
  const std::vector<float> v = x.to_vector();
  const std::size_t row_bytes = quant_row_bytes(format, cols);
  std::vector<unsigned char> b(static_cast<std::size_t>(rows) * row_bytes);
  for (std::int64_t r = 0; r < rows; ++r)
    quantize_row(format, v.data() + r * cols, b.data() + static_cast<std::size_t>(r) * row_bytes, cols);
  Backend backend = x.backend();
  return from_host(backend, format, rows, cols, b.data(), b.size());
}

QTensor QTensor::from_host(Backend& backend, QuantFormat format, std::int64_t rows, std::int64_t cols,
                           const void* blocks, std::size_t bytes) {
  const char* op = "QTensor::from_host";
  check_cols(op, format, rows, cols, {.op = op});
  const std::size_t row_bytes = quant_row_bytes(format, cols);
  if (bytes != static_cast<std::size_t>(rows) * row_bytes)
    throw Error(ErrorCode::ShapeMismatch,
                std::string(quant_format_name(format)) + " [" + std::to_string(rows) + ", " + std::to_string(cols) +
                    "] is " + std::to_string(static_cast<std::size_t>(rows) * row_bytes) + " bytes, got " +
                    std::to_string(bytes),
                {.op = op},
                {"Pass rows * cols / " + std::to_string(quant_block_elems(format)) + " blocks of " +
                 std::to_string(quant_block_bytes(format)) + " bytes"});
  Tensor t = backend.from_host(blocks, Shape{rows, static_cast<std::int64_t>(row_bytes)}, DType::U8);
  return QTensor(std::move(t), format, rows, cols);
}

QTensor QTensor::to(Backend& target) const {
  if (!defined()) throw Error(ErrorCode::InvalidState, "an undefined QTensor", {.op = "QTensor::to"});
  return QTensor(blocks_.to(target), format_, rows_, cols_);
}

std::string QTensor::describe() const {
  const std::string where = defined() ? " on " + device().to_string() : " (undefined)";
  return std::string(quant_format_name(format_)) + "[" + std::to_string(rows_) + ", " + std::to_string(cols_) + "]" +
         where;
}

}  // namespace torsh
