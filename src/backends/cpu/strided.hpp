#pragma once
// Walks K strided tensors of one shape together, in runs along the innermost
// (collapsed) dimension, over a linear element range. Kernels parallelise by
// giving each thread its own range.
#include <algorithm>
#include <array>
#include <cstdint>

#include "torsh/backend/backend_impl.hpp"

namespace torsh::cpu {

template <std::size_t K>
struct Layout {
  int nd = 0;
  std::int64_t dims[rt::kMaxDims] = {};
  std::int64_t st[K][rt::kMaxDims] = {};

  // Drops unit dims and merges neighbours that are contiguous in every tensor.
  Layout(const Shape& shape, const std::array<const Strides*, K>& strides) {
    for (std::size_t d = 0; d < shape.ndim(); ++d) {
      if (shape[d] == 1) continue;
      if (nd > 0) {
        bool merge = true;
        for (std::size_t k = 0; k < K; ++k)
          if (st[k][nd - 1] != (*strides[k])[d] * shape[d]) merge = false;
        if (merge) {
          dims[nd - 1] *= shape[d];
          for (std::size_t k = 0; k < K; ++k) st[k][nd - 1] = (*strides[k])[d];
          continue;
        }
      }
      dims[nd] = shape[d];
      for (std::size_t k = 0; k < K; ++k) st[k][nd] = (*strides[k])[d];
      ++nd;
    }
    if (nd == 0) {
      nd = 1;
      dims[0] = 1;
      for (std::size_t k = 0; k < K; ++k) st[k][0] = 1;
    }
  }

  std::int64_t inner_stride(std::size_t k) const { return st[k][nd - 1]; }
};

// f(offsets, len): offsets[k] is tensor k's element offset of the run's first element.
template <std::size_t K, class F>
void for_each_run(const Layout<K>& L, std::int64_t begin, std::int64_t end, F&& f) {
  std::int64_t idx[rt::kMaxDims];
  std::array<std::int64_t, K> off{};
  std::int64_t rem = begin;
  for (int d = L.nd - 1; d >= 0; --d) {
    idx[d] = rem % L.dims[d];
    rem /= L.dims[d];
    for (std::size_t k = 0; k < K; ++k) off[k] += idx[d] * L.st[k][d];
  }
  const int last = L.nd - 1;
  for (std::int64_t i = begin; i < end;) {
    const std::int64_t len = std::min(L.dims[last] - idx[last], end - i);
    f(off, len);
    i += len;
    idx[last] += len;
    for (std::size_t k = 0; k < K; ++k) off[k] += len * L.st[k][last];
    for (int d = last; d > 0 && idx[d] == L.dims[d]; --d) {
      for (std::size_t k = 0; k < K; ++k) off[k] += L.st[k][d - 1] - L.dims[d] * L.st[k][d];
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

}  // namespace torsh::cpu
