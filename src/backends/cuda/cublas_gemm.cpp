#include "cublas_gemm.hpp"

#include <cublas_v2.h>

#include <climits>

#include "torsh/runtime/precision.hpp"

namespace torsh::cuda {
namespace {

// The stream's cuBLAS handle, bound to it once; released with the stream.
struct BlasHandle final : CudaStream::Extension {
  cublasHandle_t h = nullptr;
  ~BlasHandle() override {
    if (h != nullptr) (void)cublasDestroy(h);
  }
};

cublasHandle_t handle_of(CudaStream& s) {
  auto& ext = s.blas();
  if (!ext) {
    auto b = std::make_unique<BlasHandle>();
    if (cublasCreate(&b->h) != CUBLAS_STATUS_SUCCESS) return nullptr;
    if (cublasSetStream(b->h, s.handle()) != CUBLAS_STATUS_SUCCESS) return nullptr;
    ext = std::move(b);
  }
  return static_cast<BlasHandle&>(*ext).h;
}

// A rows x cols row-major-indexed operand with strides (rs, cs) as cuBLAS
// (column-major) sees it: with a unit column stride the memory holds the
// transpose as a column-major cols x rows matrix (op N on the transpose),
// with a unit row stride the matrix itself (op T); ld covers the other
// dimension. A dimension of extent 1 takes any stride.
struct ColMajor {
  bool ok = false;
  cublasOperation_t op = CUBLAS_OP_N;
  std::int64_t ld = 1;
};
ColMajor as_col_major(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs) {
  if ((cols == 1 || cs == 1) && (rows == 1 || rs >= cols)) return {true, CUBLAS_OP_N, rows == 1 ? cols : rs};
  if ((rows == 1 || rs == 1) && (cols == 1 || cs >= rows)) return {true, CUBLAS_OP_T, cols == 1 ? rows : cs};
  return {};
}

cudaDataType_t data_type(DType t) { return t == DType::F16 ? CUDA_R_16F : t == DType::BF16 ? CUDA_R_16BF : CUDA_R_32F; }

}  // namespace

bool cublas_fits(const rt::MatmulArgs& a) {
  const DType t = a.out.dtype;
  if (t != DType::F32 && t != DType::F16 && t != DType::BF16) return false;
  const std::int64_t batch = a.out.shape[0], m = a.out.shape[1], n = a.out.shape[2], k = a.a.shape[2];
  if (k == 0 || batch == 0 || m == 0 || n == 0) return false;
  if (batch > INT_MAX || m > INT_MAX || n > INT_MAX || k > INT_MAX) return false;
  const ColMajor A = as_col_major(m, k, a.a.strides[1], a.a.strides[2]);
  const ColMajor B = as_col_major(k, n, a.b.strides[1], a.b.strides[2]);
  if (!A.ok || !B.ok || A.ld > INT_MAX || B.ld > INT_MAX) return false;
  const std::int64_t ldc = m == 1 ? n : a.out.strides[1];
  if (!(n == 1 || a.out.strides[2] == 1) || ldc < n || ldc > INT_MAX) return false;
  return batch == 1 || (a.out.strides[0] > 0 && a.a.strides[0] >= 0 && a.b.strides[0] >= 0);
}

bool cublas_gemm(CudaStream& s, const rt::MatmulArgs& a) {
  if (!cublas_fits(a)) return false;
  cublasHandle_t h = handle_of(s);
  if (h == nullptr) return false;
  const std::int64_t batch = a.out.shape[0], m = a.out.shape[1], n = a.out.shape[2], k = a.a.shape[2];
  const ColMajor A = as_col_major(m, k, a.a.strides[1], a.a.strides[2]);
  const ColMajor B = as_col_major(k, n, a.b.strides[1], a.b.strides[2]);
  const std::int64_t ldc = m == 1 ? n : a.out.strides[1];
  const std::size_t es = dtype_size(a.out.dtype);
  const auto at = [es](const rt::TensorArg& t) {
    return bytes_of(*t.buffer) + static_cast<std::size_t>(t.offset) * es;
  };
  const cudaDataType_t dt = data_type(a.out.dtype);
  // TF32 only for f32 and only when the user allowed it; f16 and bf16 compute in f32.
  const cublasComputeType_t compute =
      a.out.dtype == DType::F32 && precision::allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const float alpha = a.alpha, beta = a.beta;  // beta == 0: cuBLAS does not read out
  // Row-major out = a @ b is column-major out^T = b^T @ a^T: b first.
  const cublasStatus_t st = cublasGemmStridedBatchedEx(
      h, B.op, A.op, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, at(a.b), dt,
      static_cast<int>(B.ld), batch == 1 ? 0 : a.b.strides[0], at(a.a), dt, static_cast<int>(A.ld),
      batch == 1 ? 0 : a.a.strides[0], &beta, at(a.out), dt, static_cast<int>(ldc), batch == 1 ? 0 : a.out.strides[0],
      static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS;
}

}  // namespace torsh::cuda
