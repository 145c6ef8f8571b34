// AVX2 tiles (x86-64-v3 without VNNI): u8 x s8 products by vpmaddubsw (pairs
// summed to saturating i16: at most 2 x 15 x 127 for nibbles) and vpmaddwd.
#include <immintrin.h>

#include <cstring>

#include "../../../core/quant_k.hpp"
#include "qmatmul_kernels.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
// Everything below is AVX2 code: the driver checks isa_usable() first.
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#define TORSH_INLINE __attribute__((always_inline)) inline

namespace torsh::cpu::quant {
namespace {

struct Maddubs {
  // Q8_0 as |w| . sign(q, w): at most 2 x 128 x 127 per i16, no saturation.
  static constexpr bool kSignedQ8 = true;
  static TORSH_INLINE __m256i dot(__m256i acc, __m256i u, __m256i q) {
    const __m256i pairs = _mm256_maddubs_epi16(u, q);
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
  static TORSH_INLINE __m256i dot16(__m256i acc, __m256i l, __m256i q) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(l, q));
  }
};

#include "qmatmul_avx2_body.hpp"

}  // namespace

const Kernels& kernels_avx2() {
  static const Kernels k{Isa::Avx2, kRows, kCols, stream_rows, tile<Maddubs, false>, tile<Maddubs, true>};
  return k;
}

}  // namespace torsh::cpu::quant

#pragma GCC pop_options
#else  // no x86: isa_usable(Avx2) is false and these kernels never run.
namespace torsh::cpu::quant {
const Kernels& kernels_avx2() { return kernels_generic(); }
}  // namespace torsh::cpu::quant
#endif
