/* Max and average pooling of contiguous x [planes, h, w] into out [planes, p,
 * q], as the CPU backend's pool2d.cpp pools: one work-item per output element
 * (grid-stride), the window walked row by row. Max starts at -inf (padding
 * never wins; an all-padding window gives -inf) and keeps the first NaN it
 * meets; average sums in the window's order and divides by the full window
 * (count_include_pad) or by its in-image part. f32, f16 and bf16 storage with
 * f32 math (pool2d_elems); f64 with double math (pool2d_f64, TORSH_FP64). The
 * body is a macro so the two kernels cannot drift apart. */

#define POOL2D_BODY(T, LOAD, STORE)                                                    \
  const long pq = m.p * m.q, total = m.planes * pq;                                    \
  for (long i = GLOBAL_ID0(); i < total; i += GLOBAL_SIZE0()) {                        \
    const long plane = i / pq, pix = i - plane * pq, p = pix / m.q, q = pix - p * m.q; \
    const long h0 = p * m.stride_h - m.pad_h, w0 = q * m.stride_w - m.pad_w;           \
    const long base = m.ox + plane * m.h * m.w;                                        \
    T best = -(T)INFINITY, sum = (T)0;                                                 \
    long count = 0;                                                                    \
    for (long r = 0; r < m.kernel_h; ++r) {                                            \
      const long h = h0 + r;                                                           \
      if (h < 0 || h >= m.h) continue;                                                 \
      for (long s = 0; s < m.kernel_w; ++s) {                                          \
        const long w = w0 + s;                                                         \
        if (w < 0 || w >= m.w) continue;                                               \
        const T v = LOAD(x, base + h * m.w + w);                                       \
        if (v > best || v != v) best = v;                                              \
        sum += v;                                                                      \
        ++count;                                                                       \
      }                                                                                \
    }                                                                                  \
    const T div = (T)(m.count_include_pad ? m.kernel_h * m.kernel_w : count);          \
    STORE(out, m.oo + i, m.is_max ? best : sum / div);                                 \
  }

#define POOL2D_LOAD_ELEM(p, i) load_elem(p, i, m.dt)
#define POOL2D_STORE_ELEM(p, i, v) store_elem(p, i, m.dt, v)

KERNEL void pool2d_elems(GLOBAL const uchar* x, GLOBAL uchar* out,
                         META(Pool2dMeta) m){POOL2D_BODY(float, POOL2D_LOAD_ELEM, POOL2D_STORE_ELEM)}
#if defined(TORSH_FP64)
#define POOL2D_LOAD_F64(p, i) ((GLOBAL const double*)(p))[i]
#define POOL2D_STORE_F64(p, i, v) (((GLOBAL double*)(p))[i] = (v))

KERNEL void pool2d_f64(GLOBAL const uchar* x, GLOBAL uchar* out, META(Pool2dMeta) m) {
  POOL2D_BODY(double, POOL2D_LOAD_F64, POOL2D_STORE_F64)
}
#endif
