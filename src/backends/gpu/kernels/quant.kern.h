/* Block-quantized weights (torsh/core/quant.hpp: ggml's Q4_0, Q4_1, Q8_0, Q5_0
 * and Q5_1 layouts): rows dequantized, and qmatmul out[m, n] = x[m, k] @
 * dequantize(w)^T. Blocks are 18, 20, 34, 22 or 24 bytes, so no field is 4-byte
 * aligned: levels are read as bytes and the f16 scales assembled from two
 * bytes (dialect.h). */
/* QUANT_*, QM_GROUP and QM_ROWS: meta.h. */

DEVICE_FN long quant_block_bytes_of(int fmt) {
  return fmt == QUANT_Q4_0 ? 18 : fmt == QUANT_Q4_1 ? 20 : fmt == QUANT_Q5_0 ? 22 : fmt == QUANT_Q5_1 ? 24 : 34;
}

/* Formats with a minimum m (x = q d + m); the byte where a 4/5-bit format's nibbles start. */
DEVICE_FN int quant_has_min(int fmt) { return fmt == QUANT_Q4_1 || fmt == QUANT_Q5_1; }
DEVICE_FN int quant_nibbles_at(int fmt) {
  return fmt == QUANT_Q4_0 ? 2 : fmt == QUANT_Q4_1 ? 4 : fmt == QUANT_Q5_0 ? 6 : 8;
}

DEVICE_FN float quant_half(GLOBAL const uchar* p) { return half_bits_to_float((uint)p[0] | ((uint)p[1] << 8)); }

/* Level of element j (0..31) of a block: nibble byte j % 16 holds j < 16 in
 * its low nibble, j + 16 in its high one; Q5 adds bit j of the u32 before the
 * nibbles as 16 (Q4_0 centred on 8, Q5_0 on 16); Q8_0 a signed byte. */
DEVICE_FN int quant_level(int fmt, GLOBAL const uchar* blk, int j) {
  if (fmt == QUANT_Q8_0) return (int)(((uint)blk[2 + j] ^ 0x80u)) - 0x80;
  const int at = quant_nibbles_at(fmt);
  const uint b = blk[at + (j & 15)];
  int q = (int)(j < 16 ? (b & 15u) : (b >> 4));
  if (fmt == QUANT_Q5_0 || fmt == QUANT_Q5_1) q |= (int)(((uint)blk[at - 4 + (j >> 3)] >> (j & 7)) & 1u) << 4;
  return fmt == QUANT_Q4_0 ? q - 8 : fmt == QUANT_Q5_0 ? q - 16 : q;
}

/* Element i of the [m, cols] output: column i % cols of weight row ids[i / cols]
 * (or i / cols without ids), rounded exactly as the host's dequantize_row.
 * ids_width is 0 (no ids), 4 (i32) or 8 (i64: the op layer has checked every id
 * to lie in [0, rows), so the low little-endian word is the id). */
DEVICE_FN float dequant_at(GLOBAL const uchar* w, GLOBAL const int* ids, int ids_width, int fmt, long cols, long i) {
  const long r = i / cols, c = i - r * cols;
  const long row = ids_width == 0 ? r : ids_width == 4 ? (long)ids[r] : (long)ids[2 * r];
  const long bytes = quant_block_bytes_of(fmt);
  GLOBAL const uchar* blk = w + (row * (cols / 32) + c / 32) * bytes;
  const float q = (float)quant_level(fmt, blk, (int)(c & 31)), d = quant_half(blk);
  return quant_has_min(fmt) ? mul_add_unfused(q, d, quant_half(blk + 2)) : q * d;
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
 * (+ m), so the result is the f32 dot product with the dequantized row, up to
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
  const long nb = k / 32, bytes = quant_block_bytes_of(fmt);
  GLOBAL const uchar* wrow = w + row * nb * bytes;
  float acc[QM_ROWS];
  for (int r = 0; r < QM_ROWS; ++r) acc[r] = 0.0f;
  for (long u = lid; u < nb * 4; u += QM_GROUP) {
    const long b = u >> 2;
    const int t = (int)(u & 3);
    GLOBAL const uchar* blk = wrow + b * bytes;
    const float d = quant_half(blk), mn = quant_has_min(fmt) ? quant_half(blk + 2) : 0.0f;
    float lv[8];
    for (int e = 0; e < 8; ++e) lv[e] = (float)quant_level(fmt, blk, 4 * t + (e < 4 ? e : e + 12));
    for (int r = 0; r < QM_ROWS; ++r) {
      if (r < rows) {
        GLOBAL const float* xr = x + (r0 + r) * k + b * 32 + 4 * t;
        float dot = 0.0f, sx = 0.0f;
        for (int e = 0; e < 8; ++e) {
          const float xv = xr[e < 4 ? e : e + 12];
          dot += lv[e] * xv;
          sx += xv;
        }
        acc[r] += quant_has_min(fmt) ? d * dot + mn * sx : d * dot;
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
