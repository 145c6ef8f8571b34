// AVX-512 VNNI tiles: two blocks (64 levels) per zmm, one vpdpbusd per block
// pair of a weight row and an activation row, started from the activations'
// correction lanes (qmatmul_kernels.hpp). Each weight block pair is unpacked
// once and used against up to four activation rows, whose levels stay in L1.
//
// Lanes 0-7 of a product hold block b, lanes 8-15 block b + 1, so a block's
// scale d_w * d_a is spread over its eight lanes and the block sums are
// scaled and accumulated in f32 lanes; one horizontal sum per output at the end.
// Tiles read the blocks as they lie (decode: each weight byte is read once,
// prefetched two tiles ahead), or rows the driver had packed first (prefill:
// levels unpacked and scales converted once, then read by every activation row).
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "../../../core/quant_k.hpp"
#include "qmatmul_kernels.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
// Everything below is AVX-512 code: the driver checks isa_usable() first.
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni,f16c,fma")
// GCC 12's AVX-512 intrinsics pass an _mm512_undefined_* operand that its own
// -Wmaybe-uninitialized / -Wuninitialized then report once they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#define TORSH_INLINE __attribute__((always_inline)) inline

namespace torsh::cpu::quant {
namespace {

constexpr int kRows = 4, kCols = 4;
constexpr std::int64_t kBlock = kQuantBlock;

// [lo x 8, hi x 8] from the first two floats of v.
TORSH_INLINE __m512 spread(__m128 v) {
  const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(v));
}

// Two consecutive f32 values (the second only for a pair) in lanes 0 and 1.
template <bool Pair>
TORSH_INLINE __m128 load_floats(const float* p) {
  return Pair ? _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))) : _mm_load_ss(p);
}

// The same spread over their blocks' lanes.
template <bool Pair>
TORSH_INLINE __m512 spread_floats(const float* p) {
  return spread(load_floats<Pair>(p));
}

TORSH_INLINE float hsum(__m512 v) {
  v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
  __m128 x = _mm512_castps512_ps128(v);
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
}

// Where a format's scales land in the lanes of weight_pair's `f`.
template <QuantFormat F>
struct ScaleLanes {
  static constexpr int bb = static_cast<int>(quant_block_bytes(F));
  // Q4: the pair's first 16 halves converted as they lie, so d of block b + 1
  // sits at its byte offset / 2 (and Q4_1's / Q5_1's m one lane later); Q8_0: lanes 0, 1.
  static constexpr int d1 = F == QuantFormat::Q8_0 ? 1 : bb / 2;
  static constexpr int m0 = 1, m1 = d1 + 1;  // Q4_1, Q5_1
};

// A Q5 block's u32 of 5th bits.
TORSH_INLINE std::uint32_t qh_of(const unsigned char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// IQ4_NL / IQ4_XS, Int8 activations: nibbles 0..15 (bytes) to the unsigned
// levels kIq4Levels[q] + 128 (weight_offset 128: the correction lanes take the 128 off).
TORSH_INLINE __m512i iq4_levels8(__m512i nibbles) {
  const __m512i table = _mm512_xor_si512(
      _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Levels))), _mm512_set1_epi8(-128));
  return _mm512_shuffle_epi8(table, nibbles);
}

