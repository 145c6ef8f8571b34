// Block-quantized weights (GGUF formats): linear layers as integer dot
// products against activations quantized per block on the fly
// (quant/qmatmul_kernels.hpp), and rows dequantized to f32, f16 or bf16 (a
// whole matrix, or the rows an embedding lookup picks; ids range-checked by
// the op layer).
#include <vector>

#include "device.hpp"
#include "platform/thread_pool.hpp"
#include "quant/qmatmul_kernels.hpp"

namespace torsh::cpu {

void qmatmul(const rt::QMatmulArgs& a) { quant::qmatmul(a); }

namespace {

std::int64_t row_id(const rt::TensorArg& ids, std::int64_t r) {
  if (!ids.present()) return r;
  return ids.dtype == DType::I32 ? *(data_of<const std::int32_t>(ids) + r) : *(data_of<const std::int64_t>(ids) + r);
}

}  // namespace

void dequantize(const rt::DequantizeArgs& a) {
  const auto* w = data_of<const unsigned char>(a.w);
  const std::size_t row_bytes = quant_row_bytes(a.format, a.cols);
  const DType out_t = a.out.dtype;
  auto* out = static_cast<unsigned char*>(a.out.buffer->host_ptr()) +
              a.out.offset * static_cast<std::int64_t>(dtype_size(out_t));
  const std::size_t out_row = static_cast<std::size_t>(a.cols) * dtype_size(out_t);
  pool().parallel_for(a.m, std::max<std::int64_t>(1, 65536 / a.cols), [&](std::int64_t r0, std::int64_t r1) {
    thread_local std::vector<float> row;
    row.resize(static_cast<std::size_t>(a.cols));
    for (std::int64_t r = r0; r < r1; ++r) {
      const unsigned char* src = w + static_cast<std::size_t>(row_id(a.ids, r)) * row_bytes;
      unsigned char* dst = out + static_cast<std::size_t>(r) * out_row;
      if (out_t == DType::F32) {
        dequantize_row(a.format, src, reinterpret_cast<float*>(dst), a.cols);
      } else {
        dequantize_row(a.format, src, row.data(), a.cols);
        convert(row.data(), DType::F32, dst, out_t, static_cast<std::size_t>(a.cols));
      }
    }
  });
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::QMatmul, entry<rt::OpKind::QMatmul, qmatmul>>(rt::DTypes{DType::F32});
  t.add<rt::OpKind::Dequantize, entry<rt::OpKind::Dequantize, dequantize>>(
      rt::DTypes{DType::F32, DType::F16, DType::BF16});
});
}  // namespace

}  // namespace torsh::cpu
