/* int8 matrix products with ONNX's MatMulInteger / QLinearMatMul semantics,
 * as the CPU backend's igemm (rt::IntegerMatmulArgs): a [batch, m, k] and b
 * ([batch or 1], k, n), U8 or I8 (adt, bdt), contiguous from their element
 * offsets; b_stride is b's elements per batch (0: one b shared).
 *
 * Work-groups of IM_TX x IM_TY items compute IM_TILE x IM_TILE outputs (4 x 4
 * per item) of batch GROUP_ID(2). Tiles of a and b pass through local memory
 * as int with their zero points already subtracted (padding is 0 after the
 * subtraction), so the sums need no correction; they accumulate as uint,
 * which wraps as ONNX's int32 (signed overflow is undefined in C).
 *
 * Zero points (za_n, zb_n: 0 absent, 1 per tensor, m / n per row / column)
 * have their operand's dtype; scales are f32 (sa_n, sb_n: 0 absent). The sum
 * plus bias[col] (has_bias: QLinearConv's int32 bias), s, becomes out (odt): ELEM_I32 s; ELEM_F32 s * (sa * sb);
 * ELEM_U8 / ELEM_I8 saturate(rint(s * ((sa * sb) / sy)) + zy), NaN giving zy. The division is correctly rounded on
 * CUDA, HIP and PoCL (see linear_quant.kern.h for OpenCL GPU drivers). */

#define IM_TILE 64
#define IM_TK 16
#define IM_TX 16
#define IM_TY 16

DEVICE_FN int im_level(GLOBAL const uchar* p, long i, int dt) { return (int)load_int(p, i, dt); }

DEVICE_FN int im_zero(GLOBAL const uchar* z, long zoff, long zn, long i, int dt) {
  return zn == 0 ? 0 : im_level(z, zoff + (zn == 1 ? 0 : i), dt);
}

DEVICE_FN float im_scale(GLOBAL const float* s, long soff, long sn, long i) {
  return sn == 0 ? 1.0f : s[soff + (sn == 1 ? 0 : i)];
}

/* Output o (row r, column c) from the product's wrapped sum: plus bias[c],
 * then as int32, scaled to f32 or requantized (see above). */
DEVICE_FN void im_store(GLOBAL uchar* out, long o, int odt, uint sum, long r, long c, GLOBAL const float* sa,
                        long saoff, long sa_n, GLOBAL const float* sb, long sboff, long sb_n, GLOBAL const float* sy,
                        long syoff, GLOBAL const uchar* zy, long zyoff, int has_y, GLOBAL const int* bias, long biasoff,
                        int has_bias) {
  const int s = (int)(sum + (has_bias ? (uint)bias[biasoff + c] : 0u));
  if (odt == ELEM_I32) {
    ((GLOBAL int*)out)[o] = s;
    return;
  }
  const float mul = im_scale(sa, saoff, sa_n, r) * im_scale(sb, sboff, sb_n, c);
  if (odt == ELEM_F32) {
    ((GLOBAL float*)out)[o] = (float)s * mul;
    return;
  }
  const float y_scale = has_y ? sy[syoff] : 1.0f;
  const float y_zero = has_y ? (float)im_level(zy, zyoff, odt) : 0.0f;
  const float lo = odt == ELEM_U8 ? 0.0f : -128.0f, hi = odt == ELEM_U8 ? 255.0f : 127.0f;
  float q = rint((float)s * (mul / y_scale));
  q = q != q ? 0.0f : q;
  q = q + y_zero;
  q = q < lo ? lo : q > hi ? hi : q;
  out[o] = (uchar)(int)q; /* an I8 level's two's complement byte */
}

