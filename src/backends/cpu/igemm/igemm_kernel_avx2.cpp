// 256-bit tiles, 6 rows x 16 columns (12 ymm accumulators):
//   AVX-VNNI: vpdpbusd on U8x4 lanes, four k per instruction;
//   AVX2: no u8 x s8 instruction that cannot saturate (vpmaddubsw sums two
//   products into int16), so both operands are packed widened to int16
//   (S16x2) and vpmaddwd sums pairs into int32 exactly: two k per lane;
//   AVX2 with vpmaddubsw on U8x4 lanes, four k per lane (twice the products
//   per instruction and half the panel bytes), for operands whose values
//   cannot take a pair of products past int16 (integer_matmul checks).
#include <immintrin.h>

#include <cstdint>

#include "igemm.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#define TORSH_INLINE __attribute__((always_inline)) inline

#pragma GCC push_options
#pragma GCC target("avx2")
namespace torsh::cpu::igemm {
namespace {
// What both 256-bit tiles share; they differ in the multiply-add (dot).
struct Ymm {
  using vec = __m256i;
  static constexpr int kLanes = 8;
  static TORSH_INLINE vec zero() { return _mm256_setzero_si256(); }
  static TORSH_INLINE vec load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  static TORSH_INLINE vec bcast(const void* p) { return _mm256_set1_epi32(*static_cast<const int*>(p)); }
  static TORSH_INLINE vec add(vec x, vec y) { return _mm256_add_epi32(x, y); }
  static TORSH_INLINE void store(std::int32_t* p, vec v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
};
}  // namespace

namespace avx2 {
namespace {

struct Avx2Madd : Ymm {
  static TORSH_INLINE vec dot(vec acc, vec a, vec b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
};

// vpmaddubsw: u8 x s8 products summed in pairs into int16 (saturating, so
// only for operands that cannot reach it); vpmaddwd by ones sums the two
// pairs of each lane into int32.
struct Avx2Maddubs : Ymm {
  static TORSH_INLINE vec dot(vec acc, vec a, vec b) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1)));
  }
};

#include "igemm_body.hpp"

void tile_avx2(const unsigned char* a, const unsigned char* b, std::int64_t groups, const TileOut& c) {
  tile_body<Avx2Madd, 6, 2>(a, b, groups, c);
}

void tile_avx2_maddubs(const unsigned char* a, const unsigned char* b, std::int64_t groups, const TileOut& c) {
  tile_body<Avx2Maddubs, 5, 2>(a, b, groups, c);
}

}  // namespace
}  // namespace avx2

const Kernel& kernel_avx2() {
  static const Kernel k{"avx2-6x16", Lane::S16x2, 6, 16, avx2::tile_avx2};
  return k;
}

const Kernel& kernel_avx2_maddubs() {
  static const Kernel k{"avx2-maddubs-5x16", Lane::U8x4, 5, 16, avx2::tile_avx2_maddubs};
  return k;
}

}  // namespace torsh::cpu::igemm
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,avxvnni")
namespace torsh::cpu::igemm {
namespace avx_vnni {
namespace {

struct AvxVnni : Ymm {
  static TORSH_INLINE vec dot(vec acc, vec a, vec b) { return _mm256_dpbusd_avx_epi32(acc, a, b); }
};

#include "igemm_body.hpp"

void tile_vnni(const unsigned char* a, const unsigned char* b, std::int64_t groups, const TileOut& c) {
  tile_body<AvxVnni, 6, 2>(a, b, groups, c);
}

}  // namespace
}  // namespace avx_vnni

const Kernel& kernel_avx_vnni() {
  static const Kernel k{"avx_vnni-6x16", Lane::U8x4, 6, 16, avx_vnni::tile_vnni};
  return k;
}

}  // namespace torsh::cpu::igemm
#pragma GCC pop_options

#else  // no x86: never chosen.
namespace torsh::cpu::igemm {
const Kernel& kernel_avx2() { return kernel_generic(); }
const Kernel& kernel_avx2_maddubs() { return kernel_generic(); }
const Kernel& kernel_avx_vnni() { return kernel_generic(); }
}  // namespace torsh::cpu::igemm
#endif
