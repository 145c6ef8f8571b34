/* Register-blocked batched GEMM: out[b] = alpha * a[b] @ b[b] + beta * out[b].
 * dims: 0 -> columns, 1 -> rows, 2 -> batch. Strides in elements, {batch,
 * row, col} per operand, any values (transposes are strides, broadcast batches
 * stride 0). beta == 0 never reads out. MatmulMeta and the MM_* variants: meta.h.
 *
 * A work-group computes a BM x BN tile of C with (BN/TN) x (BM/TM) work-items,
 * each holding a TM x TN block of accumulators in registers. The K loop stages
 * a BM x BK tile of A (stored transposed, so a step reads one column) and a
 * BK x BN tile of B in local memory; loads past the edges read zero and stores
 * past them are skipped, so any m, n, k works (k == 0 writes beta * out, or
 * zeros). Work-item (tx, ty) owns rows ty + i*(BM/TM) and columns tx +
 * j*(BN/TN): neighbouring work-items touch neighbouring columns, so their
 * loads and stores coalesce and their local reads are conflict-free. */

/* f32 math on f32, f16 or bf16 storage (dt: ELEM_*); the tile sizes are
 * compile-time constants at every call, so the loops unroll fully and acc
 * stays in registers (and CPU OpenCL compilers such as PoCL's, which
 * vectorise across work-items, see straight-line code). BM * BK and BK * BN
 * are multiples of the work-group size, so every work-item stages the same
 * number of elements. */
DEVICE_FN void mm_blocked(GLOBAL const uchar* a, GLOBAL const uchar* b, GLOBAL uchar* out, const MatmulMeta* g,
                          LOCAL_PTR(float) as, LOCAL_PTR(float) bs, const int dt, const int BM, const int BN,
                          const int BK, const int TM, const int TN) {
  const int TX = BN / TN, TY = BM / TM, T = TX * TY;
  const int tx = (int)LOCAL_ID(0), ty = (int)LOCAL_ID(1), tid = ty * TX + tx;
  const long row0 = GROUP_ID(1) * BM, col0 = GROUP_ID(0) * BN, bi = GROUP_ID(2);
  const long abase = g->oa + bi * g->sa[0], bbase = g->ob + bi * g->sb[0];
  const long sar = g->sa[1], sac = g->sa[2], sbr = g->sb[1], sbc = g->sb[2];
  const int dense_rows = sac == 1 && sbc == 1;
  float acc[MM_MAX_TM * MM_MAX_TN];
#pragma unroll
  for (int i = 0; i < TM * TN; ++i) acc[i] = 0.0f;
  for (long t = 0; t < g->k; t += BK) {
    /* Consecutive work-items take consecutive k of A and columns of B: the
     * inner dimension of the usual row-major operands. */
    if (dense_rows && row0 + BM <= g->m && col0 + BN <= g->n && t + BK <= g->k) {
      /* Inside every edge with unit column strides: no bounds checks, and
       * neighbouring work-items load neighbouring elements. */
#pragma unroll
      for (int it = 0; it < BM * BK / T; ++it) {
        const int l = tid + it * T, r = l / BK, c = l - r * BK;
        as[c * BM + r] = load_elem(a, abase + (row0 + r) * sar + t + c, dt);
      }
#pragma unroll
      for (int it = 0; it < BK * BN / T; ++it) {
        const int l = tid + it * T, r = l / BN, c = l - r * BN;
        bs[r * BN + c] = load_elem(b, bbase + (t + r) * sbr + col0 + c, dt);
      }
    } else {
#pragma unroll
      for (int it = 0; it < BM * BK / T; ++it) {
        const int l = tid + it * T, r = l / BK, c = l - r * BK;
        const long gr = row0 + r, gc = t + c;
        as[c * BM + r] = (gr < g->m && gc < g->k) ? load_elem(a, abase + gr * sar + gc * sac, dt) : 0.0f;
      }
#pragma unroll
      for (int it = 0; it < BK * BN / T; ++it) {
        const int l = tid + it * T, r = l / BN, c = l - r * BN;
        const long gr = t + r, gc = col0 + c;
        bs[r * BN + c] = (gr < g->k && gc < g->n) ? load_elem(b, bbase + gr * sbr + gc * sbc, dt) : 0.0f;
      }
    }
    BARRIER();
#pragma unroll
    for (int p = 0; p < BK; ++p) {
      float ra[MM_MAX_TM], rb[MM_MAX_TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) ra[i] = as[p * BM + ty + i * TY];
#pragma unroll
      for (int j = 0; j < TN; ++j) rb[j] = bs[p * BN + tx + j * TX];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i * TN + j] += ra[i] * rb[j];
    }
    BARRIER();
  }
  const long obase = g->oo + bi * g->so[0];
  for (int i = 0; i < TM; ++i) {
    const long r = row0 + ty + i * TY;
    if (r >= g->m) break;
    for (int j = 0; j < TN; ++j) {
      const long c = col0 + tx + j * TX;
      if (c >= g->n) break;
      const long o = obase + r * g->so[1] + c * g->so[2];
      const float v = g->alpha * acc[i * TN + j];
      store_elem(out, o, dt, g->beta != 0.0f ? v + g->beta * load_elem((GLOBAL const uchar*)out, o, dt) : v);
    }
  }
}

