// 256-bit tiles, 6 rows x 16 columns (12 ymm accumulators):
//   AVX-VNNI: vpdpbusd on U8x4 lanes, four k per instruction;
//   AVX2: no u8 x s8 instruction that cannot saturate (vpmaddubsw sums two
//   products into int16), so both operands are packed widened to int16
//   (S16x2) and vpmaddwd sums pairs into int32 exactly: two k per lane;
//   AVX2 with vpmaddubsw on U8x4 lanes, four k per lane (half the panel
//   bytes; with the vpmaddwd that widens its int16 sums, the same products
//   per multiply), for operands whose values cannot take a pair of products
//   past int16 (integer_matmul checks).
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

// The k loops of both 6 x 16 tiles in assembly: with 12 accumulators in 16
// registers GCC kept some accumulators on the stack (a store and a reload
// per group) and copied the rest between registers, and the tile ran at half
// the multiply rate. Here ymm0-11 hold the accumulators (row r in 2r and
// 2r + 1), ymm12-13 b's two vectors (or ones), ymm14 the row's word, ymm15
// a product; the sums leave through memory once per tile.
#define TORSH_MADD_ROW(r, c0, c1)           \
  "vpbroadcastd " #r                        \
  "*4(%[a]), %%ymm14\n\t"                   \
  "vpmaddwd %%ymm12, %%ymm14, %%ymm15\n\t"  \
  "vpaddd %%ymm15, %%ymm" #c0 ", %%ymm" #c0 \
  "\n\t"                                    \
  "vpmaddwd %%ymm13, %%ymm14, %%ymm15\n\t"  \
  "vpaddd %%ymm15, %%ymm" #c1 ", %%ymm" #c1 "\n\t"

// Row r of the vpmaddubsw tile: b's two vectors read from the panel,
// products summed in pairs to int16, then pairs of those to int32 by
// vpmaddwd with ones (ymm12).
#define TORSH_MADDUBS_ROW(r, c0, c1)          \
  "vpbroadcastd " #r                          \
  "*4(%[a]), %%ymm14\n\t"                     \
  "vpmaddubsw (%[b]), %%ymm14, %%ymm15\n\t"   \
  "vpmaddwd %%ymm12, %%ymm15, %%ymm15\n\t"    \
  "vpaddd %%ymm15, %%ymm" #c0 ", %%ymm" #c0   \
  "\n\t"                                      \
  "vpmaddubsw 32(%[b]), %%ymm14, %%ymm15\n\t" \
  "vpmaddwd %%ymm12, %%ymm15, %%ymm15\n\t"    \
  "vpaddd %%ymm15, %%ymm" #c1 ", %%ymm" #c1 "\n\t"

#define TORSH_ZERO_ACC                  \
  "vpxor %%xmm0, %%xmm0, %%xmm0\n\t"    \
  "vpxor %%xmm1, %%xmm1, %%xmm1\n\t"    \
  "vpxor %%xmm2, %%xmm2, %%xmm2\n\t"    \
  "vpxor %%xmm3, %%xmm3, %%xmm3\n\t"    \
  "vpxor %%xmm4, %%xmm4, %%xmm4\n\t"    \
  "vpxor %%xmm5, %%xmm5, %%xmm5\n\t"    \
  "vpxor %%xmm6, %%xmm6, %%xmm6\n\t"    \
  "vpxor %%xmm7, %%xmm7, %%xmm7\n\t"    \
  "vpxor %%xmm8, %%xmm8, %%xmm8\n\t"    \
  "vpxor %%xmm9, %%xmm9, %%xmm9\n\t"    \
  "vpxor %%xmm10, %%xmm10, %%xmm10\n\t" \
  "vpxor %%xmm11, %%xmm11, %%xmm11\n\t"

