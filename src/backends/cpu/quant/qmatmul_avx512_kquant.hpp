#pragma once
// AVX-512 tiles for the super-block formats (the K formats and IQ4_XS; Int16 activations), included by
// qmatmul_avx512.cpp inside its anonymous namespace, after the 32-format
// tiles whose helpers (spread_floats, sum16, PackedRow, tile_f) it uses.
//
// A pair of sub-blocks 2g, 2g + 1 of a super-block is what a pair of 32-format
// blocks is to those tiles: its levels land as [2g 0-15, 2g+1 0-15] and
// [2g 16-31, 2g+1 16-31] (act16_block's layout), two vpdpwssd leave sub-block
// 2g's sum in lanes 0-7 and 2g + 1's in 8-15. The super-block's eight d_w and
// eight m_w are decoded once per weight row into one zmm (k_scales) and each
// pair picks its two. Prompts use the 32-formats' packed tiles: pack_k writes
// a K row as a packed Q4_1 row (levels, f32 d_w, f32 m_w) or, for Q6_K, as a
// packed Q8_0 row (levels with the per-16 scales in them, f32 d).

// [d sc0 .. d sc7, -dmin m0 .. -dmin m7] of a Q4_K / Q5_K super-block, each
// product rounded in f32 as the dequantizer's; Q6_K: d in every lane.
template <QuantFormat F>
TORSH_INLINE __m512 k_scales(const unsigned char* sb) {
  if constexpr (F == QuantFormat::IQ4_XS) {  // [d (ls - 32) x 8 sub-blocks, 0 x 8]
    alignas(64) float v[16] = {};
    std::uint16_t h;
    std::memcpy(&h, sb, 2);
    const float d = _cvtsh_ss(h);
    for (int j = 0; j < 8; ++j) v[j] = d * static_cast<float>(kquant::xs_scale(sb, j));
    return _mm512_load_ps(v);
  } else if constexpr (F == QuantFormat::Q6_K || F == QuantFormat::Q2_K || F == QuantFormat::Q3_K) {
    // d everywhere: the per-16 scales are in the levels (Q2_K's minima: k_mins16).
    constexpr int at = F == QuantFormat::Q6_K ? kquant::kQ6D : F == QuantFormat::Q2_K ? kquant::kQ2D : kquant::kQ3D;
    std::uint16_t h;
    std::memcpy(&h, sb + at, 2);
    return _mm512_set1_ps(_cvtsh_ss(h));
  } else {
    // The twelve scale bytes as three words; byte i of each result word is
    // sub-block i's (0-3) or i + 4's value (quant.hpp's layout).
    std::uint32_t u[3];
    std::memcpy(u, sb + kquant::kScalesAt, 12);
    const std::uint32_t six = 0x3F3F3F3Fu, four = 0x0F0F0F0Fu, two = 0x03030303u;
    const std::uint32_t sc_lo = u[0] & six, m_lo = u[1] & six;
    const std::uint32_t sc_hi = (u[2] & four) | (((u[0] >> 6) & two) << 4);
    const std::uint32_t m_hi = ((u[2] >> 4) & four) | (((u[1] >> 6) & two) << 4);
    const __m128i bytes = _mm_setr_epi32(static_cast<int>(sc_lo), static_cast<int>(sc_hi), static_cast<int>(m_lo),
                                         static_cast<int>(m_hi));
    std::uint16_t h[2];
    std::memcpy(h, sb, 4);
    const __m128 dm = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(h[0] | (std::uint32_t{h[1]} << 16))));
    // [d x 8, -dmin x 8]
    const __m512 mul = _mm512_mask_sub_ps(spread(dm), 0xFF00, _mm512_setzero_ps(), spread(dm));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes)), mul);
  }
}

