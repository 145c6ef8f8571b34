#pragma once
// 256-bit tiles, one block (32 levels) per ymm, written once over a Dot
// policy and compiled in two target regions: qmatmul_avx2.cpp (maddubs and
// madd) and qmatmul_avx_vnni.cpp (vpdpbusd on ymm). Include after
// `#pragma GCC target(...)` and inside namespace torsh::cpu::quant's
// anonymous namespace, with TORSH_INLINE defined.
//
// Dot::dot(acc, u, q) adds u.q (u unsigned levels, q signed) to eight int32
// lanes of four products each; Dot::dot16(acc, l, q) adds the int16 l.q to
// eight lanes of two products each (Int16 activations); Dot::kSignedQ8 says whether Q8_0 goes the
// |w| . sign(q, w) way (maddubs would saturate at u = 255) and skips the
// correction lanes.
//
// Sixteen ymm registers hold 4 x 2 accumulators, the weight row's levels and
// scale, and the activations' scales.

constexpr int kRows = 4, kCols = 2;
constexpr std::int64_t kBlock = kQuantBlock;

inline float half_at(const unsigned char* p) {
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// Q5: bytes e = 0..31 of the result are 0x10 where bit e of the block's qh
// (the u32 at p) is set: each byte takes qh's byte e / 8 and tests bit e % 8.
TORSH_INLINE __m256i high_bits(const unsigned char* p) {
  std::uint32_t qh;
  std::memcpy(&qh, p, 4);
  const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)),
                                             _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,  //
                                                              2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

// Signed weight levels w (bytes; Q8_0, IQ4_*) against the activations x:
// |w| . sign(x, w) where maddubs would saturate on w + 128 (kSignedQ8), else
// the unsigned w + 128 with the correction lanes (weight_offset 128).
template <class Dot>
TORSH_INLINE __m256i signed_dot(__m256i w, __m256i x, const std::int32_t* corr) {
  if constexpr (Dot::kSignedQ8) return Dot::dot(_mm256_setzero_si256(), _mm256_abs_epi8(w), _mm256_sign_epi8(x, w));
  const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(corr));
  return Dot::dot(c, _mm256_xor_si256(w, _mm256_set1_epi8(-128)), x);
}

// IQ4_NL / IQ4_XS: 16 nibble bytes laid out as Q4_0's to the 32 signed levels kIq4Levels[q] (bytes).
TORSH_INLINE __m256i iq4_levels8(__m128i y) {
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Levels)));
  const __m128i nib = _mm_set1_epi8(0x0F);
  return _mm256_shuffle_epi8(table, _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(y, 4), nib), _mm_and_si128(y, nib)));
}

template <class Dot, QuantFormat F>
TORSH_INLINE __m256i block_dot(const unsigned char* blk, const std::int8_t* q, const std::int32_t* corr) {
  const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
  if constexpr (F == QuantFormat::Q8_0) {
    return signed_dot<Dot>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2)), x, corr);
  } else if constexpr (F == QuantFormat::IQ4_NL) {
    return signed_dot<Dot>(iq4_levels8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2))), x, corr);
  } else {
    constexpr int off = quant_nibbles_at(F);
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + off));
    __m256i u = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(y, 4), y), _mm256_set1_epi8(0x0F));
    if constexpr (quant_has_high_bits(F)) u = _mm256_or_si256(u, high_bits(blk + off - 4));
    const __m256i c =
        quant_has_min(F) ? _mm256_setzero_si256() : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(corr));
    return Dot::dot(c, u, x);
  }
}

// IQ4_NL / IQ4_XS: 16 nibble bytes laid out as Q4_0's to the signed int16
// levels kIq4Levels[q] of elements 0-15 (lo) and 16-31 (hi), looked up by vpshufb.
TORSH_INLINE void iq4_levels16(__m128i y, __m256i& lo, __m256i& hi) {
  const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Levels));
  const __m128i nib = _mm_set1_epi8(0x0F);
  lo = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(table, _mm_and_si128(y, nib)));
  hi = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(y, 4), nib)));
}