// Weight blocks b and b + 1 (the second only for a pair; for a single block
// the upper half of u is unused, the activations there being zero): the
// unsigned levels in element order, and `f` with the blocks' scales in the
// lanes ScaleLanes names (other lanes: whatever the bytes say). A pair of Q4
// blocks (36 or 40 bytes) is one masked load; a word permute places the
// nibble bytes, and the scales are converted where they lie.
template <QuantFormat F, bool Pair>
TORSH_INLINE void weight_pair(const unsigned char* b0, __m512i& u, __m512& f) {
  constexpr int bb = ScaleLanes<F>::bb;
  if constexpr (F == QuantFormat::Q8_0) {
    const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b0 + 2));
    const __m256i x1 = Pair ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b0 + bb + 2)) : x0;
    u = _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(x0), x1, 1), _mm512_set1_epi8(-128));
    std::uint16_t h0, h1 = 0;
    std::memcpy(&h0, b0, 2);
    if (Pair) std::memcpy(&h1, b0 + bb, 2);
    f = _mm512_castps128_ps512(_mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(h0 | (std::uint32_t{h1} << 16)))));
  } else {
    constexpr __mmask64 mask = (1ull << (Pair ? 2 * bb : bb)) - 1;
    const __m512i raw = _mm512_maskz_loadu_epi8(mask, b0);
    // Nibble bytes: element j low, j + 16 high; words 8-15 and 24-31 take the high nibbles.
    constexpr short q0 = quant_nibbles_at(F) / 2, q1 = bb / 2 + q0;
    const __m512i idx = _mm512_set_epi16(q1 + 7, q1 + 6, q1 + 5, q1 + 4, q1 + 3, q1 + 2, q1 + 1, q1,  //
                                         q1 + 7, q1 + 6, q1 + 5, q1 + 4, q1 + 3, q1 + 2, q1 + 1, q1,  //
                                         q0 + 7, q0 + 6, q0 + 5, q0 + 4, q0 + 3, q0 + 2, q0 + 1, q0,  //
                                         q0 + 7, q0 + 6, q0 + 5, q0 + 4, q0 + 3, q0 + 2, q0 + 1, q0);
    __m512i z = _mm512_permutexvar_epi16(idx, raw);
    z = _mm512_mask_srli_epi16(z, 0xFF00FF00u, z, 4);
    u = _mm512_and_si512(z, _mm512_set1_epi8(0x0F));
    if constexpr (F == QuantFormat::IQ4_NL) u = iq4_levels8(u);
    if constexpr (quant_has_high_bits(F)) {  // bit e of a block's qh: 16 on its element e
      const __mmask64 high = qh_of(b0 + quant_nibbles_at(F) - 4) |
                             (Pair ? std::uint64_t{qh_of(b0 + bb + quant_nibbles_at(F) - 4)} << 32 : 0);
      u = _mm512_mask_add_epi8(u, high, u, _mm512_set1_epi8(0x10));
    }
    f = _mm512_cvtph_ps(_mm512_castsi512_si256(raw));
  }
}

// IQ4_NL / IQ4_XS: 32 nibble bytes (two blocks' 16, each laid out as Q4_0's)
// to their signed levels kIq4Levels[q] as int16 in the pair layout: lo the
// low nibbles, hi the high. Looked up on bytes (an in-lane vpshufb per half)
// and widened after, one cross-lane step per vector.
TORSH_INLINE void iq4_levels16(__m256i y, __m512i& lo, __m512i& hi) {
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Levels)));
  const __m256i nib = _mm256_set1_epi8(0x0F);
  lo = _mm512_cvtepi8_epi16(_mm256_shuffle_epi8(table, _mm256_and_si256(y, nib)));
  hi = _mm512_cvtepi8_epi16(_mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(y, 4), nib)));
}

