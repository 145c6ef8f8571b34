/* Reductions over the middle axis of contiguous x [outer, n, inner] into out
 * [outer, inner] (i64 for argmax), as the CPU backend's reduce.cpp computes
 * them. Op codes: meta.h (RD_*).
 *
 * A work-group is RD_GROUP items laid out cols x split (its local size in
 * dimensions 0 and 1): `cols` neighbouring output columns, read side by side
 * so loads coalesce when inner > 1, each column's n elements dealt out to
 * `split` items and combined in local memory. inner == 1 runs 1 x RD_GROUP:
 * one work-group per output row. Groups are numbered outer-major over the
 * `tiles` column tiles of each outer index.
 *
 * Sum and mean accumulate in f32 for f32, f16 and bf16 storage, in f64 for
 * f64 and in 64 wrapping bits for the integers (then stored wrapped, as the
 * CPU's cast does; an integer mean truncates). Var is two-pass (the mean,
 * then the sum of squared deviations from it), divided by max(n - correction,
 * 0). Max, min and argmax take the first NaN if there is one, else the first
 * extreme element (ties go to the lower index). */

/* Per accumulator type S: load and store (dt: ELEM_*; f64 has one layout), a
 * wrapping add, the squared deviation, division by a count, NaN or not. */
DEVICE_FN float rd_load_elem(GLOBAL const uchar* x, long i, int dt) { return load_elem(x, i, dt); }
DEVICE_FN void rd_store_elem(GLOBAL uchar* out, long i, int dt, float v) { store_elem(out, i, dt, v); }
DEVICE_FN float rd_add_elem(float a, float b) { return a + b; }
DEVICE_FN float rd_sqdev_elem(float v, float m) { return (v - m) * (v - m); }
DEVICE_FN float rd_div_elem(float s, long d) { return s / (float)d; } /* 0 / 0: NaN, the empty mean */
DEVICE_FN int rd_nan_elem(float v) { return v != v; }

DEVICE_FN long rd_load_int(GLOBAL const uchar* x, long i, int dt) { return load_int(x, i, dt); }
DEVICE_FN void rd_store_int(GLOBAL uchar* out, long i, int dt, long v) { store_int(out, i, dt, v); }
DEVICE_FN long rd_add_int(long a, long b) { return (long)((ulong)a + (ulong)b); }
DEVICE_FN long rd_sqdev_int(long v, long m) {
  const ulong d = (ulong)v - (ulong)m;
  return (long)(d * d);
}
DEVICE_FN long rd_div_int(long s, long d) { return d > 0 ? s / d : 0; } /* the empty mean is 0, as the CPU's */
DEVICE_FN int rd_nan_int(long v) { return 0; }

#if defined(TORSH_FP64)
DEVICE_FN double rd_load_f64(GLOBAL const uchar* x, long i, int dt) { return ((GLOBAL const double*)x)[i]; }
DEVICE_FN void rd_store_f64(GLOBAL uchar* out, long i, int dt, double v) { ((GLOBAL double*)out)[i] = v; }
DEVICE_FN double rd_add_f64(double a, double b) { return a + b; }
DEVICE_FN double rd_sqdev_f64(double v, double m) { return (v - m) * (v - m); }
DEVICE_FN double rd_div_f64(double s, long d) { return s / (double)d; }
DEVICE_FN int rd_nan_f64(double v) { return v != v; }
#endif

/* The kernel reduce_<S> for accumulator type T, and its local-memory sum.
 * Every item reaches every barrier: items past the last column only idle. */