// Int16 activations: a block's weights as signed int16 levels l in two ymm
// (elements 0-15, 16-31), for Dot::dot16's pairwise products with the
// activation levels.
template <QuantFormat F>
TORSH_INLINE void levels16(const unsigned char* blk, __m256i& lo, __m256i& hi) {
  if constexpr (F == QuantFormat::Q8_0) {
    lo = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2)));
    hi = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 18)));
  } else if constexpr (F == QuantFormat::IQ4_NL) {
    iq4_levels16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2)), lo, hi);
  } else {
    constexpr int off = quant_nibbles_at(F);
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + off));
    const __m128i nib = _mm_set1_epi8(0x0F);
    __m128i l8 = _mm_and_si128(y, nib), h8 = _mm_and_si128(_mm_srli_epi16(y, 4), nib);
    if constexpr (quant_has_high_bits(F)) {
      const __m256i hb = high_bits(blk + off - 4);
      l8 = _mm_or_si128(l8, _mm256_castsi256_si128(hb));
      h8 = _mm_or_si128(h8, _mm256_extracti128_si256(hb, 1));
    }
    lo = _mm256_cvtepu8_epi16(l8);
    hi = _mm256_cvtepu8_epi16(h8);
    if constexpr (weight_offset(F) != 0) {
      lo = _mm256_sub_epi16(lo, _mm256_set1_epi16(weight_offset(F)));
      hi = _mm256_sub_epi16(hi, _mm256_set1_epi16(weight_offset(F)));
    }
  }
}