// Q2_K: the minima -dmin m of the super-block's sixteen 16-element groups.
TORSH_INLINE __m512 k_mins16(const unsigned char* sb) {
  std::uint16_t h;
  std::memcpy(&h, sb + kquant::kQ2D + 2, 2);
  const __m512i m = _mm512_srli_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sb))), 4);
  return _mm512_mul_ps(_mm512_cvtepi32_ps(m), _mm512_set1_ps(-_cvtsh_ss(h)));
}

// The levels of sub-blocks 2g and 2g + 1 of the super-block at sb (signed
// int16; Q6_K with its per-16 scales multiplied in) in the pair layout.
template <QuantFormat F>
TORSH_INLINE void k_pair16(const unsigned char* sb, int g, __m512i& lo, __m512i& hi) {
  auto at = [](const unsigned char* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
  if constexpr (F == QuantFormat::IQ4_XS) {
    // Sub-blocks 2g, 2g + 1: 16 nibble bytes each, laid out as Q4_0's, so the
    // 32 bytes widened are [2g 0-15, 2g+1 0-15] in the low nibbles and the 16-31s in the high.
    iq4_levels16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb + kquant::kXsNibbles + 32 * g)), lo, hi);
  } else if constexpr (F == QuantFormat::Q2_K || F == QuantFormat::Q3_K) {
    // Sub-blocks j = 2g, 2g + 1 of half h = g / 2: bits 2s and 2s + 2 (s = 2 (g % 2))
    // of the same 32 bytes; Q3_K subtracts 4 unless bit j (j + 1) of hmask[l] is set.
    const unsigned char* qs = sb + (F == QuantFormat::Q2_K ? kquant::kQ2Bits : kquant::kQ3Bits) + 32 * (g / 2);
    const int s = 2 * (g % 2);
    const __m512i shift = _mm512_mask_set1_epi16(_mm512_set1_epi16(static_cast<short>(2 * s)), 0xFFFF0000u,
                                                 static_cast<short>(2 * s + 2));
    const __m512i three = _mm512_set1_epi16(3);
    lo = _mm512_and_si512(_mm512_srlv_epi16(_mm512_cvtepu8_epi16(_mm256_set_m128i(at(qs), at(qs))), shift), three);
    hi = _mm512_and_si512(_mm512_srlv_epi16(_mm512_cvtepu8_epi16(_mm256_set_m128i(at(qs + 16), at(qs + 16))), shift),
                          three);
    if constexpr (F == QuantFormat::Q3_K) {
      const __m512i bit = _mm512_mask_set1_epi16(_mm512_set1_epi16(static_cast<short>(2 * g)), 0xFFFF0000u,
                                                 static_cast<short>(2 * g + 1));
      const __m512i one = _mm512_set1_epi16(1), four = _mm512_set1_epi16(4);
      auto minus4 = [&](__m512i v, const unsigned char* hm) {  // - 4 where the bit is clear
        const __m512i h =
            _mm512_and_si512(_mm512_srlv_epi16(_mm512_cvtepu8_epi16(_mm256_set_m128i(at(hm), at(hm))), bit), one);
        return _mm512_sub_epi16(v, _mm512_sub_epi16(four, _mm512_slli_epi16(h, 2)));
      };
      lo = minus4(lo, sb);
      hi = minus4(hi, sb + 16);
    }
    // Per-16 scales sc[4g .. 4g + 3]: lo takes sc[4g] then sc[4g + 2], hi sc[4g + 1] then sc[4g + 3].
    alignas(16) std::int16_t sc[8] = {};
    for (int i = 0; i < 4; ++i) sc[i] = static_cast<std::int16_t>(kquant::scale16(F, sb, 2 * g + i / 2, i % 2));
    const __m512i sc4 = _mm512_castsi128_si512(_mm_load_si128(reinterpret_cast<const __m128i*>(sc)));
    lo = _mm512_mullo_epi16(
        lo, _mm512_permutexvar_epi16(_mm512_mask_set1_epi16(_mm512_setzero_si512(), 0xFFFF0000u, 2), sc4));
    hi = _mm512_mullo_epi16(
        hi, _mm512_permutexvar_epi16(_mm512_mask_set1_epi16(_mm512_set1_epi16(1), 0xFFFF0000u, 3), sc4));
  } else if constexpr (F == QuantFormat::Q6_K) {
    // Sub-blocks j = 2g, 2g + 1 of half h = g / 2: low nibbles (nibble g % 2) at
    // ql[64h + l] and ql[64h + 32 + l], high bits 2s, 2s + 2 (s = 2 (g % 2)) of qh[32h + l].
    const unsigned char* ql = sb + 64 * (g / 2);
    const unsigned char* qh = sb + kquant::kQ6High + 32 * (g / 2);
    const int s = 2 * (g % 2);
    const __m512i nshift = _mm512_set1_epi16(static_cast<short>(4 * (g % 2)));
    // Words: [j l0-15, j+1 l0-15] (lo) and [j l16-31, j+1 l16-31] (hi).
    const __m512i lq = _mm512_cvtepu8_epi16(_mm256_set_m128i(at(ql + 32), at(ql)));
    const __m512i hq = _mm512_cvtepu8_epi16(_mm256_set_m128i(at(ql + 48), at(ql + 16)));
    const __m512i lh = _mm512_cvtepu8_epi16(_mm256_set_m128i(at(qh), at(qh)));
    const __m512i hh = _mm512_cvtepu8_epi16(_mm256_set_m128i(at(qh + 16), at(qh + 16)));
    // qh shift: 2s on the first sixteen words, 2s + 2 on the last sixteen.
    const __m512i qshift = _mm512_mask_set1_epi16(_mm512_set1_epi16(static_cast<short>(2 * s)), 0xFFFF0000u,
                                                  static_cast<short>(2 * s + 2));
    const __m512i nib = _mm512_set1_epi16(0x0F), three = _mm512_set1_epi16(3), c32 = _mm512_set1_epi16(32);
    auto level = [&](__m512i q, __m512i h) {
      const __m512i low = _mm512_and_si512(_mm512_srlv_epi16(q, nshift), nib);
      const __m512i high = _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(h, qshift), three), 4);
      return _mm512_sub_epi16(_mm512_or_si512(low, high), c32);
    };
    // int8 scales sc[4g .. 4g + 3]: lo takes sc[4g] then sc[4g + 2], hi sc[4g + 1] then sc[4g + 3].
    std::int32_t sc4;
    std::memcpy(&sc4, sb + kquant::kQ6Scales + 4 * g, 4);
    const __m512i sc = _mm512_cvtepi8_epi16(_mm256_castsi128_si256(_mm_cvtsi32_si128(sc4)));
    const __m512i lo_sc = _mm512_permutexvar_epi16(_mm512_mask_set1_epi16(_mm512_setzero_si512(), 0xFFFF0000u, 2), sc);
    const __m512i hi_sc = _mm512_permutexvar_epi16(_mm512_mask_set1_epi16(_mm512_set1_epi16(1), 0xFFFF0000u, 3), sc);
    lo = _mm512_mullo_epi16(level(lq, lh), lo_sc);
    hi = _mm512_mullo_epi16(level(hq, hh), hi_sc);
  } else {
    // Nibble byte 32g + l: element l of 2g (low), of 2g + 1 (high). The 32
    // bytes widened once to words: their low nibbles are 2g's elements 0-31,
    // their high nibbles 2g + 1's; 256-bit halves of the two then make the pair layout.
    const unsigned char* qs = sb + (F == QuantFormat::Q4_K ? kquant::kQ4Nibbles : kquant::kQ5Nibbles) + 32 * g;
    const __m512i w = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)));
    const __m512i low = _mm512_and_si512(w, _mm512_set1_epi16(0x0F)), high = _mm512_srli_epi16(w, 4);
    lo = _mm512_shuffle_i64x2(low, high, _MM_SHUFFLE(1, 0, 1, 0));
    hi = _mm512_shuffle_i64x2(low, high, _MM_SHUFFLE(3, 2, 3, 2));
    if constexpr (F == QuantFormat::Q5_K) {  // bit j of qh byte l: 16 on element l of sub-block j
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb + kquant::kQ5High));
      const std::uint32_t b0 = _mm256_test_epi8_mask(qh, _mm256_set1_epi8(static_cast<char>(1 << (2 * g))));
      const std::uint32_t b1 = _mm256_test_epi8_mask(qh, _mm256_set1_epi8(static_cast<char>(2 << (2 * g))));
      const __m512i sixteen = _mm512_set1_epi16(16);
      lo = _mm512_mask_add_epi16(lo, __mmask32((b0 & 0xFFFFu) | (b1 << 16)), lo, sixteen);
      hi = _mm512_mask_add_epi16(hi, __mmask32((b0 >> 16) | (b1 & 0xFFFF0000u)), hi, sixteen);
    }
  }
}

