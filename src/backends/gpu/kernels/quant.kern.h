/* Block-quantized weights (torsh/core/quant.hpp: ggml's Q4_0, Q4_1, Q8_0, Q5_0,
 * Q5_1 and IQ4_NL layouts of 32 elements, and Q2_K .. Q6_K, IQ4_XS of 256):
 * rows dequantized, and qmatmul out[m, n] = x[m, k] @ dequantize(w)^T. Every
 * format is read per 32-element block b of a row: a 32-format's block b, or
 * sub-block b % 8 of a K format's super-block b / 8. Blocks are 18 .. 210
 * bytes, so no field is 4-byte aligned: levels are read as bytes and the f16
 * scales assembled from two bytes (dialect.h). */
/* QUANT_*, QM_GROUP and QM_ROWS: meta.h. */

DEVICE_FN int quant_super_blocks(int fmt) {
  return fmt == QUANT_Q4_K || fmt == QUANT_Q5_K || fmt == QUANT_Q6_K || fmt == QUANT_IQ4_XS || fmt == QUANT_Q2_K ||
         fmt == QUANT_Q3_K;
}

/* IQ4_NL's and IQ4_XS's 16 levels (torsh::kIq4Levels). */
DEVICE_FN int quant_iq4_level(uint q) {
  switch (q) {
    case 0: return -127;
    case 1: return -104;
    case 2: return -83;
    case 3: return -65;
    case 4: return -49;
    case 5: return -35;
    case 6: return -22;
    case 7: return -10;
    case 8: return 1;
    case 9: return 13;
    case 10: return 25;
    case 11: return 38;
    case 12: return 53;
    case 13: return 69;
    case 14: return 89;
    default: return 113;
  }
}

DEVICE_FN long quant_block_bytes_of(int fmt) {
  return fmt == QUANT_Q4_0     ? 18
         : fmt == QUANT_Q4_1   ? 20
         : fmt == QUANT_Q5_0   ? 22
         : fmt == QUANT_Q5_1   ? 24
         : fmt == QUANT_Q4_K   ? 144
         : fmt == QUANT_Q5_K   ? 176
         : fmt == QUANT_Q6_K   ? 210
         : fmt == QUANT_IQ4_NL ? 18
         : fmt == QUANT_IQ4_XS ? 136
         : fmt == QUANT_Q2_K   ? 84
         : fmt == QUANT_Q3_K   ? 110
                               : 34;
}

/* Formats with a minimum m (x = q d + m; the K formats' m = -dmin m6; Q2_K's per 16 elements). */
DEVICE_FN int quant_has_min(int fmt) {
  return fmt == QUANT_Q4_1 || fmt == QUANT_Q5_1 || fmt == QUANT_Q4_K || fmt == QUANT_Q5_K || fmt == QUANT_Q2_K;
}
/* The byte where a 32-format's nibbles start. */
DEVICE_FN int quant_nibbles_at(int fmt) {
  return fmt == QUANT_Q4_0 || fmt == QUANT_IQ4_NL ? 2 : fmt == QUANT_Q4_1 ? 4 : fmt == QUANT_Q5_0 ? 6 : 8;
}

DEVICE_FN float quant_half(GLOBAL const uchar* p) { return half_bits_to_float((uint)p[0] | ((uint)p[1] << 8)); }

/* The bytes of the block holding 32-element block b of the row at wrow. */
DEVICE_FN GLOBAL const uchar* quant_block_of(GLOBAL const uchar* wrow, int fmt, long b) {
  return wrow + (quant_super_blocks(fmt) ? b >> 3 : b) * quant_block_bytes_of(fmt);
}

/* Q4_K / Q5_K: sub-block j's 6-bit scale (want_min 0) or minimum (1) from the
 * 12 scale bytes at byte 4. */
DEVICE_FN int quant_k_scale(GLOBAL const uchar* blk, int j, int want_min) {
  GLOBAL const uchar* s = blk + 4;
  if (j < 4) return (int)(s[j + 4 * want_min] & 63u);
  const uint low = want_min ? (uint)s[j + 4] >> 4 : (uint)s[j + 4] & 15u;
  return (int)(low | (((uint)s[j - 4 + 4 * want_min] >> 6) << 4));
}

