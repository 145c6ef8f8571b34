#pragma once
// cuBLAS GEMM for the CUDA plugin's matmul (matmul.cu): f32 (full f32 unless
// precision::allow_tf32()), f16 and bf16 with f32 compute, through
// cublasGemmStridedBatchedEx on the stream's own cuBLAS handle. The ROCm
// build (the same sources through hipcc) has no cuBLAS: this file is not
// compiled there and matmul.cu keeps to the shared kernels.
#include "device.hpp"
#include "torsh/backend/op_args.hpp"

namespace torsh::cuda {

// Whether cuBLAS can express this matmul: f32, f16 or bf16; k > 0; each of a
// and b with a unit stride in one of its two dims (a transpose otherwise) and
// a leading dimension covering the other; out row-major; sizes, leading
// dimensions and the batch count within int; out's batch stride positive
// where there are several batches (a's and b's may be 0: broadcast).
bool cublas_fits(const rt::MatmulArgs& a);
// Runs the matmul on s with cuBLAS. False when cuBLAS refused it (nothing
// written); the caller then runs the shared kernel.
bool cublas_gemm(CudaStream& s, const rt::MatmulArgs& a);

}  // namespace torsh::cuda
