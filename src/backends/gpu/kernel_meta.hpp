#pragma once
// Host code shared by the C-family GPU backends (OpenCL, CUDA, HIP): the
// metadata the shared kernels (src/backends/gpu/kernels) take, filled once here from the
// op arguments. The structs are the kernels' own (kernels/meta.h), not mirrors.
#include <cstdint>
#include <initializer_list>

#include "backends/gpu/kernels/meta.h"
#include "torsh/backend/backend_impl.hpp"

static_assert(sizeof(long) == 8, "kernels/meta.h takes `long` to be 64-bit, as in OpenCL C");
// Tensors have at most rt::kMaxDims dimensions, so every view fits StridedMeta.
static_assert(TORSH_MAX_DIMS >= torsh::rt::kMaxDims);

namespace torsh::gpu {

// StridedMeta for up to three tensors walking `shape` together (tensor i is
// index i in the kernel). Unit dimensions are dropped and neighbours
// contiguous in every tensor merged, so a dense tensor becomes one dimension.
StridedMeta strided_meta(const Shape& shape, std::initializer_list<const rt::TensorArg*> tensors);
// True when every tensor of m is dense in the same order (one unit-stride dimension).
inline bool dense(const StridedMeta& m, int tensors) {
  if (m.nd != 1) return false;
  for (int t = 0; t < tensors; ++t)
    if (m.st[t][0] != 1) return false;
  return true;
}

// MatmulMeta of rank-3 a, b, out (strides and element offsets as they are).
MatmulMeta matmul_meta(const rt::MatmulArgs& a);

// binary.kern.h's op code.
int binary_code(rt::BinaryOp op);

// Work-groups for a grid-stride kernel over n items in groups of `group`:
// enough to occupy every compute unit several times over, at least one; the
// kernels stride over the rest.
std::int64_t grid_groups(std::int64_t n, std::int64_t group, int compute_units);
// The most work-groups a grid-stride kernel is given: enough that each item
// has a handful of elements. A few waves per compute unit would do on a GPU,
// but a CPU device (PoCL) vectorizes across work-items, not along one item's
// loop, and runs far slower with few groups (src/backends/gpu/README.md, kernel_meta.hpp).
inline std::int64_t max_groups(int compute_units) {
  return std::int64_t{compute_units > 1 ? compute_units : 1} * 65536;
}

// Rounds v up to a multiple of `tile` (global sizes of tiled kernels).
inline std::int64_t round_up(std::int64_t v, std::int64_t tile) { return (v + tile - 1) / tile * tile; }

}  // namespace torsh::gpu