/* Scale of element e of block j (the sub-block in a K format's super-block
 * blk, else 0): f16 d, or the K formats' d * sc (Q6_K's per 16 elements) in
 * f32, as the host's dequantizer rounds it. */
/* Q3_K: the 6-bit scale i (0..15) less 32. */
DEVICE_FN int quant_q3_scale(GLOBAL const uchar* blk, int i) {
  const uint low = ((uint)blk[96 + (i & 7)] >> (4 * (i >> 3))) & 15u;
  const uint high = ((uint)blk[104 + (i & 3)] >> (2 * (i >> 2))) & 3u;
  return (int)(low | (high << 4)) - 32;
}

DEVICE_FN float quant_scale(int fmt, GLOBAL const uchar* blk, int j, int e) {
  if (fmt == QUANT_Q2_K) return quant_half(blk + 80) * (float)((uint)blk[2 * j + (e >> 4)] & 15u);
  if (fmt == QUANT_Q3_K) return quant_half(blk + 108) * (float)quant_q3_scale(blk, 2 * j + (e >> 4));
  if (fmt == QUANT_Q6_K)
    return quant_half(blk + 208) * (float)((int)((uint)blk[192 + 2 * j + (e >> 4)] ^ 0x80u) - 0x80);
  if (fmt == QUANT_IQ4_XS) {
    const uint low = ((uint)blk[4 + (j >> 1)] >> (4 * (j & 1))) & 15u;
    const uint high = ((((uint)blk[2] | ((uint)blk[3] << 8)) >> (2 * j)) & 3u) << 4;
    return quant_half(blk) * (float)((int)(low | high) - 32);
  }
  if (quant_super_blocks(fmt)) return quant_half(blk) * (float)quant_k_scale(blk, j, 0);
  return quant_half(blk);
}

/* The minimum m of block j (formats with one; Q2_K: of element e's 16). */
DEVICE_FN float quant_min(int fmt, GLOBAL const uchar* blk, int j, int e) {
  if (fmt == QUANT_Q2_K) return -(quant_half(blk + 82) * (float)((uint)blk[2 * j + (e >> 4)] >> 4));
  if (quant_super_blocks(fmt)) return -(quant_half(blk + 2) * (float)quant_k_scale(blk, j, 1));
  return quant_half(blk + 2);
}

/* Level of element e (0..31) of block j: a 32-format's nibble byte e % 16
 * holds e < 16 in its low nibble, e + 16 in its high one; Q5 adds bit e of
 * the u32 before the nibbles as 16 (Q4_0 centred on 8, Q5_0 on 16); Q8_0 a
 * signed byte. K formats as quant.hpp lays them out (Q6_K centred on 32). */
