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
 * plus bias[col] (has_bias: QLinearConv's int32 bias), s, becomes out (odt): ELEM_I32 s; ELEM_F32 s * (sa * sb); ELEM_U8 / ELEM_I8
 * saturate(rint(s * ((sa * sb) / sy)) + zy), NaN giving zy. The division is
 * correctly rounded on CUDA, HIP and PoCL (see linear_quant.kern.h for OpenCL
 * GPU drivers). */

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

KERNEL void integer_matmul_tiles(GLOBAL const uchar* a, long aoff, int adt, GLOBAL const uchar* b, long boff, int bdt,
                                 long b_stride, GLOBAL const uchar* za, long zaoff, long za_n, GLOBAL const uchar* zb,
                                 long zboff, long zb_n, GLOBAL const float* sa, long saoff, long sa_n,
                                 GLOBAL const float* sb, long sboff, long sb_n, GLOBAL const float* sy, long syoff,
                                 GLOBAL const uchar* zy, long zyoff, int has_y, GLOBAL const int* bias, long biasoff,
                                 int has_bias, GLOBAL uchar* out, long ooff, int odt, long m, long n, long k) {
  LOCAL_ARRAY(int, as, IM_TK * IM_TILE);
  LOCAL_ARRAY(int, bs, IM_TK * IM_TILE);
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
  const float y_scale = has_y ? sy[syoff] : 1.0f;
  const float y_zero = has_y ? (float)im_level(zy, zyoff, odt) : 0.0f;
  const float lo = odt == ELEM_U8 ? 0.0f : -128.0f, hi = odt == ELEM_U8 ? 255.0f : 127.0f;
  for (int i = 0; i < 4; ++i) {
    const long r = r0 + ty * 4 + i;
    if (r >= m) continue;
    for (int j = 0; j < 4; ++j) {
      const long c = c0 + tx * 4 + j;
      if (c >= n) continue;
      const long o = ooff + (bi * m + r) * n + c;
      const int s = (int)(acc[i][j] + (has_bias ? (uint)bias[biasoff + c] : 0u));
      if (odt == ELEM_I32) {
        ((GLOBAL int*)out)[o] = s;
        continue;
      }
      const float mul = im_scale(sa, saoff, sa_n, r) * im_scale(sb, sboff, sb_n, c);
      if (odt == ELEM_F32) {
        ((GLOBAL float*)out)[o] = (float)s * mul;
        continue;
      }
      float q = rint((float)s * (mul / y_scale));
      q = q != q ? 0.0f : q;
      q = q + y_zero;
      q = q < lo ? lo : q > hi ? hi : q;
      out[o] = (uchar)(int)q; /* an I8 level's two's complement byte */
    }
  }
}