#define TORSH_SAVE_ACC               \
  "vmovdqa %%ymm0, (%[acc])\n\t"     \
  "vmovdqa %%ymm1, 32(%[acc])\n\t"   \
  "vmovdqa %%ymm2, 64(%[acc])\n\t"   \
  "vmovdqa %%ymm3, 96(%[acc])\n\t"   \
  "vmovdqa %%ymm4, 128(%[acc])\n\t"  \
  "vmovdqa %%ymm5, 160(%[acc])\n\t"  \
  "vmovdqa %%ymm6, 192(%[acc])\n\t"  \
  "vmovdqa %%ymm7, 224(%[acc])\n\t"  \
  "vmovdqa %%ymm8, 256(%[acc])\n\t"  \
  "vmovdqa %%ymm9, 288(%[acc])\n\t"  \
  "vmovdqa %%ymm10, 320(%[acc])\n\t" \
  "vmovdqa %%ymm11, 352(%[acc])\n\t"

#define TORSH_YMM_CLOBBERS                                                                                            \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", \
      "xmm14", "xmm15"

// The stores of tile_body's end from the 6 x 16 sums: plus earlier blocks'
// sums and the column and row terms, when given.
TORSH_INLINE void store_tile(const std::int32_t* acc, const TileOut& out) {
  const __m256i zero = Ymm::zero();
  const __m256i col0 = out.col ? Ymm::load(out.col) : zero, col1 = out.col ? Ymm::load(out.col + 8) : zero;
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r) {
    std::int32_t* const c = out.c + r * out.ldc;
    const __m256i row = out.col ? Ymm::bcast(out.row + r) : zero;
    __m256i s0 = Ymm::add(Ymm::load(acc + 16 * r), Ymm::add(col0, row));
    __m256i s1 = Ymm::add(Ymm::load(acc + 16 * r + 8), Ymm::add(col1, row));
    if (out.acc) {
      const std::int32_t* const before = out.acc + r * out.ld_acc;
      s0 = Ymm::add(s0, Ymm::load(before)), s1 = Ymm::add(s1, Ymm::load(before + 8));
    }
    Ymm::store(c, s0), Ymm::store(c + 8, s1);
  }
}

// A 6 x 16 tile: the accumulators zeroed, `setup` once, `group` per group
// of k (a and b then step to the next group), the sums out through acc.
#define TORSH_AVX2_TILE(name, setup, group)                                                            \
  void name(const unsigned char* a, const unsigned char* b, std::int64_t groups, const TileOut& out) { \
    alignas(32) std::int32_t acc[6 * 16];                                                              \
    asm volatile(TORSH_ZERO_ACC                                                                        \
                 "test %[g], %[g]\n\t"                                                                 \
                 "jle 2f\n\t" setup "1:\n\t" group                                                     \
                 "add $24, %[a]\n\t"                                                                   \
                 "add $64, %[b]\n\t"                                                                   \
                 "dec %[g]\n\t"                                                                        \
                 "jnz 1b\n\t"                                                                          \
                 "2:\n\t" TORSH_SAVE_ACC                                                               \
                 : [a] "+r"(a), [b] "+r"(b), [g] "+r"(groups)                                          \
                 : [acc] "r"(acc)                                                                      \
                 : "cc", "memory", TORSH_YMM_CLOBBERS);                                                \
    store_tile(acc, out);                                                                              \
  }

TORSH_AVX2_TILE(tile_avx2, "",
                "vmovdqu (%[b]), %%ymm12\n\t"
                "vmovdqu 32(%[b]), %%ymm13\n\t" TORSH_MADD_ROW(0, 0, 1) TORSH_MADD_ROW(1, 2, 3) TORSH_MADD_ROW(2, 4, 5)
                    TORSH_MADD_ROW(3, 6, 7) TORSH_MADD_ROW(4, 8, 9) TORSH_MADD_ROW(5, 10, 11))