DEVICE_FN int quant_level(int fmt, GLOBAL const uchar* blk, int j, int e) {
  if (fmt == QUANT_Q8_0) return (int)(((uint)blk[2 + e] ^ 0x80u)) - 0x80;
  if (fmt == QUANT_Q2_K || fmt == QUANT_Q3_K) {
    const int q = (int)(((uint)blk[(fmt == QUANT_Q2_K ? 16 : 32) + 32 * (j >> 2) + e] >> (2 * (j & 3))) & 3u);
    return fmt == QUANT_Q2_K || (((uint)blk[e] >> j) & 1u) ? q : q - 4;
  }
  if (fmt == QUANT_IQ4_NL || fmt == QUANT_IQ4_XS) {
    GLOBAL const uchar* qs = blk + (fmt == QUANT_IQ4_NL ? 2 : 8 + 16 * j);
    return quant_iq4_level(((uint)qs[e & 15] >> (e < 16 ? 0 : 4)) & 15u);
  }
  if (fmt == QUANT_Q6_K) {
    const int h = j >> 2, s = j & 3;
    const uint low = ((uint)blk[64 * h + 32 * (s & 1) + e] >> (4 * (s >> 1))) & 15u;
    const uint high = ((uint)blk[128 + 32 * h + e] >> (2 * s)) & 3u;
    return (int)(low | (high << 4)) - 32;
  }
  if (quant_super_blocks(fmt)) {
    const int q5 = fmt == QUANT_Q5_K;
    int q = (int)(((uint)blk[(q5 ? 48 : 16) + 32 * (j >> 1) + e] >> (4 * (j & 1))) & 15u);
    if (q5) q |= (int)(((uint)blk[16 + e] >> j) & 1u) << 4;
    return q;
  }
  const int at = quant_nibbles_at(fmt);
  const uint b = blk[at + (e & 15)];
  int q = (int)(e < 16 ? (b & 15u) : (b >> 4));
  if (fmt == QUANT_Q5_0 || fmt == QUANT_Q5_1) q |= (int)(((uint)blk[at - 4 + (e >> 3)] >> (e & 7)) & 1u) << 4;
  return fmt == QUANT_Q4_0 ? q - 8 : fmt == QUANT_Q5_0 ? q - 16 : q;
}

/* Element i of the [m, cols] output: column i % cols of weight row ids[i / cols]
 * (or i / cols without ids), rounded exactly as the host's dequantize_row.
 * ids_width is 0 (no ids), 4 (i32) or 8 (i64: the op layer has checked every id
 * to lie in [0, rows), so the low little-endian word is the id). */
DEVICE_FN float dequant_at(GLOBAL const uchar* w, GLOBAL const int* ids, int ids_width, int fmt, long cols, long i) {
  const long r = i / cols, c = i - r * cols;
  const long row = ids_width == 0 ? r : ids_width == 4 ? (long)ids[r] : (long)ids[2 * r];
  const long bytes = quant_block_bytes_of(fmt), per_block = quant_super_blocks(fmt) ? 256 : 32;
  GLOBAL const uchar* blk = quant_block_of(w + row * (cols / per_block) * bytes, fmt, c / 32);
  const int j = quant_super_blocks(fmt) ? (int)((c / 32) & 7) : 0, e = (int)(c & 31);
  const float q = (float)quant_level(fmt, blk, j, e), d = quant_scale(fmt, blk, j, e);
  /* A K format's minimum is a product too: both under dot2_unfused, so neither fuses. */
  if (fmt == QUANT_Q4_K || fmt == QUANT_Q5_K)
    return dot2_unfused(q, d, -quant_half(blk + 2), (float)quant_k_scale(blk, j, 1));
  if (fmt == QUANT_Q2_K) return dot2_unfused(q, d, -quant_half(blk + 82), (float)((uint)blk[2 * j + (e >> 4)] >> 4));
  return quant_has_min(fmt) ? mul_add_unfused(q, d, quant_min(fmt, blk, j, e)) : q * d;
}

KERNEL void dequantize_f32(GLOBAL const uchar* w, GLOBAL const int* ids, GLOBAL float* out, int fmt, int ids_width,
                           long cols, long total) {
  for (long i = GLOBAL_ID0(); i < total; i += GLOBAL_SIZE0()) out[i] = dequant_at(w, ids, ids_width, fmt, cols, i);
}

/* f16 (bf16 == 0) or bf16 output, converted as the host converts. */
KERNEL void dequantize_b16(GLOBAL const uchar* w, GLOBAL const int* ids, GLOBAL ushort* out, int fmt, int ids_width,
                           long cols, long total, int bf16) {
  for (long i = GLOBAL_ID0(); i < total; i += GLOBAL_SIZE0()) {
    const float v = dequant_at(w, ids, ids_width, fmt, cols, i);
    out[i] = (ushort)(bf16 ? float_to_bf16_bits(v) : float_to_half_bits(v));
  }
}