// Int16 activations: weight blocks b and b + 1 (the second only for a pair)
// as signed int16 levels in the activations' pair layout (act16_block): lo =
// [b 0-15, b+1 0-15], hi = [b 16-31, b+1 16-31]; `f` as weight_pair's. Two
// vpdpwssd then leave block b's sum in lanes 0-7 and b + 1's in 8-15, the
// lanes the int8 step scales, so the f32 work per block pair is the same.
template <QuantFormat F, bool Pair>
TORSH_INLINE void weight_pair16(const unsigned char* b0, __m512i& lo, __m512i& hi, __m512& f) {
  constexpr int bb = ScaleLanes<F>::bb;
  if constexpr (F == QuantFormat::Q8_0) {
    auto at = [](const unsigned char* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
    const __m128i zero = _mm_setzero_si128();
    lo = _mm512_cvtepi8_epi16(_mm256_set_m128i(Pair ? at(b0 + bb + 2) : zero, at(b0 + 2)));
    hi = _mm512_cvtepi8_epi16(_mm256_set_m128i(Pair ? at(b0 + bb + 18) : zero, at(b0 + 18)));
    std::uint16_t h0, h1 = 0;
    std::memcpy(&h0, b0, 2);
    if (Pair) std::memcpy(&h1, b0 + bb, 2);
    f = _mm512_castps128_ps512(_mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(h0 | (std::uint32_t{h1} << 16)))));
  } else {
    // Each nibble byte widened to a word: its low nibble is element e, its
    // high nibble element e + 16, so the word's low and high nibbles are lo and hi.
    constexpr int off = quant_nibbles_at(F);
    auto at = [](const unsigned char* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
    const __m256i y = _mm256_set_m128i(Pair ? at(b0 + bb + off) : _mm_setzero_si128(), at(b0 + off));
    if constexpr (F == QuantFormat::IQ4_NL) {  // a missing block's levels (kIq4Levels[0]) meet zero activations
      iq4_levels16(y, lo, hi);
    } else {
      const __m512i w = _mm512_cvtepu8_epi16(y);
      lo = _mm512_and_si512(w, _mm512_set1_epi16(0x0F));
      hi = _mm512_srli_epi16(w, 4);
    }
    if constexpr (quant_has_high_bits(F)) {  // qh bits 0-15 go to lo's elements, 16-31 to hi's
      const std::uint32_t h0 = qh_of(b0 + off - 4), h1 = Pair ? qh_of(b0 + bb + off - 4) : 0;
      const __m512i sixteen = _mm512_set1_epi16(16);
      lo = _mm512_mask_add_epi16(lo, __mmask32((h0 & 0xFFFFu) | (h1 << 16)), lo, sixteen);
      hi = _mm512_mask_add_epi16(hi, __mmask32((h0 >> 16) | (h1 & 0xFFFF0000u)), hi, sixteen);
    }
    if constexpr (weight_offset(F) != 0 &&
                  F != QuantFormat::IQ4_NL) {  // a missing block's -8s (-16s) meet zero activations
      lo = _mm512_sub_epi16(lo, _mm512_set1_epi16(weight_offset(F)));
      hi = _mm512_sub_epi16(hi, _mm512_set1_epi16(weight_offset(F)));
    }
    // The scales, converted where they lie (ScaleLanes).
    const __m256i raw = _mm256_maskz_loadu_epi16(Pair ? __mmask16(0xFFFF) : __mmask16((1u << (bb / 2)) - 1), b0);
    f = _mm512_cvtph_ps(raw);
  }
}

// [f[lo] x 8, f[hi] x 8].
TORSH_INLINE __m512 spread_lanes(__m512 f, int lo, int hi) {
  const __m512i idx = _mm512_set_epi32(hi, hi, hi, hi, hi, hi, hi, hi, lo, lo, lo, lo, lo, lo, lo, lo);
  return _mm512_permutexvar_ps(idx, f);
}

// Weight rows packed once per chunk when many activation rows will read them
// (prefill): per block pair the 64 unsigned levels (a single last block's
// upper half zero), then the rows' d_w as f32 and, for Q4_1 / Q5_1, m_w as f32 (a
// missing last block's 0). The tiles then load levels and scales as they
// are, and the minimum's m_w s_a becomes one dot product per output at the end.
// With Int16 activations (Wide) the levels of a pair are its two int16
// vectors lo and hi (weight_pair16), 128 bytes.
template <QuantFormat F, bool Wide = false>
struct PackedRow {
  static constexpr std::int64_t kLevelBytes = Wide ? 128 : 64;  // per block pair
  static std::int64_t pairs(std::int64_t nb) { return (nb + 1) / 2; }
  static std::size_t bytes(std::int64_t nb) {
    const std::size_t scales = (quant_has_min(F) ? 2 : 1) * 2 * pairs(nb) * sizeof(float);
    return (static_cast<std::size_t>(pairs(nb) * kLevelBytes) + scales + 63) / 64 * 64;
  }
  template <class Byte>  // unsigned char or const unsigned char
  static Byte* levels(Byte* row, std::int64_t pair) {
    return row + pair * kLevelBytes;
  }
  template <class Byte>
  static auto* d(Byte* row, std::int64_t nb) {
    using Float = std::conditional_t<std::is_const_v<Byte>, const float, float>;
    return reinterpret_cast<Float*>(row + pairs(nb) * kLevelBytes);
  }
  template <class Byte>
  static auto* m(Byte* row, std::int64_t nb) {
    return d(row, nb) + 2 * pairs(nb);
  }
};

