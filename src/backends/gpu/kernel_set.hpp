#pragma once
// What the shared kernels of src/kernels take, so every C-family backend
// registers them with the same dtypes and limits (and a new backend cannot
// claim more than the kernel body does). A backend adds its own limits (grid
// sizes, say) in its op file.
#include "kernel_meta.hpp"
#include "torsh/runtime/kernel_table.hpp"

namespace torsh::gpu {

// copy_b32_strided moves 4-byte elements unchanged: copies only, no conversion.
inline constexpr rt::DTypes kCopyDTypes{DType::F32, DType::I32};
// binary_f32_*, matmul_f32_tiled, softmax_f32_rows.
inline constexpr rt::DTypes kF32{DType::F32};

}  // namespace torsh::gpu