// Int8 activations: the unsigned levels of sub-blocks 2g and 2g + 1 in
// element order (one byte each, as Q4_1's pair in weight_pair). IQ4_XS:
// kIq4Levels[q] + 128 (weight_offset). Q4_K / Q5_K:
// the 32 nibble bytes' low nibbles are 2g's, their high nibbles 2g + 1's.
// Q6_K: levels 0..63 (the 32 is the correction lanes' offset, weight_offset),
// from the same bytes as k_pair16's.
template <QuantFormat F>
TORSH_INLINE __m512i k_pair8(const unsigned char* sb, int g) {
  if constexpr (F == QuantFormat::IQ4_XS) {
    // Sub-block j's 16 bytes: elements 0-15 in the low nibbles, 16-31 in the
    // high; the 128-bit quarters [2g lo, 2g+1 lo, 2g hi, 2g+1 hi] reordered to element order.
    const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb + kquant::kXsNibbles + 32 * g));
    const __m256i nib = _mm256_set1_epi8(0x0F);
    const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(y, nib)),
                                         _mm256_and_si256(_mm256_srli_epi16(y, 4), nib), 1);
    return iq4_levels8(_mm512_shuffle_i64x2(q, q, _MM_SHUFFLE(3, 1, 2, 0)));
  } else if constexpr (F == QuantFormat::Q6_K) {
    const __m512i ql = _mm512_loadu_si512(sb + 64 * (g / 2));
    const __m512i low = _mm512_and_si512(g % 2 ? _mm512_srli_epi16(ql, 4) : ql, _mm512_set1_epi8(0x0F));
    const __m512i qh = _mm512_broadcast_i64x4(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb + kquant::kQ6High + 32 * (g / 2))));
    const int s = 2 * (g % 2);  // qh bits 2s, 2s + 1 for sub-block 2g, 2s + 2, 2s + 3 for 2g + 1
    const __m512i shift = _mm512_mask_set1_epi16(_mm512_set1_epi16(static_cast<short>(2 * s)), 0xFFFF0000u,
                                                 static_cast<short>(2 * s + 2));
    const __m512i high = _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, shift), _mm512_set1_epi8(3)), 4);
    return _mm512_or_si512(low, high);
  } else {
    const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
        sb + (F == QuantFormat::Q4_K ? kquant::kQ4Nibbles : kquant::kQ5Nibbles) + 32 * g));
    const __m256i nib = _mm256_set1_epi8(0x0F);
    __m512i u = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(y, nib)),
                                   _mm256_and_si256(_mm256_srli_epi16(y, 4), nib), 1);
    if constexpr (F == QuantFormat::Q5_K) {  // bit j of qh byte l: 16 on element l of sub-block j
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb + kquant::kQ5High));
      const std::uint64_t b0 = _mm256_test_epi8_mask(qh, _mm256_set1_epi8(static_cast<char>(1 << (2 * g))));
      const std::uint64_t b1 = _mm256_test_epi8_mask(qh, _mm256_set1_epi8(static_cast<char>(2 << (2 * g))));
      u = _mm512_mask_add_epi8(u, b0 | (b1 << 32), u, _mm512_set1_epi8(16));
    }
    return u;
  }
}