template <QuantFormat F, bool Wide>
void pack_rows(const unsigned char* w, std::size_t w_stride, std::int64_t rows, std::int64_t nb, unsigned char* dst) {
  using L = ScaleLanes<F>;
  using P = PackedRow<F, Wide>;
  const std::size_t stride = P::bytes(nb);
  // [d0, d1, m0, m1] from weight_pair's f.
  const __m512i pick = _mm512_setr_epi32(0, L::d1, L::m0, L::m1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const unsigned char* src = w + r * w_stride;
    unsigned char* row = dst + r * stride;
    float* d = P::d(row, nb);
    float* m = P::m(row, nb);
    for (std::int64_t p = 0; p < P::pairs(nb); ++p) {
      __m512 f;
      const bool pair = 2 * p + 1 < nb;
      if constexpr (Wide) {  // a missing block's levels meet zero activations
        __m512i lo, hi;
        if (pair)
          weight_pair16<F, true>(src + 2 * p * L::bb, lo, hi, f);
        else
          weight_pair16<F, false>(src + 2 * p * L::bb, lo, hi, f);
        _mm512_store_si512(P::levels(row, p), lo);
        _mm512_store_si512(P::levels(row, p) + 64, hi);
      } else {
        __m512i u;
        if (pair) {
          weight_pair<F, true>(src + 2 * p * L::bb, u, f);
        } else {
          weight_pair<F, false>(src + 2 * p * L::bb, u, f);
          u = _mm512_maskz_mov_epi8(0xFFFFFFFFull, u);
        }
        _mm512_store_si512(P::levels(row, p), u);
      }
      __m128i sc = _mm_castps_si128(_mm512_castps512_ps128(_mm512_permutexvar_ps(pick, f)));
      if (!pair) sc = _mm_and_si128(sc, _mm_setr_epi32(-1, 0, -1, 0));  // the missing block's scales: 0
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d + 2 * p), sc);
      if constexpr (quant_has_min(F)) _mm_storel_epi64(reinterpret_cast<__m128i*>(m + 2 * p), _mm_srli_si128(sc, 8));
    }
  }
}

// Activation block blk's (and blk + 1's, for a pair) d spread over the
// blocks' lanes; WithS (Q4_1 / Q5_1 read as they lie): s placed where the weights'
// f holds m, for one masked FMA of m_w s_a.
template <QuantFormat F, bool Pair, bool WithS>
TORSH_INLINE void act_scales(const ActRows& a, std::int64_t blk, __m512& da, __m512& sa) {
  da = spread_floats<Pair>(a.d + blk);
  if constexpr (WithS) {
    const __m128 s2 = load_floats<Pair>(a.s + blk);
    const __m512i idx = _mm512_mask_set1_epi32(_mm512_setzero_si512(), __mmask16(1u << ScaleLanes<F>::m1), 1);
    sa = _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(s2));
  }
}

