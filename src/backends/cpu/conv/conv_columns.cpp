// Packing a convolution's column matrix from the image (conv_columns.hpp).
// f32 into f32 panels has an AVX2 packer; other dtypes and panel layouts
// gather one panel's rows into a small row-major block and hand it to the
// kernel's own packer, which widens and pairs as it does for any B.
#include "conv_columns.hpp"
#include "../platform/isa.hpp"

#include <algorithm>
#include <cstring>

#include "../platform/scratch.hpp"
#include "../simd/simd_avx2.hpp"

namespace torsh::cpu {
namespace {

thread_local Scratch t_offsets, t_block;

// One panel, gathered as raw elements of E bytes (no conversion is needed to
// copy them, and an all-zero pattern is 0 in every float dtype).
template <class E>
void gather_block(const E* x, const ConvGeometry& g, const std::int32_t* off, std::int64_t k0, std::int64_t kc, int nr,
                  E* block) {
  const std::int64_t RS = g.R * g.S, HW = g.H * g.W;
  std::int64_t c = k0 / RS, rs = k0 % RS;
  for (std::int64_t k = 0; k < kc; ++k) {
    const E* xc = x + c * HW;
    const std::int32_t* o = off + rs * nr;
    E* d = block + k * nr;
    for (int l = 0; l < nr; ++l) d[l] = o[l] >= 0 ? xc[o[l]] : E(0);
    if (++rs == RS) rs = 0, ++c;
  }
}

}  // namespace

bool conv_fits_int32(const ConvGeometry& g) {
  constexpr std::int64_t kLimit = std::int64_t(1) << 30;
  return g.H * g.W < kLimit && g.P * g.stride_h + g.R * g.dil_h + g.H + g.pad_h < kLimit &&
         g.Q * g.stride_w + g.S * g.dil_w + g.W + g.pad_w < kLimit;
}

void conv_tap_offsets(const ConvGeometry& g, std::int64_t j0, std::int64_t cols, int nr, std::int32_t* off) {
  std::int64_t p = j0 / g.Q, q = j0 % g.Q;
  for (int l = 0; l < nr; ++l) {
    for (std::int64_t r = 0; r < g.R; ++r) {
      const std::int64_t h = p * g.stride_h - g.pad_h + r * g.dil_h;
      for (std::int64_t s = 0; s < g.S; ++s) {
        const std::int64_t w = q * g.stride_w - g.pad_w + s * g.dil_w;
        const bool in = l < cols && h >= 0 && h < g.H && w >= 0 && w < g.W;
        off[(r * g.S + s) * nr + l] = in ? static_cast<std::int32_t>(h * g.W + w) : -1;
      }
    }
    if (++q == g.Q) q = 0, ++p;
  }
}

void conv_pack_any(const void* x, DType dtype, const ConvGeometry& g, const gemm::Kernel& kern, std::int64_t k0,
                   std::int64_t kc, std::int64_t j0, std::int64_t cols, void* dst) {
  const int nr = kern.nr;
  const std::int64_t RS = g.R * g.S;
  const std::size_t esize = dtype_size(dtype), panel = gemm::b_panel_bytes(kern, kc);
  auto* off = static_cast<std::int32_t*>(t_offsets.get(static_cast<std::size_t>(RS * nr) * sizeof(std::int32_t)));
  void* block = t_block.get(static_cast<std::size_t>(kc * nr) * esize);
  for (std::int64_t b = 0; b * nr < cols; ++b) {
    const std::int64_t n = std::min<std::int64_t>(nr, cols - b * nr);
    conv_tap_offsets(g, j0 + b * nr, n, nr, off);
    if (esize == 4)
      gather_block(static_cast<const std::uint32_t*>(x), g, off, k0, kc, nr, static_cast<std::uint32_t*>(block));
    else
      gather_block(static_cast<const std::uint16_t*>(x), g, off, k0, kc, nr, static_cast<std::uint16_t*>(block));
    kern.pack_b(kern, gemm::Mat{block, dtype, nr, 1}, kc, n, static_cast<char*>(dst) + b * panel);
  }
}

void ConvColumns::pack(const gemm::Kernel& kern, std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t cols,
                       void* dst) const {
  if (dtype_ == DType::F32 && kern.panel == gemm::Panel::F32 && kern.nr % 8 == 0 && kern.nr <= 64 && fits_int32_ &&
      isa_usable(Isa::Avx2))
    return conv_pack_f32_avx2(static_cast<const float*>(x_), g_, k0, kc, j0, cols, kern.nr, static_cast<float*>(dst));
  conv_pack_any(x_, dtype_, g_, kern, k0, kc, j0, cols, dst);
}

}  // namespace torsh::cpu