// K formats: sub-block j of the super-block at sb as signed int16 levels in
// two ymm (elements 0-15, 16-31), Q6_K's per-16 scales multiplied in
// (core/quant_k.hpp). The byte shifts by a variable count go through 16-bit
// lanes; the bits a byte takes from its neighbour are masked off.
template <QuantFormat F>
TORSH_INLINE void levels16_k(const unsigned char* sb, int j, __m256i& lo, __m256i& hi) {
  auto at = [](const unsigned char* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
  const __m128i nib = _mm_set1_epi8(0x0F);
  if constexpr (F == QuantFormat::IQ4_XS) {
    iq4_levels16(at(sb + kquant::kXsNibbles + 16 * j), lo, hi);
  } else if constexpr (F == QuantFormat::Q2_K || F == QuantFormat::Q3_K) {
    // 2 bits at bits 2 (j % 4) of 32 bytes (half j / 4); Q3_K: - 4 unless bit j of hmask.
    const unsigned char* qs = sb + (F == QuantFormat::Q2_K ? kquant::kQ2Bits : kquant::kQ3Bits) + 32 * (j / 4);
    const __m128i shift = _mm_cvtsi32_si128(2 * (j % 4)), three = _mm_set1_epi8(3);
    __m128i l8 = _mm_and_si128(_mm_srl_epi16(at(qs), shift), three);
    __m128i h8 = _mm_and_si128(_mm_srl_epi16(at(qs + 16), shift), three);
    if constexpr (F == QuantFormat::Q3_K) {  // clear bit: - 4 (the bytes become signed -4..3)
      const __m128i js = _mm_cvtsi32_si128(j), one = _mm_set1_epi8(1);
      const __m128i four = _mm_set1_epi8(4);
      l8 = _mm_sub_epi8(l8, _mm_andnot_si128(_mm_slli_epi16(_mm_and_si128(_mm_srl_epi16(at(sb), js), one), 2), four));
      h8 = _mm_sub_epi8(h8,
                        _mm_andnot_si128(_mm_slli_epi16(_mm_and_si128(_mm_srl_epi16(at(sb + 16), js), one), 2), four));
    }
    lo = _mm256_mullo_epi16(_mm256_cvtepi8_epi16(l8),
                            _mm256_set1_epi16(static_cast<short>(kquant::scale16(F, sb, j, 0))));
    hi = _mm256_mullo_epi16(_mm256_cvtepi8_epi16(h8),
                            _mm256_set1_epi16(static_cast<short>(kquant::scale16(F, sb, j, 1))));
  } else if constexpr (F == QuantFormat::Q6_K) {
    const int h = j / 4, s = j % 4;
    const unsigned char* ql = sb + 64 * h + 32 * (s % 2);
    const unsigned char* qh = sb + kquant::kQ6High + 32 * h;
    const __m128i ns = _mm_cvtsi32_si128(4 * (s / 2)), hs = _mm_cvtsi32_si128(2 * s), three = _mm_set1_epi8(3);
    auto level = [&](int e) {  // elements e .. e + 15 as bytes 0..63
      const __m128i low = _mm_and_si128(_mm_srl_epi16(at(ql + e), ns), nib);
      return _mm_or_si128(low, _mm_slli_epi16(_mm_and_si128(_mm_srl_epi16(at(qh + e), hs), three), 4));
    };
    const __m256i c32 = _mm256_set1_epi16(32);
    lo = _mm256_mullo_epi16(_mm256_sub_epi16(_mm256_cvtepu8_epi16(level(0)), c32),
                            _mm256_set1_epi16(static_cast<short>(kquant::scale16(QuantFormat::Q6_K, sb, j, 0))));
    hi = _mm256_mullo_epi16(_mm256_sub_epi16(_mm256_cvtepu8_epi16(level(16)), c32),
                            _mm256_set1_epi16(static_cast<short>(kquant::scale16(QuantFormat::Q6_K, sb, j, 1))));
  } else {
    const unsigned char* qs = sb + (F == QuantFormat::Q4_K ? kquant::kQ4Nibbles : kquant::kQ5Nibbles) + 32 * (j / 2);
    const __m128i ns = _mm_cvtsi32_si128(4 * (j % 2));
    __m128i l8 = _mm_and_si128(_mm_srl_epi16(at(qs), ns), nib), h8 = _mm_and_si128(_mm_srl_epi16(at(qs + 16), ns), nib);
    if constexpr (F == QuantFormat::Q5_K) {  // bit j of qh byte e: 16 on element e
      const __m128i js = _mm_cvtsi32_si128(j), one = _mm_set1_epi8(1);
      const unsigned char* qh = sb + kquant::kQ5High;
      l8 = _mm_or_si128(l8, _mm_slli_epi16(_mm_and_si128(_mm_srl_epi16(at(qh), js), one), 4));
      h8 = _mm_or_si128(h8, _mm_slli_epi16(_mm_and_si128(_mm_srl_epi16(at(qh + 16), js), one), 4));
    }
    lo = _mm256_cvtepu8_epi16(l8);
    hi = _mm256_cvtepu8_epi16(h8);
  }
}

TORSH_INLINE __m256i load256(const unsigned char* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// Int8 activations: sub-block j as its 32 unsigned levels in bytes. Q6_K:
// 0..63, the 32 is the correction lanes' offset (weight_offset). IQ4_XS:
// the signed levels (signed_dot).
template <QuantFormat F>
TORSH_INLINE __m256i levels8_k(const unsigned char* sb, int j) {
  if constexpr (F == QuantFormat::IQ4_XS) {
    return iq4_levels8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sb + kquant::kXsNibbles + 16 * j)));
  } else if constexpr (F == QuantFormat::Q6_K) {  // as levels16_k's
    const int h = j / 4, s = j % 4;
    const __m256i low = _mm256_and_si256(
        _mm256_srl_epi16(load256(sb + 64 * h + 32 * (s % 2)), _mm_cvtsi32_si128(4 * (s / 2))), _mm256_set1_epi8(0x0F));
    const __m256i high = _mm256_and_si256(
        _mm256_srl_epi16(load256(sb + kquant::kQ6High + 32 * h), _mm_cvtsi32_si128(2 * s)), _mm256_set1_epi8(3));
    return _mm256_or_si256(low, _mm256_slli_epi16(high, 4));
  }
  const __m256i y = load256(sb + (F == QuantFormat::Q4_K ? kquant::kQ4Nibbles : kquant::kQ5Nibbles) + 32 * (j / 2));
  __m256i u = _mm256_and_si256(_mm256_srl_epi16(y, _mm_cvtsi32_si128(4 * (j % 2))), _mm256_set1_epi8(0x0F));
  if constexpr (F == QuantFormat::Q5_K) {  // bit j of qh byte e: 16 on element e
    const __m256i bit =
        _mm256_and_si256(_mm256_srl_epi16(load256(sb + kquant::kQ5High), _mm_cvtsi32_si128(j)), _mm256_set1_epi8(1));
    u = _mm256_or_si256(u, _mm256_slli_epi16(bit, 4));
  }
  return u;
}

// Int16 activations: a block's levels (lo: elements 0-15, hi: 16-31) against
// its activations in act16_block's layout, to eight int32 lanes.
template <class Dot>
TORSH_INLINE __m256i dot16_block(__m256i lo, __m256i hi, const std::int16_t* q) {
  const __m256i d = Dot::dot16(_mm256_setzero_si256(), lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)));
  return Dot::dot16(d, hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32)));
}