// acc[i][j] += the block pair (or single block) at b of weight row i and activation row j.
template <QuantFormat F, int R, int C, bool Pair, bool Packed>
TORSH_INLINE void step(const Tile& t, std::int64_t b, __m512 (&acc)[R][C]) {
  using L = ScaleLanes<F>;
  const ActRows& a = *t.act;
  __m512 da[C], sa[C];
  const std::int8_t* q[C];
  const std::int32_t* corr[C];
#pragma GCC unroll 4
  for (int j = 0; j < C; ++j) {
    const std::int64_t blk = (t.a0 + j) * a.nb + b;
    act_scales<F, Pair, quant_has_min(F) && !Packed>(a, blk, da[j], sa[j]);
    q[j] = a.q + blk * kBlock;
    corr[j] = a.corr + blk * 8;
  }
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i) {
    __m512i u;
    __m512 f, dw;
    if constexpr (Packed) {
      const unsigned char* row = t.w + i * t.w_stride;
      u = _mm512_load_si512(PackedRow<F>::levels(row, b / 2));
      dw = spread_floats<true>(PackedRow<F>::d(row, a.nb) + b);  // a missing last block's d is 0
    } else {
      const unsigned char* blocks = t.w + i * t.w_stride + b * L::bb;
      // Later tiles' rows continue this tile's (rows are contiguous): fetch the
      // same place two tiles on, so DRAM is read ahead of the hardware
      // prefetcher, which follows R interleaved streams too late
      // (src/backends/cpu/README.md, quant).
      _mm_prefetch(reinterpret_cast<const char*>(blocks + 2 * R * t.w_stride), _MM_HINT_T0);
      weight_pair<F, Pair>(blocks, u, f);
      dw = spread_lanes(f, 0, L::d1);
    }
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) {
      const __m512i x = Pair ? _mm512_loadu_si512(q[j]) : _mm512_maskz_loadu_epi8(0xFFFFFFFFull, q[j]);
      __m512i c = _mm512_setzero_si512();
      if constexpr (!quant_has_min(F))
        c = Pair ? _mm512_loadu_si512(corr[j]) : _mm512_maskz_loadu_epi32(0x00FF, corr[j]);
      const __m512i dot = _mm512_dpbusd_epi32(c, u, x);
      acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(dw, da[j]), acc[i][j]);
      // The other lanes of f are nibble bytes read as f16 (maybe NaN): masked off.
      if constexpr (quant_has_min(F) && !Packed)
        acc[i][j] = _mm512_mask3_fmadd_ps(f, sa[j], acc[i][j], __mmask16((1u << L::m0) | (Pair ? 1u << L::m1 : 0u)));
    }
  }
}

// step's Int16 counterpart.
template <QuantFormat F, int R, int C, bool Pair, bool Packed>
TORSH_INLINE void step16(const Tile& t, std::int64_t b, __m512 (&acc)[R][C]) {
  using L = ScaleLanes<F>;
  const ActRows& a = *t.act;
  __m512 da[C], sa[C];
  const std::int16_t* q[C];
#pragma GCC unroll 4
  for (int j = 0; j < C; ++j) {
    const std::int64_t blk = (t.a0 + j) * a.nb + b;
    act_scales<F, Pair, quant_has_min(F) && !Packed>(a, blk, da[j], sa[j]);
    q[j] = act16_block(a, t.a0 + j, b);
  }
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i) {
    __m512i lo, hi;
    __m512 f, dw;
    if constexpr (Packed) {
      const unsigned char* row = t.w + i * t.w_stride;
      lo = _mm512_load_si512(PackedRow<F, true>::levels(row, b / 2));
      hi = _mm512_load_si512(PackedRow<F, true>::levels(row, b / 2) + 64);
      dw = spread_floats<true>(PackedRow<F, true>::d(row, a.nb) + b);  // a missing last block's d is 0
    } else {
      const unsigned char* blocks = t.w + i * t.w_stride + b * L::bb;
      _mm_prefetch(reinterpret_cast<const char*>(blocks + 2 * R * t.w_stride), _MM_HINT_T0);  // as in step
      weight_pair16<F, Pair>(blocks, lo, hi, f);
      dw = spread_lanes(f, 0, L::d1);
    }
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) {
      __m512i dot = _mm512_dpwssd_epi32(_mm512_setzero_si512(), lo, _mm512_loadu_si512(q[j]));
      dot = _mm512_dpwssd_epi32(dot, hi, _mm512_loadu_si512(q[j] + 32));
      acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(dw, da[j]), acc[i][j]);
      if constexpr (quant_has_min(F) && !Packed)
        acc[i][j] = _mm512_mask3_fmadd_ps(f, sa[j], acc[i][j], __mmask16((1u << L::m0) | (Pair ? 1u << L::m1 : 0u)));
    }
  }
}