// Int8 activations, Q6_K: d sc[0..15], the sixteen per-16 scales of the
// super-block (a pair's dot lanes 4i..4i + 3 cover its i-th 16 elements).
TORSH_INLINE __m512 k_scales16_q6(const unsigned char* sb) {
  std::uint16_t h;
  std::memcpy(&h, sb + kquant::kQ6D, 2);
  const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sb + kquant::kQ6Scales)));
  return _mm512_mul_ps(_mm512_cvtepi32_ps(sc), _mm512_set1_ps(_cvtsh_ss(h)));
}

// The scales a K tile decodes per super-block and weight row: lanes a pair picks from (pair_pick).
template <QuantFormat F, bool Wide>
TORSH_INLINE __m512 tile_scales(const unsigned char* sb) {
  if constexpr (F == QuantFormat::Q6_K && !Wide) return k_scales16_q6(sb);
  return k_scales<F>(sb);
}

// Which tile_scales lane each dot lane of pair g takes: per 32 elements
// (sub-block 2g in lanes 0-7, 2g + 1 in 8-15) or, Int8 Q6_K, per 16.
template <QuantFormat F, bool Wide>
TORSH_INLINE __m512i pair_pick(int g) {
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  if constexpr (F == QuantFormat::Q6_K && !Wide)
    return _mm512_add_epi32(_mm512_set1_epi32(4 * g), _mm512_srli_epi32(lane, 2));
  return _mm512_add_epi32(_mm512_set1_epi32(2 * g), _mm512_srli_epi32(lane, 3));
}