// A K super-block's eight sub-block scales d_w and minima m_w (0 where the
// format has none), each product rounded in f32 as kquant::sub_scales's.
// Q6_K, Q3_K, Q2_K: d in every lane (their per-16 scales are in the levels,
// or, Int8 Q6_K, in q6_scales16).
template <QuantFormat F>
TORSH_INLINE void scales8_k(const unsigned char* sb, __m256& dw, __m256& mw) {
  mw = _mm256_setzero_ps();
  if constexpr (F == QuantFormat::Q6_K || F == QuantFormat::Q2_K || F == QuantFormat::Q3_K) {
    constexpr int at = F == QuantFormat::Q6_K ? kquant::kQ6D : F == QuantFormat::Q2_K ? kquant::kQ2D : kquant::kQ3D;
    dw = _mm256_set1_ps(half_at(sb + at));
  } else if constexpr (F == QuantFormat::IQ4_XS) {
    alignas(32) float v[8];
    for (int j = 0; j < 8; ++j) v[j] = static_cast<float>(kquant::xs_scale(sb, j));
    dw = _mm256_mul_ps(_mm256_load_ps(v), _mm256_set1_ps(half_at(sb)));
  } else {
    // The twelve scale bytes as three words; byte i of each result word is
    // sub-block i's (0-3) or i + 4's value (quant.hpp's layout).
    std::uint32_t u[3];
    std::memcpy(u, sb + kquant::kScalesAt, 12);
    const std::uint32_t six = 0x3F3F3F3Fu, four = 0x0F0F0F0Fu, two = 0x03030303u;
    const std::uint32_t sc_hi = (u[2] & four) | (((u[0] >> 6) & two) << 4);
    const std::uint32_t m_hi = ((u[2] >> 4) & four) | (((u[1] >> 6) & two) << 4);
    const __m128i sc = _mm_setr_epi32(static_cast<int>(u[0] & six), static_cast<int>(sc_hi), 0, 0);
    const __m128i m = _mm_setr_epi32(static_cast<int>(u[1] & six), static_cast<int>(m_hi), 0, 0);
    dw = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(sc)), _mm256_set1_ps(half_at(sb)));
    mw = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(m)), _mm256_set1_ps(-half_at(sb + 2)));
  }
}

// Int8 Q6_K: d sc of the super-block's sixteen 16-element groups, 0-7 and 8-15.
TORSH_INLINE void q6_scales16(const unsigned char* sb, __m256& lo, __m256& hi) {
  const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sb + kquant::kQ6Scales));
  const __m256 d = _mm256_set1_ps(half_at(sb + kquant::kQ6D));
  lo = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sc)), d);
  hi = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(sc, 8))), d);
}