/* qmatmul with f32 activations as they are: each block's weights are d * level
 * (+ m; Q6_K: a scale per half block), so the result is the f32 dot product with the dequantized row, up to
 * f32 rounding. The CPU's integer kernels quantize activations per 32-block
 * first (QMatmulArgs::activations, their knob, unused here): Int16 rounds each
 * x by at most amax_b / 65534 (amax_b: the block's largest |x|), so the two
 * results differ by at most sum over blocks b of amax_b / 65534 * sum_{i in b}
 * |w_i| plus rounding; Int8 by amax_b / 254 instead. On a GPU the f32 path is
 * the exact one and costs no more: the weights' bytes bound the time.
 *
 * Work-group g (QM_GROUP items) computes weight row g % n against activation
 * rows [(g / n) * QM_ROWS, + QM_ROWS): consecutive groups share the x rows and
 * read neighbouring weight rows. Each item strides over the row's quarter
 * blocks, 8 weights each (bytes 4t..4t+3 of a Q4 block's nibbles: elements
 * 4t..4t+3 and 16+4t..16+4t+3), decoding them once for all its x rows; the
 * partial sums meet in local memory. For m = 1 (decode) that is one group per
 * output, n groups in all. */
KERNEL void qmatmul_f32(GLOBAL const float* x, GLOBAL const uchar* w, GLOBAL float* out, long m, long n, long k,
                        int fmt) {
  LOCAL_ARRAY(float, red, QM_ROWS* QM_GROUP);
  const long g = GROUP_ID(0), lid = LOCAL_ID(0);
  const long row = g % n, r0 = (g / n) * QM_ROWS;
  const long rows = m - r0 < QM_ROWS ? m - r0 : QM_ROWS;
  const long nb = k / 32;
  GLOBAL const uchar* wrow = w + row * (k / (quant_super_blocks(fmt) ? 256 : 32)) * quant_block_bytes_of(fmt);
  float acc[QM_ROWS];
  for (int r = 0; r < QM_ROWS; ++r) acc[r] = 0.0f;
  for (long u = lid; u < nb * 4; u += QM_GROUP) {
    const long b = u >> 2;
    const int t = (int)(u & 3), j = quant_super_blocks(fmt) ? (int)(b & 7) : 0;
    GLOBAL const uchar* blk = quant_block_of(wrow, fmt, b);
    /* Elements 4t.. lie in the block's first half, 16 + 4t.. in its second (Q6_K's scales differ). */
    const float d0 = quant_scale(fmt, blk, j, 0), d1 = quant_scale(fmt, blk, j, 16);
    /* The minima of the two halves (Q2_K's differ). */
    const float m0 = quant_has_min(fmt) ? quant_min(fmt, blk, j, 0) : 0.0f;
    const float m1 = quant_has_min(fmt) ? quant_min(fmt, blk, j, 16) : 0.0f;
    float lv[8];
    for (int e = 0; e < 8; ++e) lv[e] = (float)quant_level(fmt, blk, j, 4 * t + (e < 4 ? e : e + 12));
    for (int r = 0; r < QM_ROWS; ++r) {
      if (r < rows) {
        GLOBAL const float* xr = x + (r0 + r) * k + b * 32 + 4 * t;
        float dot0 = 0.0f, dot1 = 0.0f, sx0 = 0.0f, sx1 = 0.0f;
        for (int e = 0; e < 4; ++e) {
          dot0 += lv[e] * xr[e];
          dot1 += lv[e + 4] * xr[e + 16];
          sx0 += xr[e];
          sx1 += xr[e + 16];
        }
        acc[r] += d0 * dot0 + d1 * dot1 + m0 * sx0 + m1 * sx1;
      }
    }
  }
  for (int r = 0; r < QM_ROWS; ++r) red[r * QM_GROUP + lid] = acc[r];
  BARRIER();
  for (long s = QM_GROUP / 2; s > 0; s >>= 1) {
    if (lid < s)
      for (int r = 0; r < QM_ROWS; ++r) red[r * QM_GROUP + lid] += red[r * QM_GROUP + lid + s];
    BARRIER();
  }
  if (lid < rows) out[(r0 + lid) * n + row] = red[lid * QM_GROUP];
}
