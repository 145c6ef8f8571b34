/* batch_norm per channel of contiguous x [n, c, spatial] into out, as the CPU
 * backend's norm.cpp: y = x * scale + shift with scale = weight / sqrt(var +
 * eps) and shift = bias - mean * scale.
 *
 * batch_norm_*_apply (inference): mean and var are the running statistics;
 * one work-item per element over a grid-stride loop.
 * batch_norm_*_train: one BN_GROUP work-group per channel computes the batch
 * mean and biased variance over n * spatial in two passes (the sum about the
 * channel's first element, so data far from zero keeps its digits, then the
 * sum of squared deviations), updates running_mean and running_var with
 * momentum and the unbiased variance (has_running), then normalises.
 *
 * The scale and shift are applied with both roundings, never a fused
 * multiply-add: on data far from zero, mean * scale cancels against the bias
 * and an FMA's single rounding would not give the host's result.
 *
 * *_elems: f32, f16 and bf16 storage with f32 math; *_f64: double storage
 * and math (TORSH_FP64). The bodies are macros so the two cannot drift apart. */

/* Element j of channel c in [n, c, spatial] order: image j / spatial. */
#define BN_INDEX(meta, ch, j) \
  ((j) / (meta).spatial * (meta).c * (meta).spatial + (ch) * (meta).spatial + (j) % (meta).spatial)

#define BN_GROUP_SUM(NAME, T)                         \
  DEVICE_FN T NAME(LOCAL_PTR(T) red, T v, long lid) { \
    red[lid] = v;                                     \
    BARRIER();                                        \
    for (long s = BN_GROUP / 2; s > 0; s >>= 1) {     \
      if (lid < s) red[lid] += red[lid + s];          \
      BARRIER();                                      \
    }                                                 \
    const T total = red[0];                           \
    BARRIER();                                        \
    return total;                                     \
  }

#define BN_APPLY_BODY(T, LOAD, STORE, MUL_ADD)                                    \
  const long total = m.n * m.c * m.spatial;                                       \
  for (long i = GLOBAL_ID0(); i < total; i += GLOBAL_SIZE0()) {                   \
    const long c = i / m.spatial % m.c;                                           \
    const T mean = LOAD(rm, m.orm + c), var = LOAD(rv, m.orv + c);                \
    const T inv = (T)1 / sqrt(var + (T)m.eps);                                    \
    const T scale = m.has_weight ? inv * LOAD(w, m.ow + c) : inv;                 \
    const T shift = MUL_ADD(-mean, scale, m.has_bias ? LOAD(b, m.ob + c) : (T)0); \
    STORE(out, m.oo + i, MUL_ADD(LOAD(x, m.ox + i), scale, shift));               \
  }

#define BN_TRAIN_BODY(T, LOAD, STORE, MUL_ADD, GROUP_SUM)                                      \
  LOCAL_ARRAY(T, red, BN_GROUP);                                                               \
  const long c = GROUP_ID(0), lid = LOCAL_ID(0), count = m.n * m.spatial;                      \
  const T first = count > 0 ? LOAD(x, m.ox + c * m.spatial) : (T)0;                            \
  T s = (T)0;                                                                                  \
  for (long j = lid; j < count; j += BN_GROUP) s += LOAD(x, m.ox + BN_INDEX(m, c, j)) - first; \
  const T mean = first + GROUP_SUM(red, s, lid) / (T)count;                                    \
  T q = (T)0;                                                                                  \
  for (long j = lid; j < count; j += BN_GROUP) {                                               \
    const T d = LOAD(x, m.ox + BN_INDEX(m, c, j)) - mean;                                      \
    q += d * d;                                                                                \
  }                                                                                            \
  q = GROUP_SUM(red, q, lid);                                                                  \
  const T var = q / (T)count;                                                                  \
  if (m.has_running && lid == 0) {                                                             \
    const T mom = (T)m.momentum, unbiased = count > 1 ? q / (T)(count - 1) : var;              \
    STORE(rm, m.orm + c, ((T)1 - mom) * LOAD(rm, m.orm + c) + mom * mean);                     \
    STORE(rv, m.orv + c, ((T)1 - mom) * LOAD(rv, m.orv + c) + mom * unbiased);                 \
  }                                                                                            \
  const T inv = (T)1 / sqrt(var + (T)m.eps);                                                   \
  const T scale = m.has_weight ? inv * LOAD(w, m.ow + c) : inv;                                \
  const T shift = MUL_ADD(-mean, scale, m.has_bias ? LOAD(b, m.ob + c) : (T)0);                \
  for (long j = lid; j < count; j += BN_GROUP) {                                               \
    const long e = BN_INDEX(m, c, j);                                                          \
    STORE(out, m.oo + e, MUL_ADD(LOAD(x, m.ox + e), scale, shift));                            \
  }

#define BN_LOAD_ELEM(p, i) load_elem(p, i, m.dt)
#define BN_STORE_ELEM(p, i, v) store_elem(p, i, m.dt, v)

BN_GROUP_SUM(bn_group_sum_f32, float)

/* Absent tensors are never read: the host passes x in their place. */
KERNEL void batch_norm_elems_apply(GLOBAL const uchar* x, GLOBAL const uchar* w, GLOBAL const uchar* b,
                                   GLOBAL const uchar* rm, GLOBAL const uchar* rv, GLOBAL uchar* out,
                                   META(BatchNormMeta)
                                       m){BN_APPLY_BODY(float, BN_LOAD_ELEM, BN_STORE_ELEM, mul_add_unfused)}

KERNEL void batch_norm_elems_train(GLOBAL const uchar* x, GLOBAL const uchar* w, GLOBAL const uchar* b,
                                   GLOBAL uchar* rm, GLOBAL uchar* rv, GLOBAL uchar* out, META(BatchNormMeta) m){
    BN_TRAIN_BODY(float, BN_LOAD_ELEM, BN_STORE_ELEM, mul_add_unfused, bn_group_sum_f32)}
#if defined(TORSH_FP64)
#define BN_LOAD_F64(p, i) ((GLOBAL const double*)(p))[i]
#define BN_STORE_F64(p, i, v) (((GLOBAL double*)(p))[i] = (v))

BN_GROUP_SUM(bn_group_sum_f64, double)

    KERNEL void batch_norm_f64_apply(GLOBAL const uchar* x, GLOBAL const uchar* w, GLOBAL const uchar* b,
                                     GLOBAL const uchar* rm, GLOBAL const uchar* rv, GLOBAL uchar* out,
                                     META(BatchNormMeta)
                                         m){BN_APPLY_BODY(double, BN_LOAD_F64, BN_STORE_F64, mul_add_unfused_f64)}

KERNEL void batch_norm_f64_train(GLOBAL const uchar* x, GLOBAL const uchar* w, GLOBAL const uchar* b, GLOBAL uchar* rm,
                                 GLOBAL uchar* rv, GLOBAL uchar* out, META(BatchNormMeta) m) {
  BN_TRAIN_BODY(double, BN_LOAD_F64, BN_STORE_F64, mul_add_unfused_f64, bn_group_sum_f64)
}
#endif