// One activation row (decode): its eight block scales multiplied into the
// lanes pair_pick takes once per super-block, so that each pair's scale is one
// permute (the minima's lanes 8-15 of Q4_K / Q5_K stay as they are).
template <QuantFormat F, bool Wide>
TORSH_INLINE __m512 fold_act_scales(__m512 ks, const float* d8) {
  const __m512 d = _mm512_castps256_ps512(_mm256_loadu_ps(d8));
  if constexpr (F == QuantFormat::Q6_K && !Wide) {  // lane l: group l of 16, block l / 2
    const __m512i half = _mm512_srli_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), 1);
    return _mm512_mul_ps(ks, _mm512_permutexvar_ps(half, d));
  }
  return _mm512_mask_mul_ps(ks, 0x00FF, ks, d);
}

// acc[i][j] += sub-block pair g of super-block sb, weight row i (scales ks[i])
// . activation row j. The minimum's term is added per super-block in tile_k.
template <QuantFormat F, int R, int C, bool Wide>
TORSH_INLINE void step_k(const Tile& t, std::int64_t sb, int g, const __m512 (&ks)[R], __m512 (&acc)[R][C]) {
  const ActRows& a = *t.act;
  const std::int64_t b = 8 * sb + 2 * g;
  __m512 da[C];  // C = 1: in ks already (fold_act_scales)
#pragma GCC unroll 4
  for (int j = 0; j < C; ++j)
    if constexpr (C > 1) da[j] = spread_floats<true>(a.d + (t.a0 + j) * a.nb + b);
  const __m512i pick = pair_pick<F, Wide>(g);
  constexpr std::size_t bb = quant_block_bytes(F);
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i) {
    const unsigned char* blk = t.w + i * t.w_stride + sb * bb;
    if constexpr (R > 1)  // as in step; one row is a sequential stream the hardware prefetcher follows
      _mm_prefetch(reinterpret_cast<const char*>(blk + 64 * g + 2 * R * t.w_stride), _MM_HINT_T0);
    __m512i lo, hi;
    if constexpr (Wide)
      k_pair16<F>(blk, g, lo, hi);
    else
      lo = k_pair8<F>(blk, g);
    const __m512 dw = _mm512_permutexvar_ps(pick, ks[i]);
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) {
      __m512i dot;
      if constexpr (Wide) {
        const std::int16_t* q = act16_block(a, t.a0 + j, b);
        dot = _mm512_dpwssd_epi32(_mm512_setzero_si512(), lo, _mm512_loadu_si512(q));
        dot = _mm512_dpwssd_epi32(dot, hi, _mm512_loadu_si512(q + 32));
      } else {  // the correction lanes of blocks b, b + 1 (zero but for Q6_K's offset)
        const std::int64_t ab = (t.a0 + j) * a.nb + b;
        const __m512i c = weight_offset(F) != 0 ? _mm512_loadu_si512(a.corr + ab * 8) : _mm512_setzero_si512();
        dot = _mm512_dpbusd_epi32(c, lo, _mm512_loadu_si512(a.q + ab * kBlock));
      }
      acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), C > 1 ? _mm512_mul_ps(dw, da[j]) : dw, acc[i][j]);
    }
  }
}

