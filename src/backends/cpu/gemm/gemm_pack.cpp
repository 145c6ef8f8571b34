// Packing into micro-kernel panels (layouts in gemm.hpp). Packing is O(n^2)
// against the kernels' O(n^3), but for n of a few hundred it is a visible
// share, so the common layouts (the walked dimension contiguous) get loops the
// compiler vectorises, cloned per x86 level like simd.cpp.
#include <algorithm>
#include <cstring>

#include "../simd/simd.hpp"
#include "../types.hpp"
#include "gemm.hpp"
#include "gemm_convert.hpp"

namespace torsh::cpu::gemm {
namespace {

// A panel: dst[p * MR + i] = a[i, p].
template <class T>
[[gnu::always_inline]] inline void pack_a_f32(const T* a, std::int64_t rs, std::int64_t cs, std::int64_t rows,
                                              std::int64_t kc, int mr, float* __restrict dst) {
  if (cs == 1) {
    for (std::int64_t i = 0; i < rows; ++i) {
      const T* s = a + i * rs;
      for (std::int64_t p = 0; p < kc; ++p) dst[p * mr + i] = to_f32(s[p]);
    }
  } else {
    for (std::int64_t p = 0; p < kc; ++p)
      for (std::int64_t i = 0; i < rows; ++i) dst[p * mr + i] = to_f32(a[i * rs + p * cs]);
  }
}

// B panel: dst[p * NR + j] = b[p, j], zero for j >= cols.
template <class T>
[[gnu::always_inline]] inline void pack_b_f32(const T* b, std::int64_t rs, std::int64_t cs, std::int64_t kc,
                                              std::int64_t cols, int nr, float* __restrict dst) {
  if (cs == 1) {
    for (std::int64_t p = 0; p < kc; ++p) {
      const T* s = b + p * rs;
      float* d = dst + p * nr;
      for (std::int64_t j = 0; j < cols; ++j) d[j] = to_f32(s[j]);
      for (std::int64_t j = cols; j < nr; ++j) d[j] = 0.0f;
    }
    return;
  }
  if (cols < nr)
    for (std::int64_t p = 0; p < kc; ++p)
      for (std::int64_t j = cols; j < nr; ++j) dst[p * nr + j] = 0.0f;
  if (rs == 1) {
    for (std::int64_t j = 0; j < cols; ++j) {
      const T* s = b + j * cs;
      for (std::int64_t p = 0; p < kc; ++p) dst[p * nr + j] = to_f32(s[p]);
    }
  } else {
    for (std::int64_t p = 0; p < kc; ++p)
      for (std::int64_t j = 0; j < cols; ++j) dst[p * nr + j] = to_f32(b[p * rs + j * cs]);
  }
}

TORSH_SIMD_CLONES void pack_a_f32_from_f32(const float* a, std::int64_t rs, std::int64_t cs, std::int64_t rows,
                                           std::int64_t kc, int mr, float* dst) {
  pack_a_f32(a, rs, cs, rows, kc, mr, dst);
}
TORSH_SIMD_CLONES void pack_a_f32_from_f16(const f16_t* a, std::int64_t rs, std::int64_t cs, std::int64_t rows,
                                           std::int64_t kc, int mr, float* dst) {
  pack_a_f32(a, rs, cs, rows, kc, mr, dst);
}
TORSH_SIMD_CLONES void pack_a_f32_from_bf16(const bf16_t* a, std::int64_t rs, std::int64_t cs, std::int64_t rows,
                                            std::int64_t kc, int mr, float* dst) {
  pack_a_f32(a, rs, cs, rows, kc, mr, dst);
}
TORSH_SIMD_CLONES void pack_b_f32_from_f32(const float* b, std::int64_t rs, std::int64_t cs, std::int64_t kc,
                                           std::int64_t cols, int nr, float* dst) {
  pack_b_f32(b, rs, cs, kc, cols, nr, dst);
}
TORSH_SIMD_CLONES void pack_b_f32_from_f16(const f16_t* b, std::int64_t rs, std::int64_t cs, std::int64_t kc,
                                           std::int64_t cols, int nr, float* dst) {
  pack_b_f32(b, rs, cs, kc, cols, nr, dst);
}
TORSH_SIMD_CLONES void pack_b_f32_from_bf16(const bf16_t* b, std::int64_t rs, std::int64_t cs, std::int64_t kc,
                                            std::int64_t cols, int nr, float* dst) {
  pack_b_f32(b, rs, cs, kc, cols, nr, dst);
}

// A panel of pairs: dst[(q * MR + i) * 2 + t] = a[i, 2q + t], zero past kc.
// With k contiguous a pair is one aligned-or-not 32-bit word of the source row.
TORSH_SIMD_CLONES void pack_a_pairs(const std::uint16_t* a, std::int64_t rs, std::int64_t cs, std::int64_t rows,
                                    std::int64_t kc, int mr, std::uint16_t* __restrict dst) {
  const std::int64_t full = kc / 2;
  if (cs == 1) {
    auto* d32 = reinterpret_cast<std::uint32_t*>(dst);
    for (std::int64_t i = 0; i < rows; ++i) {
      const std::uint16_t* s = a + i * rs;
      for (std::int64_t q = 0; q < full; ++q) {
        std::uint32_t w;
        std::memcpy(&w, s + 2 * q, 4);
        d32[q * mr + i] = w;
      }
    }
  } else {
    for (std::int64_t q = 0; q < full; ++q)
      for (std::int64_t i = 0; i < rows; ++i) {
        dst[(q * mr + i) * 2] = a[i * rs + 2 * q * cs];
        dst[(q * mr + i) * 2 + 1] = a[i * rs + (2 * q + 1) * cs];
      }
  }
  if (kc % 2)
    for (std::int64_t i = 0; i < rows; ++i) {
      dst[(full * mr + i) * 2] = a[i * rs + (kc - 1) * cs];
      dst[(full * mr + i) * 2 + 1] = 0;
    }
}

// B panel of pairs: dst[(q * NR + j) * 2 + t] = b[2q + t, j], zero past kc and cols.
TORSH_SIMD_CLONES void pack_b_pairs(const std::uint16_t* b, std::int64_t rs, std::int64_t cs, std::int64_t kc,
                                    std::int64_t cols, int nr, std::uint16_t* __restrict dst) {
  const std::int64_t pairs = (kc + 1) / 2;
  for (std::int64_t q = 0; q < pairs; ++q) {
    const std::uint16_t* r0 = b + 2 * q * rs;
    const bool has1 = 2 * q + 1 < kc;
    std::uint16_t* d = dst + q * nr * 2;
    if (cs == 1 && has1) {
      const std::uint16_t* r1 = r0 + rs;
      for (std::int64_t j = 0; j < cols; ++j) {
        d[2 * j] = r0[j];
        d[2 * j + 1] = r1[j];
      }
    } else {
      for (std::int64_t j = 0; j < cols; ++j) {
        d[2 * j] = r0[j * cs];
        d[2 * j + 1] = has1 ? r0[rs + j * cs] : std::uint16_t(0);
      }
    }
    for (std::int64_t j = cols; j < nr; ++j) d[2 * j] = d[2 * j + 1] = 0;
  }
}

template <class T>
const T* at(const Mat& m) {
  return static_cast<const T*>(m.p);
}

}  // namespace

std::size_t a_panel_bytes(const Kernel& kern, std::int64_t kc) {
  if (kern.panel == Panel::Bf16Pairs) return static_cast<std::size_t>((kc + 1) / 2 * kern.mr) * 4;
  return static_cast<std::size_t>(kc * kern.mr) * sizeof(float);
}

std::size_t b_panel_bytes(const Kernel& kern, std::int64_t kc) {
  if (kern.panel == Panel::Bf16Pairs) return static_cast<std::size_t>((kc + 1) / 2 * kern.nr) * 4;
  return static_cast<std::size_t>(kc * kern.nr) * sizeof(float);
}

namespace {

void pack_a_panel(const Kernel& kern, const Mat& a, std::int64_t rows, std::int64_t kc, void* dst) {
  if (kern.panel == Panel::Bf16Pairs) {
    pack_a_pairs(at<std::uint16_t>(a), a.rs, a.cs, rows, kc, kern.mr, static_cast<std::uint16_t*>(dst));
    return;
  }
  float* d = static_cast<float*>(dst);
  switch (a.dtype) {
    case DType::F16: return pack_a_f32_from_f16(at<f16_t>(a), a.rs, a.cs, rows, kc, kern.mr, d);
    case DType::BF16: return pack_a_f32_from_bf16(at<bf16_t>(a), a.rs, a.cs, rows, kc, kern.mr, d);
    default: return pack_a_f32_from_f32(at<float>(a), a.rs, a.cs, rows, kc, kern.mr, d);
  }
}

void pack_b_panel(const Kernel& kern, const Mat& b, std::int64_t kc, std::int64_t cols, void* dst) {
  if (kern.panel == Panel::Bf16Pairs) {
    pack_b_pairs(at<std::uint16_t>(b), b.rs, b.cs, kc, cols, kern.nr, static_cast<std::uint16_t*>(dst));
    return;
  }
  float* d = static_cast<float*>(dst);
  switch (b.dtype) {
    case DType::F16: return pack_b_f32_from_f16(at<f16_t>(b), b.rs, b.cs, kc, cols, kern.nr, d);
    case DType::BF16: return pack_b_f32_from_bf16(at<bf16_t>(b), b.rs, b.cs, kc, cols, kern.nr, d);
    default: return pack_b_f32_from_f32(at<float>(b), b.rs, b.cs, kc, cols, kern.nr, d);
  }
}

}  // namespace

void pack_a_generic(const Kernel& kern, const Mat& a, std::int64_t rows, std::int64_t kc, void* dst) {
  const std::size_t stride = a_panel_bytes(kern, kc);
  for (std::int64_t r = 0; r < rows; r += kern.mr)
    pack_a_panel(kern, a.at(r, 0), std::min<std::int64_t>(kern.mr, rows - r), kc,
                 static_cast<char*>(dst) + r / kern.mr * stride);
}

void pack_b_generic(const Kernel& kern, const Mat& b, std::int64_t kc, std::int64_t cols, void* dst) {
  const std::size_t stride = b_panel_bytes(kern, kc);
  for (std::int64_t j = 0; j < cols; j += kern.nr)
    pack_b_panel(kern, b.at(0, j), kc, std::min<std::int64_t>(kern.nr, cols - j),
                 static_cast<char*>(dst) + j / kern.nr * stride);
}

}  // namespace torsh::cpu::gemm