/* One variant: matmul_<name>_f32 (storage f32, known at compile time) and
 * matmul_<name>_h16 (f16 or bf16, g.dt). */
#define MM_VARIANT(NAME, BM, BN, BK, TM, TN)                                                       \
  KERNEL void matmul_##NAME##_f32(GLOBAL const uchar* a, GLOBAL const uchar* b, GLOBAL uchar* out, \
                                  META(MatmulMeta) g) {                                            \
    LOCAL_ARRAY(float, as, (BK) * (BM));                                                           \
    LOCAL_ARRAY(float, bs, (BK) * (BN));                                                           \
    mm_blocked(a, b, out, &g, as, bs, ELEM_F32, BM, BN, BK, TM, TN);                               \
  }                                                                                                \
  KERNEL void matmul_##NAME##_h16(GLOBAL const uchar* a, GLOBAL const uchar* b, GLOBAL uchar* out, \
                                  META(MatmulMeta) g) {                                            \
    LOCAL_ARRAY(float, as, (BK) * (BM));                                                           \
    LOCAL_ARRAY(float, bs, (BK) * (BN));                                                           \
    mm_blocked(a, b, out, &g, as, bs, g.dt, BM, BN, BK, TM, TN);                                   \
  }

/* The variants the host chooses from (gpu/matmul_variants.hpp lists the same
 * names and shapes): 16 x 16 tiles of one output each, 4 x 4, 8 x 4 and 8 x 8
 * blocks per work-item (64 to 256 work-items), and 8 x 128 / 128 x 8 tiles
 * for outputs of a few rows or columns (a vector times a matrix). */
MM_VARIANT(t16x16_r1x1, 16, 16, 16, 1, 1)
MM_VARIANT(t32x32_r4x4, 32, 32, 16, 4, 4)
MM_VARIANT(t64x64_r4x4, 64, 64, 16, 4, 4)
MM_VARIANT(t64x64_r8x4, 64, 64, 16, 8, 4)
MM_VARIANT(t128x64_r8x4, 128, 64, 8, 8, 4)
MM_VARIANT(t128x128_r8x8, 128, 128, 8, 8, 8)
MM_VARIANT(t8x128_r1x8, 8, 128, 16, 1, 8)
MM_VARIANT(t128x8_r8x1, 128, 8, 16, 8, 1)

#if defined(TORSH_FP64)
/* f64: the same scheme with double tiles and accumulators, one variant
 * (32 x 32 tiles, 2 x 2 per work-item); alpha and beta are the f32 the op
 * takes, as on the CPU. */
KERNEL void matmul_f64_t32x32_r2x2(GLOBAL const double* a, GLOBAL const double* b, GLOBAL double* out,
                                   META(MatmulMeta) g) {
  LOCAL_ARRAY(double, as, 16 * 32);
  LOCAL_ARRAY(double, bs, 16 * 32);
  const int tx = (int)LOCAL_ID(0), ty = (int)LOCAL_ID(1), tid = ty * 16 + tx;
  const long row0 = GROUP_ID(1) * 32, col0 = GROUP_ID(0) * 32, bi = GROUP_ID(2);
  GLOBAL const double* A = a + g.oa + bi * g.sa[0];
  GLOBAL const double* B = b + g.ob + bi * g.sb[0];
  double acc[4] = {0.0, 0.0, 0.0, 0.0};
  for (long t = 0; t < g.k; t += 16) {
    for (int l = tid; l < 32 * 16; l += 256) {
      const int r = l / 16, c = l - r * 16;
      const long gr = row0 + r, gc = t + c;
      as[c * 32 + r] = (gr < g.m && gc < g.k) ? A[gr * g.sa[1] + gc * g.sa[2]] : 0.0;
    }
    for (int l = tid; l < 16 * 32; l += 256) {
      const int r = l / 32, c = l - r * 32;
      const long gr = t + r, gc = col0 + c;
      bs[r * 32 + c] = (gr < g.k && gc < g.n) ? B[gr * g.sb[1] + gc * g.sb[2]] : 0.0;
    }
    BARRIER();
    for (int p = 0; p < 16; ++p) {
      const double a0 = as[p * 32 + ty], a1 = as[p * 32 + ty + 16];
      const double b0 = bs[p * 32 + tx], b1 = bs[p * 32 + tx + 16];
      /* Products rounded apart, as the CPU's f64 loop: a fused multiply-add
       * moves sums of cancelling terms past what the CPU comparison allows. */
      acc[0] = mul_add_unfused_f64(a0, b0, acc[0]);
      acc[1] = mul_add_unfused_f64(a0, b1, acc[1]);
      acc[2] = mul_add_unfused_f64(a1, b0, acc[2]);
      acc[3] = mul_add_unfused_f64(a1, b1, acc[3]);
    }
    BARRIER();
  }
  for (int i = 0; i < 2; ++i) {
    const long r = row0 + ty + i * 16;
    for (int j = 0; j < 2; ++j) {
      const long c = col0 + tx + j * 16;
      if (r < g.m && c < g.n) {
        GLOBAL double* C = out + g.oo + bi * g.so[0] + r * g.so[1] + c * g.so[2];
        const double v = (double)g.alpha * acc[i * 2 + j];
        *C = g.beta != 0.0f ? mul_add_unfused_f64((double)g.beta, *C, v) : v;
      }
    }
  }
}
#endif
