// The AVX2 packer of a convolution's f32 column panels. Which image elements
// 8 columns of a panel read through one tap does not depend on the channel,
// so each (tap, 8 columns) is classified once per panel and then copied for
// every channel of the k block: a plain load where the 8 elements are
// consecutive (stride 1 inside the image, and across output rows when the
// padding keeps the output as wide as the input), a masked load where some
// fall in the padding, a gather for strided or dilated taps.
#include <immintrin.h>

#include <algorithm>

#include "../platform/scratch.hpp"
#include "conv_columns.hpp"

#define TORSH_CONV_TARGET __attribute__((target("avx2,fma")))

namespace torsh::cpu {
namespace {

thread_local Scratch t_lanes;

constexpr int kMaxNr = 64;

enum class Kind : std::int32_t { Zero, Full, Masked, Gather };

struct alignas(32) Lanes {
  std::int32_t idx[8];   // Gather: offsets (0 where masked off)
  std::int32_t mask[8];  // -1 for lanes read from the image
  Kind kind;
  std::int32_t base;  // Full, Masked: lane l reads base + l
};

// The lanes of every (tap, group of 8 columns) of the panel of columns
// [j0, j0 + cols), nr wide, in int32 vectors (the caller checked that the
// geometry fits int32).
TORSH_CONV_TARGET void classify_panel(const ConvGeometry& g, std::int64_t j0, std::int64_t cols, int groups,
                                      Lanes* lanes) {
  alignas(32) std::int32_t h0[kMaxNr], w0[kMaxNr], live[kMaxNr], diff[8];
  std::int64_t p = j0 / g.Q, q = j0 % g.Q;
  for (int l = 0; l < groups * 8; ++l) {
    h0[l] = static_cast<std::int32_t>(p * g.stride_h - g.pad_h);
    w0[l] = static_cast<std::int32_t>(q * g.stride_w - g.pad_w);
    live[l] = l < cols ? -1 : 0;
    if (++q == g.Q) q = 0, ++p;
  }
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), minus1 = _mm256_set1_epi32(-1);
  const __m256i H = _mm256_set1_epi32(static_cast<std::int32_t>(g.H)),
                W = _mm256_set1_epi32(static_cast<std::int32_t>(g.W));
  for (int grp = 0; grp < groups; ++grp) {
    const __m256i vh0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(h0 + 8 * grp));
    const __m256i vw0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(w0 + 8 * grp));
    const __m256i vlive = _mm256_load_si256(reinterpret_cast<const __m256i*>(live + 8 * grp));
    for (std::int64_t r = 0; r < g.R; ++r) {
      const __m256i h = _mm256_add_epi32(vh0, _mm256_set1_epi32(static_cast<std::int32_t>(r * g.dil_h)));
      const __m256i h_in = _mm256_and_si256(_mm256_cmpgt_epi32(h, minus1), _mm256_cmpgt_epi32(H, h));
      const __m256i row = _mm256_mullo_epi32(h, W);
      for (std::int64_t s = 0; s < g.S; ++s) {
        const __m256i w = _mm256_add_epi32(vw0, _mm256_set1_epi32(static_cast<std::int32_t>(s * g.dil_w)));
        const __m256i valid = _mm256_and_si256(
            _mm256_and_si256(vlive, h_in), _mm256_and_si256(_mm256_cmpgt_epi32(w, minus1), _mm256_cmpgt_epi32(W, w)));
        const __m256i off = _mm256_add_epi32(row, w);
        Lanes& e = lanes[(r * g.S + s) * groups + grp];
        _mm256_store_si256(reinterpret_cast<__m256i*>(e.mask), valid);
        const int m = _mm256_movemask_ps(_mm256_castsi256_ps(valid));
        if (m == 0) {
          e.kind = Kind::Zero;
          continue;
        }
        // Lanes read base + l when off - l is the same in every valid lane.
        const __m256i d = _mm256_sub_epi32(off, iota);
        _mm256_store_si256(reinterpret_cast<__m256i*>(diff), d);
        e.base = diff[__builtin_ctz(static_cast<unsigned>(m))];
        const int same = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(d, _mm256_set1_epi32(e.base))));
        if ((same & m) == m) {
          e.kind = m == 0xFF ? Kind::Full : Kind::Masked;
        } else {
          e.kind = Kind::Gather;
          _mm256_store_si256(reinterpret_cast<__m256i*>(e.idx), _mm256_and_si256(off, valid));
        }
      }
    }
  }
}

