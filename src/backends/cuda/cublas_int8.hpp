#pragma once
// s8 x s8 -> s32 products on the integer tensor cores through cuBLASLt, for
// integer_matmul.cu (which brings any ONNX MatMulInteger / QLinearMatMul to
// this form). Not compiled for HIP: the ROCm build has no cuBLAS.
#include <cstdint>

#include "device.hpp"

namespace torsh::cuda {

// One operand in cuBLAS's column-major terms: the stored matrix (before op)
// at p with leading dimension ld, transposed by the product when `t`.
struct Int8Operand {
  const void* p = nullptr;
  std::int64_t ld = 0;
  bool t = false;
  std::int64_t batch_stride = 0;  // elements between batches
};

// c (rows x cols, column-major, ldc; batch_stride between batches) =
// op(a) (rows x k) * op(b) (k x cols), over `batch` products.
struct Int8Gemm {
  Int8Operand a, b;
  std::int32_t* c = nullptr;
  std::int64_t ldc = 0, c_batch_stride = 0;
  std::int64_t rows = 0, cols = 0, k = 0, batch = 1;
};

// Runs g on s and returns true; returns false, having run nothing, when
// cuBLASLt has no kernel for this layout and alignment (the caller then
// takes another route). A failure after the product started throws.
bool cublas_int8_gemm(CudaStream& s, const Int8Gemm& g);

}  // namespace torsh::cuda
