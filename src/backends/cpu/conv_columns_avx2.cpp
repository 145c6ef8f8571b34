// The AVX2 packer of a convolution's f32 column panels. Which image elements
// 8 columns of a panel read through one tap does not depend on the channel,
// so each (tap, 8 columns) is classified once per panel and then copied for
// every channel of the k block: a plain load where the 8 elements are
// consecutive (stride 1 inside the image, and across output rows when the
// padding keeps the output as wide as the input), a masked load where some
// fall in the padding, a gather for strided or dilated taps.
#include <immintrin.h>

#include <algorithm>

#include "conv_columns.hpp"
#include "scratch.hpp"

#define TORSH_CONV_TARGET __attribute__((target("avx2,fma")))

namespace torsh::cpu {
namespace {

thread_local Scratch t_offsets, t_lanes;

enum class Kind : std::int32_t { Zero, Full, Masked, Gather };

struct alignas(32) Lanes {
  std::int32_t idx[8];   // Gather: offsets (0 where masked off)
  std::int32_t mask[8];  // -1 for lanes read from the image
  Kind kind;
  std::int32_t base;  // Full, Masked: lane l reads base + l
};

void classify(const std::int32_t* off, Lanes& e) {
  int valid = 0, first = -1;
  for (int l = 0; l < 8; ++l) {
    const bool in = off[l] >= 0;
    e.mask[l] = in ? -1 : 0;
    e.idx[l] = in ? off[l] : 0;
    if (in && first < 0) first = l;
    valid += in;
  }
  if (valid == 0) {
    e.kind = Kind::Zero;
    return;
  }
  e.base = off[first] - first;
  bool consecutive = true;
  for (int l = 0; l < 8; ++l) consecutive &= off[l] < 0 || off[l] == e.base + l;
  e.kind = !consecutive ? Kind::Gather : valid == 8 ? Kind::Full : Kind::Masked;
}

// xc + i as an address, i possibly negative or past the channel: only ever
// dereferenced through masked lanes that lie inside it.
const float* shifted(const float* xc, std::int32_t i) {
  return reinterpret_cast<const float*>(reinterpret_cast<std::intptr_t>(xc) + std::intptr_t(i) * 4);
}

}  // namespace

TORSH_CONV_TARGET void conv_pack_f32_avx2(const float* x, const ConvGeometry& g, std::int64_t k0, std::int64_t kc,
                                          std::int64_t j0, std::int64_t cols, int nr, float* dst) {
  const std::int64_t RS = g.R * g.S, HW = g.H * g.W;
  const int groups = nr / 8;
  auto* off = static_cast<std::int32_t*>(t_offsets.get(static_cast<std::size_t>(RS * nr) * sizeof(std::int32_t)));
  auto* lanes = static_cast<Lanes*>(t_lanes.get(static_cast<std::size_t>(RS * groups) * sizeof(Lanes)));
  for (std::int64_t b = 0; b * nr < cols; ++b) {
    conv_tap_offsets(g, j0 + b * nr, std::min<std::int64_t>(nr, cols - b * nr), nr, off);
    for (std::int64_t i = 0; i < RS * groups; ++i) classify(off + i * 8, lanes[i]);
    float* d = dst + b * kc * nr;
    std::int64_t c = k0 / RS, rs = k0 % RS;
    for (std::int64_t k = 0; k < kc; ++k, d += nr) {
      const float* xc = x + c * HW;
      const Lanes* e = lanes + rs * groups;
      for (int q = 0; q < groups; ++q, ++e) {
        __m256 v;
        switch (e->kind) {
          case Kind::Zero: v = _mm256_setzero_ps(); break;
          case Kind::Full: v = _mm256_loadu_ps(xc + e->base); break;
          case Kind::Masked:
            v = _mm256_maskload_ps(shifted(xc, e->base), _mm256_load_si256(reinterpret_cast<const __m256i*>(e->mask)));
            break;
          default:
            v = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), xc, _mm256_load_si256(reinterpret_cast<const __m256i*>(e->idx)),
                                         _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(e->mask))), 4);
        }
        _mm256_storeu_ps(d + q * 8, v);
      }
      if (++rs == RS) rs = 0, ++c;
    }
  }
}

}  // namespace torsh::cpu