template <QuantFormat F, int R, int C, bool Wide>
void tile_k_rc(const Tile& t) {
  __m512 acc[R][C];
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) acc[i][j] = _mm512_setzero_ps();
  const ActRows& a = *t.act;
  const std::int64_t nsb = a.nb / 8;
  for (std::int64_t sb = 0; sb < nsb; ++sb) {
    __m512 ks[R];
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i) {
      ks[i] = tile_scales<F, Wide>(t.w + i * t.w_stride + sb * quant_block_bytes(F));
      if constexpr (C == 1) ks[i] = fold_act_scales<F, Wide>(ks[i], a.d + t.a0 * a.nb + 8 * sb);
    }
    for (int g = 0; g < 4; ++g) step_k<F, R, C, Wide>(t, sb, g, ks, acc);
    if constexpr (quant_has_min16(F)) {
      // Q2_K: -dmin m of the sixteen 16-element groups against their f32 activation sums.
#pragma GCC unroll 4
      for (int i = 0; i < R; ++i) {
        const __m512 mins = k_mins16(t.w + i * t.w_stride + sb * quant_block_bytes(F));
#pragma GCC unroll 4
        for (int j = 0; j < C; ++j)
          acc[i][j] = _mm512_fmadd_ps(mins, _mm512_loadu_ps(a.s16 + 2 * ((t.a0 + j) * a.nb + 8 * sb)), acc[i][j]);
      }
    }
    if constexpr (quant_has_min(F)) {
      // m_w s_a of the eight sub-blocks: ks's lanes 8-15 against s in the same lanes.
#pragma GCC unroll 4
      for (int j = 0; j < C; ++j) {
        const __m512 s = _mm512_castps256_ps512(_mm256_loadu_ps(a.s + (t.a0 + j) * a.nb + 8 * sb));
        const __m512 s_hi = _mm512_shuffle_f32x4(s, s, _MM_SHUFFLE(1, 0, 1, 0));
#pragma GCC unroll 4
        for (int i = 0; i < R; ++i) acc[i][j] = _mm512_mask3_fmadd_ps(ks[i], s_hi, acc[i][j], 0xFF00);
      }
    }
  }
  store_tile<R, C>(t, acc);
}

template <QuantFormat F, int R, bool Wide>
void tile_k_r(const Tile& t) {
  switch (t.cols) {
    case 1: return tile_k_rc<F, R, 1, Wide>(t);
    case 2: return tile_k_rc<F, R, 2, Wide>(t);
    case 3: return tile_k_rc<F, R, 3, Wide>(t);
    default: return tile_k_rc<F, R, 4, Wide>(t);
  }
}

template <QuantFormat F, bool Wide>
void tile_k_f(const Tile& t) {
  switch (t.rows) {
    case 1: return tile_k_r<F, 1, Wide>(t);
    case 2: return tile_k_r<F, 2, Wide>(t);
    case 3: return tile_k_r<F, 3, Wide>(t);
    default: return tile_k_r<F, 4, Wide>(t);
  }
}