// ones in ymm12: -1 >> 15 in every int16.
TORSH_AVX2_TILE(tile_avx2_maddubs,
                "vpcmpeqw %%ymm12, %%ymm12, %%ymm12\n\t"
                "vpsrlw $15, %%ymm12, %%ymm12\n\t",
                TORSH_MADDUBS_ROW(0, 0, 1) TORSH_MADDUBS_ROW(1, 2, 3) TORSH_MADDUBS_ROW(2, 4, 5)
                    TORSH_MADDUBS_ROW(3, 6, 7) TORSH_MADDUBS_ROW(4, 8, 9) TORSH_MADDUBS_ROW(5, 10, 11))
#undef TORSH_AVX2_TILE

// QLinearMatMul's requantization of a finished tile (igemm.hpp's Kernel::
// requantize), 8 columns a step: f32 multiply, NaN to 0, clamped to
// +-2^22 (neither for plain products), vcvtps2dq (round half to even),
// plus z, packed to bytes with saturation (to int16, then to u8 or s8:
// exactly the clamp to u8's or s8's range). Compiler-vectorised, the same loop
// takes a sixth of a 1024^3 QLinearMatMul at 256 bits.
void requantize(const std::int32_t* c, int ldc, int rows, int cols, const float* s, std::int32_t z, bool to_u8,
                unsigned char* out, std::int64_t ldo, bool plain) {
  const __m256 fmin = _mm256_set1_ps(-4194304.0f), fmax = _mm256_set1_ps(4194304.0f);
  const __m256i zv = _mm256_set1_epi32(z);
  const __m256i gather = _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0);
  for (int j = 0; j < cols; j += 8) {
    const int w = cols - j < 8 ? cols - j : 8;
    alignas(32) float st[8] = {};
    for (int l = 0; l < w; ++l) st[l] = s[j + l];
    const __m256 sv = _mm256_load_ps(st);
    for (int r = 0; r < rows; ++r) {
      alignas(32) std::int32_t ct[8] = {};
      const std::int32_t* src = c + r * ldc + j;
      if (w < 8) {
        for (int l = 0; l < w; ++l) ct[l] = src[l];
        src = ct;
      }
      __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(Ymm::load(src)), sv);
      if (!plain) {
        x = _mm256_and_ps(x, _mm256_cmp_ps(x, x, _CMP_ORD_Q));
        x = _mm256_min_ps(_mm256_max_ps(x, fmin), fmax);
      }
      const __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(x), zv);
      // int32 -> int16 -> bytes (within each 128-bit half), then the two
      // halves' four bytes side by side.
      const __m256i h = _mm256_packs_epi32(q, q);
      const __m256i b =
          _mm256_permutevar8x32_epi32(to_u8 ? _mm256_packus_epi16(h, h) : _mm256_packs_epi16(h, h), gather);
      unsigned char* const dst = out + r * ldo + j;
      if (w == 8) {
        _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), _mm256_castsi256_si128(b));
      } else {
        alignas(16) unsigned char bt[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(bt), _mm256_castsi256_si128(b));
        for (int l = 0; l < w; ++l) dst[l] = bt[l];
      }
    }
  }
}

#undef TORSH_MADD_ROW
#undef TORSH_MADDUBS_ROW
#undef TORSH_ZERO_ACC
#undef TORSH_SAVE_ACC
#undef TORSH_YMM_CLOBBERS

}  // namespace
}  // namespace avx2

const Kernel& kernel_avx2() {
  static const Kernel k{"avx2-6x16", Lane::S16x2, 6, 16, avx2::tile_avx2, avx2::requantize};
  return k;
}

const Kernel& kernel_avx2_maddubs() {
  static const Kernel k{"avx2-maddubs-6x16", Lane::U8x4, 6, 16, avx2::tile_avx2_maddubs, avx2::requantize};
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
  static const Kernel k{"avx_vnni-6x16", Lane::U8x4, 6, 16, avx_vnni::tile_vnni, avx2::requantize};
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
