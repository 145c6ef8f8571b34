/* Softmax / log-softmax over the middle axis of contiguous [outer, n, inner],
 * as the CPU backend's softmax.cpp computes it: the max, then the sum of
 * exp(x - max), both reduced in local memory; a row of -inf (or NaN) gives NaN
 * or -inf as the host's. f32, f16 and bf16 storage (dt: ELEM_*) compute in
 * f32 (softmax_elem), f64 in f64 (softmax_f64, where the device has doubles).
 *
 * Work-groups are laid out as reduce.kern.h's: SM_GROUP items as cols x split
 * (local sizes 0 and 1), `cols` neighbouring columns side by side so loads
 * coalesce when inner > 1, each column's n elements dealt out to `split`
 * items; inner == 1 is one work-group per row. Offsets: the tensors' first
 * elements. */

DEVICE_FN float sm_load_elem(GLOBAL const uchar* x, long i, int dt) { return load_elem(x, i, dt); }
DEVICE_FN void sm_store_elem(GLOBAL uchar* y, long i, int dt, float v) { store_elem(y, i, dt, v); }
#if defined(TORSH_FP64)
DEVICE_FN double sm_load_f64(GLOBAL const uchar* x, long i, int dt) { return ((GLOBAL const double*)x)[i]; }
DEVICE_FN void sm_store_f64(GLOBAL uchar* y, long i, int dt, double v) { ((GLOBAL double*)y)[i] = v; }
#endif

/* softmax_<S> for math type T, and its local-memory max (NaN wins) and sum.
 * Every item reaches every barrier: items past the last column only idle. */
#define SM_DEFINE(T, S)                                                                                             \
  DEVICE_FN T sm_group_max_##S(LOCAL_PTR(T) red, T v, long slot, long ls, long cols, long split) {                  \
    red[slot] = v;                                                                                                  \
    BARRIER();                                                                                                      \
    for (long s = split / 2; s > 0; s >>= 1) {                                                                      \
      if (ls < s) {                                                                                                 \
        const T o = red[slot + s * cols], m = red[slot];                                                            \
        red[slot] = (o > m || o != o) ? o : m;                                                                      \
      }                                                                                                             \
      BARRIER();                                                                                                    \
    }                                                                                                               \
    const T total = red[slot - ls * cols];                                                                          \
    BARRIER();                                                                                                      \
    return total;                                                                                                   \
  }                                                                                                                 \
                                                                                                                    \
  DEVICE_FN T sm_group_sum_##S(LOCAL_PTR(T) red, T v, long slot, long ls, long cols, long split) {                  \
    red[slot] = v;                                                                                                  \
    BARRIER();                                                                                                      \
    for (long s = split / 2; s > 0; s >>= 1) {                                                                      \
      if (ls < s) red[slot] += red[slot + s * cols];                                                                \
      BARRIER();                                                                                                    \
    }                                                                                                               \
    const T total = red[slot - ls * cols];                                                                          \
    BARRIER();                                                                                                      \
    return total;                                                                                                   \
  }                                                                                                                 \
                                                                                                                    \
  KERNEL void softmax_##S(GLOBAL const uchar* x, GLOBAL uchar* y, long n, long inner, long tiles, long ox, long oy, \
                          int log_out, int dt) {                                                                    \
    LOCAL_ARRAY(T, red, SM_GROUP);                                                                                  \
    const long cols = LOCAL_SIZE(0), split = LOCAL_SIZE(1), lc = LOCAL_ID(0), ls = LOCAL_ID(1);                     \
    const long slot = ls * cols + lc, g = GROUP_ID(0), o = g / tiles, c = (g - o * tiles) * cols + lc;              \
    const int live = c < inner;                                                                                     \
    const long at = o * n * inner + c, xb = ox + at, yb = oy + at;                                                  \
    T mx = -(T)INFINITY;                                                                                            \
    for (long i = ls; live && i < n; i += split) {                                                                  \
      const T v = sm_load_##S(x, xb + i * inner, dt);                                                               \
      mx = (v > mx || v != v) ? v : mx;                                                                             \
    }                                                                                                               \
    mx = sm_group_max_##S(red, mx, slot, ls, cols, split);                                                          \
    const T shift = mx == -(T)INFINITY ? (T)0 : mx; /* exp(-inf - -inf) would be NaN */                             \
    T sum = (T)0;                                                                                                   \
    for (long i = ls; live && i < n; i += split) sum += exp(sm_load_##S(x, xb + i * inner, dt) - shift);            \
    sum = sm_group_sum_##S(red, sum, slot, ls, cols, split);                                                        \
    if (log_out) {                                                                                                  \
      const T lse = log(sum);                                                                                       \
      for (long i = ls; live && i < n; i += split)                                                                  \
        sm_store_##S(y, yb + i * inner, dt, sm_load_##S(x, xb + i * inner, dt) - shift - lse);                      \
    } else {                                                                                                        \
      const T inv = (T)1 / sum;                                                                                     \
      for (long i = ls; live && i < n; i += split)                                                                  \
        sm_store_##S(y, yb + i * inner, dt, exp(sm_load_##S(x, xb + i * inner, dt) - shift) * inv);                 \
    }                                                                                                               \
  }

SM_DEFINE(float, elem)
#if defined(TORSH_FP64)
SM_DEFINE(double, f64)
#endif
