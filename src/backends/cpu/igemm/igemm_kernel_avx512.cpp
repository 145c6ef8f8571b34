// AVX-512 VNNI tile: 14 rows x 32 columns (28 zmm accumulators), one vpdpbusd
// per row and vector for four k: u8 x s8 products summed into int32 without
// saturation.
#include <immintrin.h>

#include <cstdint>

#include "igemm.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
// Everything below is AVX-512 VNNI code: active_kernel() checks the CPU first.
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni")
#define TORSH_INLINE __attribute__((always_inline)) inline

namespace torsh::cpu::igemm {
namespace {

struct V512 {
  using vec = __m512i;
  static constexpr int kLanes = 16;
  static TORSH_INLINE vec zero() { return _mm512_setzero_si512(); }
  static TORSH_INLINE vec load(const void* p) { return _mm512_loadu_si512(p); }
  static TORSH_INLINE vec bcast(const void* p) { return _mm512_set1_epi32(*static_cast<const int*>(p)); }
  static TORSH_INLINE vec dot(vec acc, vec a, vec b) { return _mm512_dpbusd_epi32(acc, a, b); }
  static TORSH_INLINE void store(std::int32_t* p, vec v) { _mm512_storeu_si512(p, v); }
};

#include "igemm_body.hpp"

void tile(const unsigned char* a, const unsigned char* b, std::int64_t groups, std::int32_t* c) {
  tile_body<V512, 14, 2>(a, b, groups, c);
}
void tile8x48(const unsigned char* a, const unsigned char* b, std::int64_t groups, std::int32_t* c) {
  tile_body<V512, 8, 3>(a, b, groups, c);
}
void tile6x64(const unsigned char* a, const unsigned char* b, std::int64_t groups, std::int32_t* c) {
  tile_body<V512, 6, 4>(a, b, groups, c);
}

}  // namespace

const Kernel& kernel_avx512_vnni() {
  static const Kernel k{"avx512_vnni-14x32", Lane::U8x4, 14, 32, tile};
  return k;
}
const Kernel& kernel_avx512_vnni_8x48() {
  static const Kernel k{"avx512_vnni-8x48", Lane::U8x4, 8, 48, tile8x48};
  return k;
}
const Kernel& kernel_avx512_vnni_6x64() {
  static const Kernel k{"avx512_vnni-6x64", Lane::U8x4, 6, 64, tile6x64};
  return k;
}

}  // namespace torsh::cpu::igemm

#pragma GCC pop_options
#else  // no x86: never chosen.
namespace torsh::cpu::igemm {
const Kernel& kernel_avx512_vnni() { return kernel_generic(); }
}  // namespace torsh::cpu::igemm
#endif
