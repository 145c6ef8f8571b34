/* conv2d (NCHW) as an implicit GEMM, the direct sum of the CPU backend's
 * conv2d.cpp: for each group g, out[pixel, channel] = sum over reduction index
 * (input channel c of the group, tap r, s) of columns[pixel, (c, r, s)] *
 * w[g * K/g + channel, (c, r, s)], where pixel runs over every image's output
 * pixels (n, p, q) and columns is the im2col matrix of x. That matrix is never
 * built: each CV_TK step gathers its CV_TK x CV_TM tile straight from x into
 * local memory (padding reads as zero) beside the CV_TK x CV_TN filter tile,
 * and every work-item keeps a CV_RM x CV_RN block of outputs in registers.
 * Work-groups: (pixel tiles, channel tiles, groups), each CV_WG x CV_WG.
 *
 * Pixels run along local x, so neighbouring work-items gather neighbouring
 * input pixels and store neighbouring outputs. Bias is added after the sum is
 * rounded to the storage dtype, as the CPU adds it to its GEMM's output.
 * Groups of at most CV_DIRECT_MAX_KG output channels take conv2d_direct_*.
 * *_elems: f32, f16 and bf16 storage with f32 accumulation; *_f64: doubles
 * (TORSH_FP64). The bodies are macros so the two cannot drift apart. */

#define CONV2D_BODY(T, LOAD, STORE, ROUND)                                                             \
  LOCAL_ARRAY(T, tile_x, CV_TK* CV_TM);                                                                \
  LOCAL_ARRAY(T, tile_w, CV_TK* CV_TN);                                                                \
  LOCAL_ARRAY(long, step_dh, CV_TK);                                                                   \
  LOCAL_ARRAY(long, step_dw, CV_TK);                                                                   \
  LOCAL_ARRAY(long, step_off, CV_TK);                                                                  \
  const int tx = (int)LOCAL_ID(0), ty = (int)LOCAL_ID(1), lid = ty * CV_WG + tx;                       \
  const long g = GROUP_ID(2), cg = m.c / m.groups, kg = m.k / m.groups;                                \
  const long taps = m.r * m.s, red_len = cg * taps, pq = m.p * m.q, pixels = m.n * pq;                 \
  const long row0 = GROUP_ID(0) * CV_TM, col0 = GROUP_ID(1) * CV_TN;                                   \
  /* The pixel whose column this item gathers: the same one at every step, as                          \
   * the work-group's size is a multiple of CV_TM. x_base < 0: past the end. */                        \
  const long x_row = row0 + lid % CV_TM;                                                               \
  long x_base = -1, h_first = 0, w_first = 0;                                                          \
  if (x_row < pixels) {                                                                                \
    const long img = x_row / pq, pix = x_row - img * pq, p = pix / m.q, q = pix - p * m.q;             \
    x_base = m.ox + (img * m.c + g * cg) * m.h * m.w;                                                  \
    h_first = p * m.stride_h - m.pad_h;                                                                \
    w_first = q * m.stride_w - m.pad_w;                                                                \
  }                                                                                                    \
  const long w_base = m.ow + g * kg * red_len;                                                         \
  T acc[CV_RM][CV_RN];                                                                                 \
  for (int i = 0; i < CV_RM; ++i)                                                                      \
    for (int j = 0; j < CV_RN; ++j) acc[i][j] = (T)0;                                                  \
  for (long k0 = 0; k0 < red_len; k0 += CV_TK) {                                                       \
    /* Where each of the step's reduction indices reads, relative to a pixel's                         \
     * first tap: decoded once per step here rather than once per gathered                             \
     * element (64-bit division is slow everywhere). Past the end: a row offset                        \
     * no pixel can reach, so the bounds test below rejects it. */                                     \
    if (lid < CV_TK) {                                                                                 \
      const long red = k0 + lid, c = red / taps, tap = red - c * taps, r = tap / m.s;                  \
      step_dh[lid] = red < red_len ? r * m.dil_h : -CONV2D_UNREACHABLE;                                \
      step_dw[lid] = (tap - r * m.s) * m.dil_w;                                                        \
      step_off[lid] = c * m.h * m.w;                                                                   \
    }                                                                                                  \
    BARRIER();                                                                                         \
    for (int e = lid; e < CV_TK * CV_TM; e += CV_WG * CV_WG) {                                         \
      const int kk = e / CV_TM;                                                                        \
      const long h = h_first + step_dh[kk], w = w_first + step_dw[kk];                                 \
      const int inside = x_base >= 0 && h >= 0 && h < m.h && w >= 0 && w < m.w;                        \
      tile_x[e] = inside ? LOAD(x, x_base + step_off[kk] + h * m.w + w) : (T)0;                        \
    }                                                                                                  \
    /* Filter rows are contiguous along the reduction: kk is the fast index. */                        \
    for (int e = lid; e < CV_TK * CV_TN; e += CV_WG * CV_WG) {                                         \
      const int kk = e % CV_TK, col = e / CV_TK;                                                       \
      const long red = k0 + kk;                                                                        \
      tile_w[kk * CV_TN + col] =                                                                       \
          (col0 + col < kg && red < red_len) ? LOAD(wt, w_base + (col0 + col) * red_len + red) : (T)0; \
    }                                                                                                  \
    BARRIER();                                                                                         \
    for (int kk = 0; kk < CV_TK; ++kk) {                                                               \
      T a[CV_RM], b[CV_RN];                                                                            \
      for (int i = 0; i < CV_RM; ++i) a[i] = tile_x[kk * CV_TM + tx + CV_WG * i];                      \
      for (int j = 0; j < CV_RN; ++j) b[j] = tile_w[kk * CV_TN + ty + CV_WG * j];                      \
      for (int i = 0; i < CV_RM; ++i)                                                                  \
        for (int j = 0; j < CV_RN; ++j) acc[i][j] += a[i] * b[j];                                      \
    }                                                                                                  \
    BARRIER();                                                                                         \
  }                                                                                                    \
  for (int i = 0; i < CV_RM; ++i) {                                                                    \
    const long row = row0 + tx + CV_WG * i;                                                            \
    if (row >= pixels) continue;                                                                       \
    const long img = row / pq, pix = row - img * pq;                                                   \
    for (int j = 0; j < CV_RN; ++j) {                                                                  \
      const long col = col0 + ty + CV_WG * j;                                                          \
      if (col >= kg) continue;                                                                         \
      const long channel = g * kg + col;                                                               \
      T v = acc[i][j];                                                                                 \
      if (m.has_bias) v = ROUND(v) + LOAD(bias, m.ob + channel);                                       \
      STORE(out, m.oo + (img * m.k + channel) * pq + pix, v);                                          \
    }                                                                                                  \
  }