// Int8 activations reach all but Q2_K and Q3_K (quant_int16_only).
template <bool Wide>
void tile_k(const Tile& t) {
  if (t.format == QuantFormat::Q4_K) return tile_k_f<QuantFormat::Q4_K, Wide>(t);
  if (t.format == QuantFormat::Q5_K) return tile_k_f<QuantFormat::Q5_K, Wide>(t);
  if (t.format == QuantFormat::Q6_K) return tile_k_f<QuantFormat::Q6_K, Wide>(t);
  if (t.format == QuantFormat::IQ4_XS) return tile_k_f<QuantFormat::IQ4_XS, Wide>(t);
  if constexpr (Wide) {
    switch (t.format) {
      case QuantFormat::Q2_K: return tile_k_f<QuantFormat::Q2_K, true>(t);
      default: return tile_k_f<QuantFormat::Q3_K, true>(t);
    }
  }
}

// The packed layout a K format borrows: Q4_1's (levels, d_w, m_w) or Q8_0's (levels, d_w).
constexpr QuantFormat packed_as(QuantFormat f) { return quant_has_min(f) ? QuantFormat::Q4_1 : QuantFormat::Q8_0; }

// Int8, Q4_K / Q5_K / IQ4_XS: as a packed Q4_1 (Q8_0) row of the Int8 tiles
// (unsigned levels, f32 d_w and m_w).
template <QuantFormat F>
void pack_k_rows8(const unsigned char* w, std::size_t w_stride, std::int64_t rows, std::int64_t nb,
                  unsigned char* dst) {
  using P = PackedRow<packed_as(F), false>;
  const std::size_t stride = P::bytes(nb);
  for (std::int64_t r = 0; r < rows; ++r) {
    const unsigned char* src = w + r * w_stride;
    unsigned char* row = dst + r * stride;
    for (std::int64_t sb = 0; sb < nb / 8; ++sb) {
      const unsigned char* blk = src + sb * quant_block_bytes(F);
      const __m512 ks = k_scales<F>(blk);
      _mm256_storeu_ps(P::d(row, nb) + 8 * sb, _mm512_castps512_ps256(ks));
      if constexpr (quant_has_min(F))
        _mm256_storeu_ps(P::m(row, nb) + 8 * sb, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(ks), 1)));
      for (int g = 0; g < 4; ++g) _mm512_store_si512(P::levels(row, 4 * sb + g), k_pair8<F>(blk, g));
    }
  }
}

template <QuantFormat F>
void pack_k_rows(const unsigned char* w, std::size_t w_stride, std::int64_t rows, std::int64_t nb, unsigned char* dst) {
  using P = PackedRow<packed_as(F), true>;
  const std::size_t stride = P::bytes(nb);
  for (std::int64_t r = 0; r < rows; ++r) {
    const unsigned char* src = w + r * w_stride;
    unsigned char* row = dst + r * stride;
    float* d = P::d(row, nb);
    for (std::int64_t sb = 0; sb < nb / 8; ++sb) {
      const unsigned char* blk = src + sb * quant_block_bytes(F);
      const __m512 ks = k_scales<F>(blk);
      _mm256_storeu_ps(d + 8 * sb, _mm512_castps512_ps256(ks));
      if constexpr (quant_has_min(F))
        if constexpr (quant_has_min(F))
          _mm256_storeu_ps(P::m(row, nb) + 8 * sb, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(ks), 1)));
      for (int g = 0; g < 4; ++g) {
        __m512i lo, hi;
        k_pair16<F>(blk, g, lo, hi);
        _mm512_store_si512(P::levels(row, 4 * sb + g), lo);
        _mm512_store_si512(P::levels(row, 4 * sb + g) + 64, hi);
      }
    }
  }
}
