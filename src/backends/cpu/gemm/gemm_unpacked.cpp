// The GEMM paths without packing. Tiny products (and f64, which has no
// packed kernels): a plain i-k-j loop. Matrix-vector shapes (C is one row or
// one column): one multiply-add per matrix element, so they are bound by
// reading the matrix and packing would only add a pass over it. n == 1: dot
// products of A's rows with B's column; m == 1: B's rows scaled by A's row and
// summed, in column blocks kept in L1.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "../simd/simd.hpp"
#include "../types.hpp"
#include "gemm.hpp"
#include "gemm_convert.hpp"
#include "gemv_half.hpp"

namespace torsh::cpu::gemm {
namespace {

constexpr int kLanes = 16;  // independent sums: they vectorise without reassociation

template <class T>
[[gnu::always_inline]] inline float dot(const T* a, std::int64_t as, const T* x, std::int64_t xs, std::int64_t k) {
  float acc[kLanes] = {};
  std::int64_t p = 0;
  if (as == 1 && xs == 1)
    for (; p + kLanes <= k; p += kLanes)
      for (int l = 0; l < kLanes; ++l) acc[l] += to_f32(a[p + l]) * to_f32(x[p + l]);
  float tail = 0.0f;
  for (; p < k; ++p) tail += to_f32(a[p * as]) * to_f32(x[p * xs]);
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  return acc[0] + tail;
}

template <class T>
[[gnu::always_inline]] inline void column(const Problem& p) {
  const T* a = static_cast<const T*>(p.a.p);
  const T* x = static_cast<const T*>(p.b.p);
  constexpr std::int64_t kRows = 256;
  float out[kRows];
  if constexpr (!std::is_same_v<T, float>) {
    // Half-precision rows with vector conversions, against x widened once.
    const Isa isa = vector_isa();
    if (p.a.cs == 1 && isa != Isa::Generic) {
      thread_local std::vector<float> xf;
      if (static_cast<std::int64_t>(xf.size()) < p.k) xf.resize(static_cast<std::size_t>(p.k));
      for (std::int64_t q = 0; q < p.k; ++q) xf[static_cast<std::size_t>(q)] = to_f32(x[q * p.b.rs]);
      for (std::int64_t i0 = 0; i0 < p.m; i0 += kRows) {
        const std::int64_t rows = std::min(kRows, p.m - i0);
        dot_rows_half(isa, reinterpret_cast<const std::uint16_t*>(a + i0 * p.a.rs), p.a.rs, std::is_same_v<T, bf16_t>,
                      xf.data(), p.k, rows, out);
        store_tile(out, 1, p, i0, 0, static_cast<int>(rows), 1);
      }
      return;
    }
  }
  for (std::int64_t i0 = 0; i0 < p.m; i0 += kRows) {
    const std::int64_t rows = std::min(kRows, p.m - i0);
    for (std::int64_t i = 0; i < rows; ++i) out[i] = dot(a + (i0 + i) * p.a.rs, p.a.cs, x, p.b.rs, p.k);
    store_tile(out, 1, p, i0, 0, static_cast<int>(rows), 1);
  }
}

template <class T>
[[gnu::always_inline]] inline void row(const Problem& p) {
  const T* x = static_cast<const T*>(p.a.p);
  const T* b = static_cast<const T*>(p.b.p);
  constexpr std::int64_t kCols = 2048;  // 8 KB of sums
  alignas(64) float acc[kCols];
  for (std::int64_t j0 = 0; j0 < p.n; j0 += kCols) {
    const std::int64_t cols = std::min(kCols, p.n - j0);
    std::fill(acc, acc + cols, 0.0f);
    for (std::int64_t q = 0; q < p.k; ++q) {
      const float xv = to_f32(x[q * p.a.cs]);
      const T* br = b + q * p.b.rs + j0 * p.b.cs;
      if (p.b.cs == 1)
        for (std::int64_t j = 0; j < cols; ++j) acc[j] += xv * to_f32(br[j]);
      else
        for (std::int64_t j = 0; j < cols; ++j) acc[j] += xv * to_f32(br[j * p.b.cs]);
    }
    store_tile(acc, 0, p, 0, j0, 1, static_cast<int>(cols));
  }
}

TORSH_SIMD_CLONES void column_f32(const Problem& p) { column<float>(p); }
TORSH_SIMD_CLONES void column_f16(const Problem& p) { column<f16_t>(p); }
TORSH_SIMD_CLONES void column_bf16(const Problem& p) { column<bf16_t>(p); }
TORSH_SIMD_CLONES void row_f32(const Problem& p) { row<float>(p); }
TORSH_SIMD_CLONES void row_f16(const Problem& p) { row<f16_t>(p); }
TORSH_SIMD_CLONES void row_bf16(const Problem& p) { row<bf16_t>(p); }

}  // namespace

void run_direct(const Problem& p) {
  visit_float_dtype(p.a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = typename Acc<T>::type;  // f64 stays f64, the rest accumulate in f32
    auto widen = [](T v) -> A {
      if constexpr (std::is_same_v<T, double>)
        return v;
      else
        return to_f32(v);
    };
    const T* a = static_cast<const T*>(p.a.p);
    const T* b = static_cast<const T*>(p.b.p);
    T* c = static_cast<T*>(p.c);
    A row[64];
    for (std::int64_t j0 = 0; j0 < p.n; j0 += 64) {
      const std::int64_t nj = std::min<std::int64_t>(64, p.n - j0);
      for (std::int64_t i = 0; i < p.m; ++i) {
        std::fill(row, row + nj, A(0));
        for (std::int64_t q = 0; q < p.k; ++q) {
          const A av = widen(a[i * p.a.rs + q * p.a.cs]);
          const T* br = b + q * p.b.rs + j0 * p.b.cs;
          for (std::int64_t j = 0; j < nj; ++j) row[j] += av * widen(br[j * p.b.cs]);
        }
        T* cr = c + i * p.c_rs + j0 * p.c_cs;
        for (std::int64_t j = 0; j < nj; ++j) {
          A v = static_cast<A>(p.alpha) * row[j];
          if (p.beta != 0.0f) v += static_cast<A>(p.beta) * widen(cr[j * p.c_cs]);
          if constexpr (std::is_same_v<T, double>)
            cr[j * p.c_cs] = v;
          else
            cr[j * p.c_cs] = from_f32<T>(v);
        }
      }
    }
  });
}

void run_gemv(const Problem& p) {
  // One row times a B whose columns are contiguous (x @ W^T with W [n, k] row
  // major, a linear layer's weight): the row form would walk W across its
  // rows, so compute the transpose C^T = W x^T as dot products along them.
  if (p.m == 1 && p.n > 1 && p.b.rs == 1 && p.b.cs != 1) {
    Problem t = p;
    t.a = {p.b.p, p.b.dtype, p.b.cs, p.b.rs};
    t.b = {p.a.p, p.a.dtype, p.a.cs, p.a.rs};
    t.m = p.n;
    t.n = 1;
    t.c_rs = p.c_cs;
    t.c_cs = p.c_rs;
    return run_gemv(t);
  }
  const bool col = p.n == 1;
  switch (p.a.dtype) {
    case DType::F16: return col ? column_f16(p) : row_f16(p);
    case DType::BF16: return col ? column_bf16(p) : row_bf16(p);
    default: return col ? column_f32(p) : row_f32(p);
  }
}

}  // namespace torsh::cpu::gemm
