#pragma once
// Process-wide numeric precision settings for backends with faster, less
// precise modes.
//
// allow_tf32: whether f32 matmuls may round their inputs to TensorFloat-32
// (10-bit mantissa, f32 range and accumulation) on GPUs with tensor cores
// for it. Off by default: f32 matmuls compute in full f32, as the CPU does.
// The CUDA plugin's cuBLAS GEMM honours it; backends without such a mode
// ignore it. Enable with precision::set_allow_tf32(true) or TORSH_ALLOW_TF32=1
// (read once, at the first query); the setting applies to matmuls launched
// after it changes.
namespace torsh::precision {

void set_allow_tf32(bool allow);
bool allow_tf32();

}  // namespace torsh::precision