// The sums of 16 vectors as four quarters: quarter r holds the sums of v[r],
// v[4 + r], v[8 + r], v[12 + r]. A tree of 128-bit,
// 64-bit and 32-bit shuffles: 45 operations where 16 separate horizontal sums
// take 128.
TORSH_INLINE __m512 sum16(const __m512 (&v)[16]) {
  __m512 h[8], q[4], e[2];
  for (int p = 0; p < 8; ++p)  // halves: v[2p] in lanes 0-7, v[2p + 1] in 8-15
    h[p] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * p], v[2 * p + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_f32x4(v[2 * p], v[2 * p + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  for (int p = 0; p < 4; ++p)  // quarter r: 4 partial sums of v[4p + r]
    q[p] = _mm512_add_ps(_mm512_shuffle_f32x4(h[2 * p], h[2 * p + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(h[2 * p], h[2 * p + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  for (int p = 0; p < 2; ++p)  // quarter r: (v[8p + r], v[8p + 4 + r]) twice, 2 partials each
    e[p] = _mm512_add_ps(_mm512_unpacklo_ps(q[2 * p], q[2 * p + 1]), _mm512_unpackhi_ps(q[2 * p], q[2 * p + 1]));
  // quarter r: v[r], v[4 + r], v[8 + r], v[12 + r]
  const __m512d e0 = _mm512_castps_pd(e[0]), e1 = _mm512_castps_pd(e[1]);
  return _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(e0, e1)), _mm512_castpd_ps(_mm512_unpackhi_pd(e0, e1)));
}

// Each accumulator's horizontal sum to its output.
template <int R, int C>
TORSH_INLINE void store_tile(const Tile& t, const __m512 (&acc)[R][C]) {
  if constexpr (R == 4 && C == 4) {
    __m512 v[16];
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) v[4 * i + j] = acc[i][j];
    // Quarter j: outputs i = 0..3 of activation row j, consecutive in out.
    const __m512 sums = sum16(v);
    _mm_storeu_ps(t.out + t.a0 * t.ldo, _mm512_castps512_ps128(sums));
    _mm_storeu_ps(t.out + (t.a0 + 1) * t.ldo, _mm512_extractf32x4_ps(sums, 1));
    _mm_storeu_ps(t.out + (t.a0 + 2) * t.ldo, _mm512_extractf32x4_ps(sums, 2));
    _mm_storeu_ps(t.out + (t.a0 + 3) * t.ldo, _mm512_extractf32x4_ps(sums, 3));
  } else {
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < C; ++j) t.out[(t.a0 + j) * t.ldo + i] = hsum(acc[i][j]);
  }
}

// Wide: Int16 activations; else Int8. Packed: rows as pack_rows<F, Wide> wrote them.
template <QuantFormat F, int R, int C, bool Packed, bool Wide>
void tile_rc(const Tile& t) {
  __m512 acc[R][C];
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) acc[i][j] = _mm512_setzero_ps();
  const std::int64_t nb = t.act->nb;
  if constexpr (Wide) {
    std::int64_t b = 0;
    for (; b + 2 <= nb; b += 2) step16<F, R, C, true, Packed>(t, b, acc);
    if (b < nb) step16<F, R, C, false, Packed>(t, b, acc);
  } else {
    std::int64_t b = 0;
    for (; b + 2 <= nb; b += 2) step<F, R, C, true, Packed>(t, b, acc);
    if (b < nb) step<F, R, C, false, Packed>(t, b, acc);
  }
  if constexpr (quant_has_min(F) && Packed) {
    // sum over blocks of m_w s_a, 16 blocks at a time.
    for (std::int64_t b0 = 0; b0 < nb; b0 += 16) {
      const __mmask16 k = nb - b0 >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (nb - b0)) - 1);
#pragma GCC unroll 4
      for (int i = 0; i < R; ++i) {
        const __m512 mw = _mm512_maskz_loadu_ps(k, PackedRow<F, Wide>::m(t.w + i * t.w_stride, nb) + b0);
#pragma GCC unroll 4
        for (int j = 0; j < C; ++j)
          acc[i][j] = _mm512_fmadd_ps(mw, _mm512_maskz_loadu_ps(k, t.act->s + (t.a0 + j) * nb + b0), acc[i][j]);
      }
    }
  }
  store_tile<R, C>(t, acc);
}