KERNEL void integer_matmul_tiles(GLOBAL const uchar* a, long aoff, int adt, GLOBAL const uchar* b, long boff, int bdt,
                                 long b_stride, GLOBAL const uchar* za, long zaoff, long za_n, GLOBAL const uchar* zb,
                                 long zboff, long zb_n, GLOBAL const float* sa, long saoff, long sa_n,
                                 GLOBAL const float* sb, long sboff, long sb_n, GLOBAL const float* sy, long syoff,
                                 GLOBAL const uchar* zy, long zyoff, int has_y, GLOBAL const int* bias, long biasoff,
                                 int has_bias, GLOBAL uchar* out, long ooff, int odt, long m, long n, long k) {
  LOCAL_ARRAY(int, as, IM_TK* IM_TILE);
  LOCAL_ARRAY(int, bs, IM_TK* IM_TILE);
  const long tx = LOCAL_ID(0), ty = LOCAL_ID(1), lid = ty * IM_TX + tx;
  const long c0 = GROUP_ID(0) * IM_TILE, r0 = GROUP_ID(1) * IM_TILE, bi = GROUP_ID(2);
  const long abase = aoff + bi * m * k, bbase = boff + bi * b_stride;
  uint acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = 0u;
  for (long t = 0; t < k; t += IM_TK) {
    for (long e = lid; e < IM_TK * IM_TILE; e += IM_TX * IM_TY) {
      /* a: rows of the tile across items (e % 64), k down (e / 64): each row's
       * 16 k values are 16 neighbouring bytes, read by items of one warp. */
      const long kk = e % IM_TK, row = e / IM_TK;
      const long gr = r0 + row, gk = t + kk;
      as[kk * IM_TILE + row] =
          gr < m && gk < k ? im_level(a, abase + gr * k + gk, adt) - im_zero(za, zaoff, za_n, gr, adt) : 0;
      const long bk = e / IM_TILE, col = e % IM_TILE;
      const long gc = c0 + col, gbk = t + bk;
      bs[bk * IM_TILE + col] =
          gc < n && gbk < k ? im_level(b, bbase + gbk * n + gc, bdt) - im_zero(zb, zboff, zb_n, gc, bdt) : 0;
    }
    BARRIER();
    for (int kk = 0; kk < IM_TK; ++kk) {
      int av[4], bv[4];
      for (int i = 0; i < 4; ++i) av[i] = as[kk * IM_TILE + ty * 4 + i];
      for (int j = 0; j < 4; ++j) bv[j] = bs[kk * IM_TILE + tx * 4 + j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += (uint)(av[i] * bv[j]); /* |product| <= 255 * 255 */
    }
    BARRIER();
  }
  for (int i = 0; i < 4; ++i) {
    const long r = r0 + ty * 4 + i;
    if (r >= m) continue;
    for (int j = 0; j < 4; ++j) {
      const long c = c0 + tx * 4 + j;
      if (c >= n) continue;
      im_store(out, ooff + (bi * m + r) * n + c, odt, acc[i][j], r, c, sa, saoff, sa_n, sb, sboff, sb_n, sy, syoff, zy,
               zyoff, has_y, bias, biasoff, has_bias);
    }
  }
}

/* The tensor-core route (CUDA, cublas_int8.cpp): the product runs on signed
 * levels, a u8 level v standing as v - 128 with its zero point moved by the
 * same 128, so that sum_k (a - za)(b - zb) = P - zb rowsum(a) - za colsum(b)
 * + k za zb, with P the s8 x s8 product, modulo 2^32 as above. */

/* dst[bi][i][kk] (I8 levels, rows ldk long, zero past k) = src's element
 * (i, kk) of batch bi, at soff + bi * s_batch + i * s_i + kk * s_k, minus 128
 * when sdt is U8. Transposes through a 32 x 32 tile so that both the reads
 * (along whichever of i and kk has unit stride) and the writes coalesce.
 * Work-groups of 32 x 8 items; groups (count / 32, ldk / 32, batches). */
KERNEL void integer_matmul_pack(GLOBAL const uchar* src, long soff, int sdt, long s_batch, long s_i, long s_k,
                                GLOBAL uchar* dst, long count, long k, long ldk) {
  LOCAL_ARRAY(int, tile, 32 * 33);
  const long tx = LOCAL_ID(0), ty = LOCAL_ID(1);
  const long i0 = GROUP_ID(0) * 32, k0 = GROUP_ID(1) * 32, bi = GROUP_ID(2);
  const int shift = sdt == ELEM_U8 ? 128 : 0;
  const int along_k = s_k == 1;
  for (long y = ty; y < 32; y += 8) {
    /* (ii, kk) within the tile: tx runs along the unit-stride index. */
    const long ii = along_k ? y : tx, kk = along_k ? tx : y;
    const long i = i0 + ii, kq = k0 + kk;
    tile[ii * 33 + kk] = i < count && kq < k ? im_level(src, soff + bi * s_batch + i * s_i + kq * s_k, sdt) - shift : 0;
  }
  BARRIER();
  for (long y = ty; y < 32; y += 8) {
    const long i = i0 + y, kq = k0 + tx;
    if (i < count && kq < ldk) dst[(bi * count + i) * ldk + kq] = (uchar)tile[y * 33 + tx];
  }
}

/* A zero point as the s8 product sees it (the U8 shift applied), for a
 * per-tensor or absent one; per-row / per-column ones give 1 (some may be
 * nonzero). */
DEVICE_FN int im_shifted_scalar(GLOBAL const uchar* z, long zoff, long zn, int dt) {
  if (zn > 1) return 1;
  return im_zero(z, zoff, zn, 0, dt) - (dt == ELEM_U8 ? 128 : 0);
}

/* The sums of rows of len I8 levels: work-group g (of 256 items) sums row g
 * of p0 (rows ld0 apart) into s0[g] for g < rows0, else row g - rows0 of p1
 * into s1 (so one launch serves both operands). p0's sums are only read
 * where b's shifted zero point (zb...) is nonzero, p1's where a's is (za...):
 * a group whose factor is 0 (u8 with zero point 128, s8 with 0) skips,
 * unless `always` (a prepared weight's sums, kept for later calls). */
KERNEL void integer_matmul_row_sums(GLOBAL const uchar* p0, long ld0, long rows0, GLOBAL int* s0,
                                    GLOBAL const uchar* p1, long ld1, GLOBAL int* s1, long len, GLOBAL const uchar* za,
                                    long zaoff, long za_n, int adt, GLOBAL const uchar* zb, long zboff, long zb_n,
                                    int bdt, int always) {
  LOCAL_ARRAY(uint, part, 256);
  const long t = LOCAL_ID(0), g = GROUP_ID(0);
  const int first = g < rows0;
  if (!always && (first ? im_shifted_scalar(zb, zboff, zb_n, bdt) : im_shifted_scalar(za, zaoff, za_n, adt)) == 0)
    return;
  GLOBAL const uchar* p = first ? p0 : p1;
  const long row = first ? g : g - rows0, ld = first ? ld0 : ld1;
  uint acc = 0u;
  for (long i = t; i < len; i += 256) acc += (uint)(int)load_int(p, row * ld + i, ELEM_I8);
  part[t] = acc;
  BARRIER();
  for (long h = 128; h > 0; h /= 2) {
    if (t < h) part[t] += part[t + h];
    BARRIER();
  }
  if (t == 0) (first ? s0 : s1)[row] = (int)part[0];
}

/* dst[i] = src[i] ^ 0x80808080 for `words` 32-bit words: u8 levels as the
 * s8 levels v - 128, four at a time (a's copy when its rows need no padding). */
KERNEL void integer_matmul_flip(GLOBAL const uint* src, GLOBAL uint* dst, long words) {
  for (long i = GLOBAL_ID0(); i < words; i += GLOBAL_SIZE0()) dst[i] = src[i] ^ 0x80808080u;
}

/* out (odt) from P (int32 [batch, m, n]; may be out itself when odt is
 * ELEM_I32): the zero-point terms, then im_store. za / zb are the zero
 * points as given (za_n, zb_n as above), shifted by 128 where their operand
 * was U8 (adt, bdt); rowsum [batch * m] and colsum [batch or 1, n] are the
 * shifted levels' sums, read only where the other side's zero point is not
 * 0 (in_place: prod is out). One item per column (dimension 0), looping over
 * the rows of its work-group's share (dimension 1), so a column's terms are
 * loaded once. */
KERNEL void integer_matmul_finish(GLOBAL const int* prod, GLOBAL const int* rowsum, GLOBAL const int* colsum,
                                  long colsum_stride, int adt, int bdt, GLOBAL const uchar* za, long zaoff, long za_n,
                                  GLOBAL const uchar* zb, long zboff, long zb_n, GLOBAL const float* sa, long saoff,
                                  long sa_n, GLOBAL const float* sb, long sboff, long sb_n, GLOBAL const float* sy,
                                  long syoff, GLOBAL const uchar* zy, long zyoff, int has_y, GLOBAL const int* bias,
                                  long biasoff, int has_bias, GLOBAL uchar* out, long ooff, int odt, long batch, long m,
                                  long n, long k, int in_place) {
  const long c = GROUP_ID(0) * LOCAL_SIZE(0) + LOCAL_ID(0);
  if (c >= n) return;
  const int zc = im_zero(zb, zboff, zb_n, c, bdt) - (bdt == ELEM_U8 ? 128 : 0);
  const int za_scalar = im_shifted_scalar(za, zaoff, za_n, adt);
  /* In place with int32 out and no bias, a column whose zero point and a's
   * (per tensor) both shift to 0 is already final: neither read nor written. */
  if (in_place && odt == ELEM_I32 && !has_bias && zc == 0 && za_scalar == 0) return;
  const long rows = batch * m;
  for (long row = GROUP_ID(1); row < rows; row += NUM_GROUPS(1)) {
    const long r = row % m, bi = row / m;
    const int zr = za_n > 1 ? im_zero(za, zaoff, za_n, r, adt) - (adt == ELEM_U8 ? 128 : 0) : za_scalar;
    const long e = row * n + c;
    uint s = (uint)prod[e];
    if (zc != 0) s -= (uint)zc * (uint)rowsum[row];
    if (zr != 0) s -= (uint)zr * (uint)colsum[bi * colsum_stride + c];
    s += (uint)k * (uint)zr * (uint)zc;
    im_store(out, ooff + e, odt, s, r, c, sa, saoff, sa_n, sb, sboff, sb_n, sy, syoff, zy, zyoff, has_y, bias, biasoff,
             has_bias);
  }
}