/* Few output channels per group (depthwise, say): one work-item per output
 * element (grid-stride), summing its group's channels and taps in order
 * straight from global memory. */
#define CONV2D_DIRECT_BODY(T, LOAD, STORE, ROUND)                                                          \
  const long cg = m.c / m.groups, kg = m.k / m.groups, pq = m.p * m.q, total = m.n * m.k * pq;             \
  for (long i = GLOBAL_ID0(); i < total; i += GLOBAL_SIZE0()) {                                            \
    const long plane = i / pq, pix = i - plane * pq, img = plane / m.k, channel = plane - img * m.k;       \
    const long p = pix / m.q, q = pix - p * m.q, g = channel / kg;                                         \
    const long h_first = p * m.stride_h - m.pad_h, w_first = q * m.stride_w - m.pad_w;                     \
    const long x_base = m.ox + (img * m.c + g * cg) * m.h * m.w, w_base = m.ow + channel * cg * m.r * m.s; \
    T sum = (T)0;                                                                                          \
    for (long c = 0; c < cg; ++c)                                                                          \
      for (long r = 0; r < m.r; ++r) {                                                                     \
        const long h = h_first + r * m.dil_h;                                                              \
        if (h < 0 || h >= m.h) continue;                                                                   \
        for (long s = 0; s < m.s; ++s) {                                                                   \
          const long w = w_first + s * m.dil_w;                                                            \
          if (w < 0 || w >= m.w) continue;                                                                 \
          sum += LOAD(x, x_base + (c * m.h + h) * m.w + w) * LOAD(wt, w_base + (c * m.r + r) * m.s + s);   \
        }                                                                                                  \
      }                                                                                                    \
    if (m.has_bias) sum = ROUND(sum) + LOAD(bias, m.ob + channel);                                         \
    STORE(out, m.oo + i, sum);                                                                             \
  }

/* Larger than any h_first (|h_first| is at most the padding or the image). */
#define CONV2D_UNREACHABLE ((long)1 << 62)

/* v rounded to the storage dtype and back. */
DEVICE_FN float conv_round_elem(float v, int dt) {
  if (dt == ELEM_F16) return half_bits_to_float(float_to_half_bits(v));
  if (dt == ELEM_BF16) return AS_FLOAT(float_to_bf16_bits(v) << 16);
  return v;
}

#define CONV2D_LOAD_ELEM(p, i) load_elem(p, i, m.dt)
#define CONV2D_STORE_ELEM(p, i, v) store_elem(p, i, m.dt, v)
#define CONV2D_ROUND_ELEM(v) conv_round_elem(v, m.dt)

/* bias is read only when has_bias (the host passes x in its place otherwise). */
KERNEL void conv2d_elems(GLOBAL const uchar* x, GLOBAL const uchar* wt, GLOBAL const uchar* bias, GLOBAL uchar* out,
                         META(Conv2dMeta) m){CONV2D_BODY(float, CONV2D_LOAD_ELEM, CONV2D_STORE_ELEM, CONV2D_ROUND_ELEM)}

KERNEL
    void conv2d_direct_elems(GLOBAL const uchar* x, GLOBAL const uchar* wt, GLOBAL const uchar* bias, GLOBAL uchar* out,
                             META(Conv2dMeta)
                                 m){CONV2D_DIRECT_BODY(float, CONV2D_LOAD_ELEM, CONV2D_STORE_ELEM, CONV2D_ROUND_ELEM)}
#if defined(TORSH_FP64)
#define CONV2D_LOAD_F64(p, i) ((GLOBAL const double*)(p))[i]
#define CONV2D_STORE_F64(p, i, v) (((GLOBAL double*)(p))[i] = (v))
#define CONV2D_ROUND_F64(v) (v)

KERNEL void conv2d_f64(GLOBAL const uchar* x, GLOBAL const uchar* wt, GLOBAL const uchar* bias, GLOBAL uchar* out,
                       META(Conv2dMeta) m){CONV2D_BODY(double, CONV2D_LOAD_F64, CONV2D_STORE_F64, CONV2D_ROUND_F64)}

KERNEL void conv2d_direct_f64(GLOBAL const uchar* x, GLOBAL const uchar* wt, GLOBAL const uchar* bias,
                              GLOBAL uchar* out, META(Conv2dMeta) m) {
  CONV2D_DIRECT_BODY(double, CONV2D_LOAD_F64, CONV2D_STORE_F64, CONV2D_ROUND_F64)
}
#endif
