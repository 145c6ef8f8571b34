// AVX-VNNI tiles (AVX2 parts with 256-bit vpdpbusd, and AVX-512 parts when
// forced): one instruction per block, no saturation, so Q8_0 takes the
// offset levels and the correction lanes like the nibble formats.
#include <immintrin.h>

#include <cstring>

#include "../../../core/quant_k.hpp"
#include "qmatmul_kernels.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
// Everything below is AVX-VNNI code: the driver checks isa_usable() first.
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avxvnni")
#define TORSH_INLINE __attribute__((always_inline)) inline

namespace torsh::cpu::quant {
namespace {

struct Vnni {
  static constexpr bool kSignedQ8 = false;
  static TORSH_INLINE __m256i dot(__m256i acc, __m256i u, __m256i q) { return _mm256_dpbusd_avx_epi32(acc, u, q); }
  static TORSH_INLINE __m256i dot16(__m256i acc, __m256i l, __m256i q) { return _mm256_dpwssd_avx_epi32(acc, l, q); }
};

#include "qmatmul_avx2_body.hpp"

}  // namespace

const Kernels& kernels_avx_vnni() {
  static const Kernels k{Isa::AvxVnni, kRows, kCols, stream_rows, tile<Vnni, false>, tile<Vnni, true>};
  return k;
}

}  // namespace torsh::cpu::quant

#pragma GCC pop_options
#else  // no x86: isa_usable(AvxVnni) is false and these kernels never run.
namespace torsh::cpu::quant {
const Kernels& kernels_avx_vnni() { return kernels_generic(); }
}  // namespace torsh::cpu::quant
#endif