template <QuantFormat F, int R, bool Packed, bool Wide>
void tile_r(const Tile& t) {
  switch (t.cols) {
    case 1: return tile_rc<F, R, 1, Packed, Wide>(t);
    case 2: return tile_rc<F, R, 2, Packed, Wide>(t);
    case 3: return tile_rc<F, R, 3, Packed, Wide>(t);
    default: return tile_rc<F, R, 4, Packed, Wide>(t);
  }
}

template <QuantFormat F, bool Packed, bool Wide>
void tile_f(const Tile& t) {
  switch (t.rows) {
    case 1: return tile_r<F, 1, Packed, Wide>(t);
    case 2: return tile_r<F, 2, Packed, Wide>(t);
    case 3: return tile_r<F, 3, Packed, Wide>(t);
    default: return tile_r<F, 4, Packed, Wide>(t);
  }
}

#include "qmatmul_avx512_kquant.hpp"

template <bool Packed, bool Wide = false>
void tile(const Tile& t) {
  switch (t.format) {
    case QuantFormat::Q4_0: return tile_f<QuantFormat::Q4_0, Packed, Wide>(t);
    case QuantFormat::Q4_1: return tile_f<QuantFormat::Q4_1, Packed, Wide>(t);
    case QuantFormat::Q8_0: return tile_f<QuantFormat::Q8_0, Packed, Wide>(t);
    case QuantFormat::Q5_0: return tile_f<QuantFormat::Q5_0, Packed, Wide>(t);
    case QuantFormat::Q5_1: return tile_f<QuantFormat::Q5_1, Packed, Wide>(t);
    case QuantFormat::IQ4_NL: return tile_f<QuantFormat::IQ4_NL, Packed, Wide>(t);
    case QuantFormat::Q4_K:
    case QuantFormat::Q5_K:
    case QuantFormat::Q6_K:
    case QuantFormat::IQ4_XS:
    case QuantFormat::Q2_K:
    case QuantFormat::Q3_K:    // Q2_K, Q3_K: Int16 activations only (quant_int16_only)
      if constexpr (Packed) {  // pack_k_rows(8) wrote Q4_1's or Q8_0's packed rows (packed_as)
        if (!quant_has_min(t.format)) return tile_f<QuantFormat::Q8_0, true, Wide>(t);
        return tile_f<QuantFormat::Q4_1, true, Wide>(t);
      }
      return tile_k<Wide>(t);
  }
}

template <bool Wide>
std::size_t packed_row_bytes(QuantFormat f, std::int64_t nb) {
  switch (f) {
    case QuantFormat::Q4_0: return PackedRow<QuantFormat::Q4_0, Wide>::bytes(nb);
    case QuantFormat::Q4_1: return PackedRow<QuantFormat::Q4_1, Wide>::bytes(nb);
    case QuantFormat::Q8_0: return PackedRow<QuantFormat::Q8_0, Wide>::bytes(nb);
    case QuantFormat::Q5_0: return PackedRow<QuantFormat::Q5_0, Wide>::bytes(nb);
    case QuantFormat::Q5_1: return PackedRow<QuantFormat::Q5_1, Wide>::bytes(nb);
    case QuantFormat::Q4_K:
    case QuantFormat::Q5_K: return PackedRow<QuantFormat::Q4_1, Wide>::bytes(nb);
    case QuantFormat::IQ4_XS: return PackedRow<QuantFormat::Q8_0, Wide>::bytes(nb);
    case QuantFormat::Q6_K:  // Int8: not packed (qmatmul_run.cpp)
    case QuantFormat::Q3_K: return PackedRow<QuantFormat::Q8_0, true>::bytes(nb);
    case QuantFormat::Q2_K: break;  // not packed (qmatmul_run.cpp)
    case QuantFormat::IQ4_NL: return PackedRow<QuantFormat::IQ4_NL, Wide>::bytes(nb);
  }
  return 0;
}