// acc[i][j] += super-block sb of weight row i . activation row j: the scales
// decoded once per super-block and row, each sub-block's dot scaled by its
// lane of d_w d_a (an in-register permute), the minima's m_w s_a once per super-block.
template <class Dot, QuantFormat F, int R, int C, bool Wide>
TORSH_INLINE void step_k(const Tile& t, std::int64_t sb, __m256 (&acc)[R][C]) {
  static_assert(Wide || !quant_int16_only(F), "this format takes Int16 activations only");
  const ActRows& a = *t.act;
  constexpr std::size_t bb = quant_block_bytes(F);
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i) {
    const unsigned char* blk = t.w + i * t.w_stride + sb * bb;
    // Several rows: two tiles ahead, as the AVX-512 tiles do, DRAM ahead of
    // the hardware prefetcher; one row is a sequential stream it follows.
    if constexpr (R > 1)
      for (std::size_t o = 0; o < bb; o += 64)
        _mm_prefetch(reinterpret_cast<const char*>(blk + o + 2 * R * t.w_stride), _MM_HINT_T0);
    constexpr bool per16 = F == QuantFormat::Q6_K && !Wide;  // the dot's lanes 0-3: elements 0-15, 4-7: 16-31
    __m256 dw, mw, s16[2];
    scales8_k<F>(blk, dw, mw);
    if constexpr (per16) q6_scales16(blk, s16[0], s16[1]);
    __m256 dd[C];  // d_w d_a per sub-block (per16: d_a)
#pragma GCC unroll 2
    for (int j = 0; j < C; ++j) {
      const __m256 da = _mm256_loadu_ps(a.d + (t.a0 + j) * a.nb + 8 * sb);
      dd[j] = per16 ? da : _mm256_mul_ps(dw, da);
    }
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l) {
      const std::int64_t b = 8 * sb + l;
      __m256i lo, hi;
      if constexpr (Wide)
        levels16_k<F>(blk, l, lo, hi);
      else
        lo = levels8_k<F>(blk, l);
      __m256 w16;  // per16: the sub-block's two group scales, 4 lanes each
      if constexpr (per16)
        w16 = _mm256_permutevar8x32_ps(
            s16[l / 4], _mm256_setr_epi32(2 * (l % 4), 2 * (l % 4), 2 * (l % 4), 2 * (l % 4), 2 * (l % 4) + 1,
                                          2 * (l % 4) + 1, 2 * (l % 4) + 1, 2 * (l % 4) + 1));
#pragma GCC unroll 2
      for (int j = 0; j < C; ++j) {
        const std::int64_t ab = (t.a0 + j) * a.nb + b;
        __m256i dot;
        if constexpr (Wide) {
          dot = dot16_block<Dot>(lo, hi, act16_block(a, t.a0 + j, b));
        } else {
          const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.q + ab * kBlock));
          if constexpr (F == QuantFormat::IQ4_XS) {
            dot = signed_dot<Dot>(lo, x, a.corr + ab * 8);
          } else {  // correction lanes: Q6_K's offset (Q4_K, Q5_K have none)
            const __m256i c = weight_offset(F) != 0
                                  ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.corr + ab * 8))
                                  : _mm256_setzero_si256();
            dot = Dot::dot(c, lo, x);
          }
        }
        const __m256 scale = per16 ? _mm256_mul_ps(w16, _mm256_permutevar8x32_ps(dd[j], _mm256_set1_epi32(l)))
                                   : _mm256_permutevar8x32_ps(dd[j], _mm256_set1_epi32(l));
        acc[i][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc[i][j]);
        if constexpr (quant_has_min16(F)) {  // -dmin m per 16 elements times their f32 sums, in lane 0
          float mins[2];
          kquant::sub_mins16(blk, l, mins);
          const float* s = a.s16 + 2 * ab;
          acc[i][j] =
              _mm256_add_ps(acc[i][j], _mm256_set_m128(_mm_setzero_ps(), _mm_set_ss(mins[0] * s[0] + mins[1] * s[1])));
        }
      }
    }
    if constexpr (quant_has_min(F)) {
#pragma GCC unroll 2
      for (int j = 0; j < C; ++j)
        acc[i][j] = _mm256_fmadd_ps(mw, _mm256_loadu_ps(a.s + (t.a0 + j) * a.nb + 8 * sb), acc[i][j]);
    }
  }
}

// acc[i][j] += block b of weight row i . block b of activation row j, scaled
// (the 32-element formats).
template <class Dot, QuantFormat F, int R, int C, bool Wide>
TORSH_INLINE void step(const Tile& t, std::int64_t b, __m256 (&acc)[R][C]) {
  const ActRows& a = *t.act;
  constexpr std::size_t bb = quant_block_bytes(F);
  __m256 da[C], sa[C];
#pragma GCC unroll 2
  for (int j = 0; j < C; ++j) {
    const std::int64_t blk = (t.a0 + j) * a.nb + b;
    da[j] = _mm256_broadcast_ss(a.d + blk);
    // Q4_1's and Q5_1's m_w s_a lands on all eight lanes: s / 8 on each.
    if constexpr (quant_has_min(F)) sa[j] = _mm256_set1_ps(a.s[blk] * 0.125f);
  }
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i) {
    const unsigned char* blk = t.w + i * t.w_stride + b * bb;
    // Two tiles ahead, as the AVX-512 tiles do: DRAM ahead of the hardware prefetcher.
    _mm_prefetch(reinterpret_cast<const char*>(blk + 2 * R * t.w_stride), _MM_HINT_T0);
    const __m256 dw = _mm256_set1_ps(half_at(blk));
    const float mwf = quant_has_min(F) ? half_at(blk + 2) : 0.0f;
    __m256i lo, hi;
    if constexpr (Wide) levels16<F>(blk, lo, hi);
#pragma GCC unroll 2
    for (int j = 0; j < C; ++j) {
      const std::int64_t ab = (t.a0 + j) * a.nb + b;
      __m256i dot;
      if constexpr (Wide) {
        dot = dot16_block<Dot>(lo, hi, act16_block(a, t.a0 + j, b));
      } else {
        dot = block_dot<Dot, F>(blk, a.q + ab * kBlock, a.corr + ab * 8);
      }
      acc[i][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(dw, da[j]), acc[i][j]);
      if constexpr (quant_has_min(F)) acc[i][j] = _mm256_fmadd_ps(_mm256_set1_ps(mwf), sa[j], acc[i][j]);
    }
  }
}

