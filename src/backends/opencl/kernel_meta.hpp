#pragma once
// Host mirrors of the structs and constants the shared kernels (src/kernels)
// take by value. OpenCL C `long` is 64-bit and `float` 32-bit, and both sides
// lay structs out with natural alignment, so the layouts below are the kernel's
// byte for byte; the static_asserts hold them to it.
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "torsh/runtime/backend_impl.hpp"

namespace torsh::opencl {

inline constexpr int kKernelMaxDims = 8;  // TORSH_MAX_DIMS in dialect.h
inline constexpr std::size_t kMatmulTile = 16;     // MM_TILE in matmul.kern.h
inline constexpr std::size_t kSoftmaxGroup = 128;  // SM_GROUP in softmax.kern.h
static_assert(kKernelMaxDims == static_cast<int>(rt::kMaxDims));

// Op codes of binary.kern.h (BINARY_ADD ...).
enum BinaryCode : std::int32_t { kAdd = 0, kSub = 1, kMul = 2, kDiv = 3, kMax = 4, kMin = 5, kPow = 6 };

// dialect.h: StridedMeta
struct StridedMeta {
  std::int64_t nd;
  std::int64_t numel;
  std::int64_t dims[kKernelMaxDims];
  std::int64_t st[3][kKernelMaxDims];
  std::int64_t off[3];
};
static_assert(sizeof(StridedMeta) == 8 * (2 + 8 + 3 * 8 + 3));
static_assert(offsetof(StridedMeta, nd) == 0);
static_assert(offsetof(StridedMeta, numel) == 8);
static_assert(offsetof(StridedMeta, dims) == 16);
static_assert(offsetof(StridedMeta, st) == 16 + 8 * 8);
static_assert(offsetof(StridedMeta, off) == 16 + 8 * 8 + 3 * 8 * 8);

// matmul.kern.h: MatmulMeta
struct MatmulMeta {
  std::int64_t m, n, k;
  std::int64_t sa[3], sb[3], so[3];
  std::int64_t oa, ob, oo;
  float alpha, beta;
};
static_assert(sizeof(MatmulMeta) == 8 * 15 + 2 * 4);
static_assert(offsetof(MatmulMeta, sa) == 24);
static_assert(offsetof(MatmulMeta, sb) == 48);
static_assert(offsetof(MatmulMeta, so) == 72);
static_assert(offsetof(MatmulMeta, oa) == 96);
static_assert(offsetof(MatmulMeta, oo) == 112);
static_assert(offsetof(MatmulMeta, alpha) == 120);
static_assert(offsetof(MatmulMeta, beta) == 124);

// Fills a StridedMeta for up to three tensors walking `shape` together: unit
// dims dropped, neighbours merged where every tensor is contiguous across them
// (a dense tensor becomes one dimension). Throws Unsupported past kKernelMaxDims.
StridedMeta make_strided_meta(const Shape& shape, std::initializer_list<const rt::TensorArg*> tensors);

}  // namespace torsh::opencl