template <bool Wide>
void pack(QuantFormat f, const unsigned char* w, std::size_t w_stride, std::int64_t rows, std::int64_t nb,
          unsigned char* dst) {
  switch (f) {
    case QuantFormat::Q4_0: return pack_rows<QuantFormat::Q4_0, Wide>(w, w_stride, rows, nb, dst);
    case QuantFormat::Q4_1: return pack_rows<QuantFormat::Q4_1, Wide>(w, w_stride, rows, nb, dst);
    case QuantFormat::Q8_0: return pack_rows<QuantFormat::Q8_0, Wide>(w, w_stride, rows, nb, dst);
    case QuantFormat::Q5_0: return pack_rows<QuantFormat::Q5_0, Wide>(w, w_stride, rows, nb, dst);
    case QuantFormat::Q5_1: return pack_rows<QuantFormat::Q5_1, Wide>(w, w_stride, rows, nb, dst);
    case QuantFormat::Q4_K:
      if constexpr (Wide) return pack_k_rows<QuantFormat::Q4_K>(w, w_stride, rows, nb, dst);
      return pack_k_rows8<QuantFormat::Q4_K>(w, w_stride, rows, nb, dst);
    case QuantFormat::Q5_K:
      if constexpr (Wide) return pack_k_rows<QuantFormat::Q5_K>(w, w_stride, rows, nb, dst);
      return pack_k_rows8<QuantFormat::Q5_K>(w, w_stride, rows, nb, dst);
    case QuantFormat::Q6_K:  // Int8: not packed, its per-16 scales stay in the blocks (qmatmul_run.cpp)
      if constexpr (Wide) return pack_k_rows<QuantFormat::Q6_K>(w, w_stride, rows, nb, dst);
      break;
    case QuantFormat::IQ4_XS:
      if constexpr (Wide) return pack_k_rows<QuantFormat::IQ4_XS>(w, w_stride, rows, nb, dst);
      return pack_k_rows8<QuantFormat::IQ4_XS>(w, w_stride, rows, nb, dst);
    case QuantFormat::Q3_K: return pack_k_rows<QuantFormat::Q3_K>(w, w_stride, rows, nb, dst);
    case QuantFormat::Q2_K: break;  // not packed (qmatmul_run.cpp)
    case QuantFormat::IQ4_NL: return pack_rows<QuantFormat::IQ4_NL, Wide>(w, w_stride, rows, nb, dst);
  }
}

// Each format's unpacking at 512 bits outruns memory up to two activation rows.
int stream_rows(QuantFormat, std::int64_t m) { return m <= 2 ? 1 : kRows; }

}  // namespace

const Kernels& kernels_avx512_vnni() {
  static const Kernels k{Isa::Avx512Vnni,
                         kRows,
                         kCols,
                         stream_rows,
                         tile<false>,
                         tile<false, true>,
                         {packed_row_bytes<false>, pack<false>, tile<true>},
                         {packed_row_bytes<true>, pack<true>, tile<true, true>}};
  return k;
}

}  // namespace torsh::cpu::quant

#pragma GCC pop_options
#else  // no x86: isa_usable(Avx512Vnni) is false and these kernels never run.
namespace torsh::cpu::quant {
const Kernels& kernels_avx512_vnni() { return kernels_generic(); }
}  // namespace torsh::cpu::quant
#endif