template <class Dot, QuantFormat F, int R, int C, bool Wide>
void tile_rc(const Tile& t) {
  __m256 acc[R][C];
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
    for (int j = 0; j < C; ++j) acc[i][j] = _mm256_setzero_ps();
  if constexpr (quant_super_blocks(F))
    for (std::int64_t sb = 0; sb < t.act->nb / 8; ++sb) step_k<Dot, F, R, C, Wide>(t, sb, acc);
  else
    for (std::int64_t b = 0; b < t.act->nb; ++b) step<Dot, F, R, C, Wide>(t, b, acc);
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
    for (int j = 0; j < C; ++j) {
      const __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc[i][j]), _mm256_extractf128_ps(acc[i][j], 1));
      const __m128 p = _mm_add_ps(h, _mm_movehl_ps(h, h));
      t.out[(t.a0 + j) * t.ldo + i] = _mm_cvtss_f32(_mm_add_ss(p, _mm_movehdup_ps(p)));
    }
}

template <class Dot, QuantFormat F, int R, bool Wide>
void tile_r(const Tile& t) {
  if (t.cols == 1) return tile_rc<Dot, F, R, 1, Wide>(t);
  return tile_rc<Dot, F, R, 2, Wide>(t);
}

template <class Dot, QuantFormat F, bool Wide>
void tile_f(const Tile& t) {
  switch (t.rows) {
    case 1: return tile_r<Dot, F, 1, Wide>(t);
    case 2: return tile_r<Dot, F, 2, Wide>(t);
    case 3: return tile_r<Dot, F, 3, Wide>(t);
    default: return tile_r<Dot, F, 4, Wide>(t);
  }
}

// Wide: Int16 activations; else Int8.
template <class Dot, bool Wide>
void tile(const Tile& t) {
  switch (t.format) {
    case QuantFormat::Q4_0: return tile_f<Dot, QuantFormat::Q4_0, Wide>(t);
    case QuantFormat::Q4_1: return tile_f<Dot, QuantFormat::Q4_1, Wide>(t);
    case QuantFormat::Q8_0: return tile_f<Dot, QuantFormat::Q8_0, Wide>(t);
    case QuantFormat::Q5_0: return tile_f<Dot, QuantFormat::Q5_0, Wide>(t);
    case QuantFormat::Q5_1: return tile_f<Dot, QuantFormat::Q5_1, Wide>(t);
    case QuantFormat::Q4_K:
    case QuantFormat::Q5_K:
    case QuantFormat::Q6_K:
    case QuantFormat::IQ4_NL:
    case QuantFormat::IQ4_XS:
    case QuantFormat::Q2_K:
    case QuantFormat::Q3_K:
      if (t.format == QuantFormat::Q4_K) return tile_f<Dot, QuantFormat::Q4_K, Wide>(t);
      if (t.format == QuantFormat::Q5_K) return tile_f<Dot, QuantFormat::Q5_K, Wide>(t);
      if (t.format == QuantFormat::Q6_K) return tile_f<Dot, QuantFormat::Q6_K, Wide>(t);
      if (t.format == QuantFormat::IQ4_NL) return tile_f<Dot, QuantFormat::IQ4_NL, Wide>(t);
      if (t.format == QuantFormat::IQ4_XS) return tile_f<Dot, QuantFormat::IQ4_XS, Wide>(t);
      if constexpr (Wide) {  // the driver gives Q2_K and Q3_K Int16 activations only (quant_int16_only)
        if (t.format == QuantFormat::Q2_K) return tile_f<Dot, QuantFormat::Q2_K, true>(t);
        return tile_f<Dot, QuantFormat::Q3_K, true>(t);
      }
      break;
  }
}

// One weight row per tile for up to two activation rows where memory is the
// limit (Q8_0, and the super-block formats, whose per-row scale decoding
// gains nothing from sharing activations); the 4- and 5-bit 32-element
// formats' unpacking at 256 bits is the limit, and several rows sharing each
// activation load run faster.
int stream_rows(QuantFormat f, std::int64_t m) {
  return m <= 2 && (f == QuantFormat::Q8_0 || quant_super_blocks(f)) ? 1 : kRows;
}