#define RD_DEFINE(T, S)                                                                                              \
  DEVICE_FN T rd_group_sum_##S(LOCAL_PTR(T) val, T v, long slot, long ls, long cols, long split) {                   \
    val[slot] = v;                                                                                                   \
    BARRIER();                                                                                                       \
    for (long s = split / 2; s > 0; s >>= 1) {                                                                       \
      if (ls < s) val[slot] = rd_add_##S(val[slot], val[slot + s * cols]);                                           \
      BARRIER();                                                                                                     \
    }                                                                                                                \
    const T total = val[slot - ls * cols];                                                                           \
    BARRIER();                                                                                                       \
    return total;                                                                                                    \
  }                                                                                                                  \
                                                                                                                     \
  /* The winner of the items' (value, index) pairs, its index into *at; index                                        \
   * -1 is an item that saw nothing (n < split). */                                                                  \
  DEVICE_FN T rd_group_best_##S(LOCAL_PTR(T) val, LOCAL_PTR(long) pos, T v, long* at, int want_max, long slot,       \
                                long ls, long cols, long split) {                                                    \
    val[slot] = v;                                                                                                   \
    pos[slot] = *at;                                                                                                 \
    BARRIER();                                                                                                       \
    for (long s = split / 2; s > 0; s >>= 1) {                                                                       \
      if (ls < s && pos[slot + s * cols] >= 0) {                                                                     \
        const T o = val[slot + s * cols], b = val[slot];                                                             \
        const long i = pos[slot + s * cols], a = pos[slot];                                                          \
        int take;                                                                                                    \
        if (a < 0)                                                                                                   \
          take = 1;                                                                                                  \
        else if (rd_nan_##S(o) || rd_nan_##S(b))                                                                     \
          take = !rd_nan_##S(b) || (rd_nan_##S(o) && i < a);                                                         \
        else if (o == b)                                                                                             \
          take = i < a;                                                                                              \
        else                                                                                                         \
          take = want_max ? o > b : o < b;                                                                           \
        if (take) {                                                                                                  \
          val[slot] = o;                                                                                             \
          pos[slot] = i;                                                                                             \
        }                                                                                                            \
      }                                                                                                              \
      BARRIER();                                                                                                     \
    }                                                                                                                \
    const T best = val[slot - ls * cols];                                                                            \
    *at = pos[slot - ls * cols];                                                                                     \
    BARRIER();                                                                                                       \
    return best;                                                                                                     \
  }                                                                                                                  \
                                                                                                                     \
  KERNEL void reduce_##S(GLOBAL const uchar* x, GLOBAL uchar* out, long n, long inner, long tiles, long ox, long oo, \
                         long correction, int op, int dt) {                                                          \
    LOCAL_ARRAY(T, val, RD_GROUP);                                                                                   \
    LOCAL_ARRAY(long, pos, RD_GROUP);                                                                                \
    const long cols = LOCAL_SIZE(0), split = LOCAL_SIZE(1), lc = LOCAL_ID(0), ls = LOCAL_ID(1);                      \
    const long slot = ls * cols + lc, g = GROUP_ID(0), o = g / tiles, c = (g - o * tiles) * cols + lc;               \
    const int live = c < inner;                                                                                      \
    const long base = ox + o * n * inner + c, dst = oo + o * inner + c;                                              \
    T r = (T)0;                                                                                                      \
    long at = -1; /* argmax: none yet */                                                                             \
    if (op == RD_MAX || op == RD_MIN || op == RD_ARGMAX) {                                                           \
      const int want_max = op != RD_MIN;                                                                             \
      for (long i = ls; live && i < n && !rd_nan_##S(r); i += split) {                                               \
        const T v = rd_load_##S(x, base + i * inner, dt);                                                            \
        if (at < 0 || rd_nan_##S(v) || (want_max ? v > r : v < r)) {                                                 \
          r = v;                                                                                                     \
          at = i;                                                                                                    \
        }                                                                                                            \
      }                                                                                                              \
      r = rd_group_best_##S(val, pos, r, &at, want_max, slot, ls, cols, split);                                      \
    } else {                                                                                                         \
      for (long i = ls; live && i < n; i += split) r = rd_add_##S(r, rd_load_##S(x, base + i * inner, dt));          \
      r = rd_group_sum_##S(val, r, slot, ls, cols, split);                                                           \
      if (op == RD_VAR) {                                                                                            \
        const T mean = n > 0 ? rd_div_##S(r, n) : (T)0;                                                              \
        T ss = (T)0;                                                                                                 \
        for (long i = ls; live && i < n; i += split)                                                                 \
          ss = rd_add_##S(ss, rd_sqdev_##S(rd_load_##S(x, base + i * inner, dt), mean));                             \
        r = rd_div_##S(rd_group_sum_##S(val, ss, slot, ls, cols, split), n > correction ? n - correction : 0);       \
      } else if (op == RD_MEAN) {                                                                                    \
        r = rd_div_##S(r, n);                                                                                        \
      }                                                                                                              \
    }                                                                                                                \
    if (ls == 0 && live) {                                                                                           \
      if (op == RD_ARGMAX)                                                                                           \
        ((GLOBAL long*)out)[dst] = at;                                                                               \
      else                                                                                                           \
        rd_store_##S(out, dst, dt, r);                                                                               \
    }                                                                                                                \
  }

RD_DEFINE(float, elem)
RD_DEFINE(long, int)
#if defined(TORSH_FP64)
RD_DEFINE(double, f64)
#endif