// xc + i as an address, i possibly negative or past the channel: only ever
// dereferenced through masked lanes that lie inside it.
const float* shifted(const float* xc, std::int32_t i) {
  return reinterpret_cast<const float*>(reinterpret_cast<std::intptr_t>(xc) + std::intptr_t(i) * 4);
}

// One panel, tap by tap within blocks of channels: the 8 columns of a group
// read the same offsets through a tap in every channel, so the kind of load
// is chosen once per block and the loop over its channels is a load and a
// store; the block's image lines stay in L1 while its taps go by.
constexpr std::int64_t kChannelBlock = 16;

TORSH_CONV_TARGET void copy_panel(const float* x, std::int64_t HW, std::int64_t RS, const Lanes* lanes, int groups,
                                  std::int64_t k0, std::int64_t kc, float* d) {
  const std::int64_t k1 = k0 + kc, nr = groups * 8, row_step = RS * nr;
  for (std::int64_t cb = k0 / RS; cb * RS < k1; cb += kChannelBlock) {
    for (std::int64_t rs = 0; rs < RS; ++rs) {
      // Rows k = c * RS + rs of [k0, k1) with c in this block.
      const std::int64_t c0 = std::max(cb, k0 <= rs ? 0 : (k0 - rs + RS - 1) / RS);
      const std::int64_t c1 = std::min(cb + kChannelBlock, k1 <= rs ? 0 : (k1 - rs + RS - 1) / RS);
      if (c0 >= c1) continue;
      const std::int64_t n = c1 - c0;
      for (int q = 0; q < groups; ++q) {
        const Lanes& e = lanes[rs * groups + q];
        float* dd = d + (c0 * RS + rs - k0) * nr + q * 8;
        const float* src = x + c0 * HW;
        const __m256i mask = _mm256_load_si256(reinterpret_cast<const __m256i*>(e.mask));
        switch (e.kind) {
          case Kind::Zero:
            for (std::int64_t i = 0; i < n; ++i, dd += row_step) _mm256_storeu_ps(dd, _mm256_setzero_ps());
            break;
          case Kind::Full:
            src += e.base;
            for (std::int64_t i = 0; i < n; ++i, dd += row_step, src += HW) _mm256_storeu_ps(dd, _mm256_loadu_ps(src));
            break;
          case Kind::Masked:
            for (std::int64_t i = 0; i < n; ++i, dd += row_step, src += HW)
              _mm256_storeu_ps(dd, _mm256_maskload_ps(shifted(src, e.base), mask));
            break;
          case Kind::Gather: {
            const __m256i idx = _mm256_load_si256(reinterpret_cast<const __m256i*>(e.idx));
            for (std::int64_t i = 0; i < n; ++i, dd += row_step, src += HW)
              _mm256_storeu_ps(dd,
                               _mm256_mask_i32gather_ps(_mm256_setzero_ps(), src, idx, _mm256_castsi256_ps(mask), 4));
            break;
          }
        }
      }
    }
  }
}

}  // namespace

TORSH_CONV_TARGET void conv_pack_f32_avx2(const float* x, const ConvGeometry& g, std::int64_t k0, std::int64_t kc,
                                          std::int64_t j0, std::int64_t cols, int nr, float* dst) {
  const std::int64_t RS = g.R * g.S, HW = g.H * g.W;
  const int groups = nr / 8;
  auto* lanes = static_cast<Lanes*>(t_lanes.get(static_cast<std::size_t>(RS * groups) * sizeof(Lanes)));
  for (std::int64_t b = 0; b * nr < cols; ++b) {
    classify_panel(g, j0 + b * nr, std::min<std::int64_t>(nr, cols - b * nr), groups, lanes);
    copy_panel(x, HW, RS, lanes, groups, k0, kc, dst + b * kc * nr);
  }
}

}  // namespace torsh::cpu
