/* Elementwise binary ops over broadcast, strided operands, as the CPU
 * backend's binary.cpp computes them. Op codes: meta.h. f32 has its own
 * kernels (a dense fast path); f16 and bf16 compute in f32 and round once
 * (load_elem / store_elem); integers wrap (two's complement) with no undefined
 * behaviour; f64 needs doubles on the device (TORSH_FP64). */

DEVICE_FN float binary_apply(int op, float x, float y) {
  switch (op) {
    case BINARY_ADD: return x + y;
    case BINARY_SUB: return x - y;
    case BINARY_MUL: return x * y;
    case BINARY_DIV: return x / y;
    case BINARY_MAX: return (x != x || y != y) ? x + y : (x > y ? x : y);
    case BINARY_POW: return pow(x, y);
    default: return (x != x || y != y) ? x + y : (x < y ? x : y);
  }
}

/* Contiguous fast path: all three tensors dense with the same layout, from
 * elements oa, ob and oo of their buffers (pool blocks rarely start a buffer). */
/* One loop per op, so the op is no branch inside the loop (PoCL then
 * vectorizes the common ones across work-items). */
#define BINARY_CONTIG_LOOP(OP) \
  for (long i = GLOBAL_ID0(); i < n; i += GLOBAL_SIZE0()) out[oo + i] = binary_apply(OP, a[oa + i], b[ob + i])
KERNEL void binary_f32_contig(GLOBAL const float* a, GLOBAL const float* b, GLOBAL float* out, long oa, long ob,
                              long oo, long n, int op) {
  switch (op) {
    case BINARY_ADD: BINARY_CONTIG_LOOP(BINARY_ADD); break;
    case BINARY_SUB: BINARY_CONTIG_LOOP(BINARY_SUB); break;
    case BINARY_MUL: BINARY_CONTIG_LOOP(BINARY_MUL); break;
    case BINARY_DIV: BINARY_CONTIG_LOOP(BINARY_DIV); break;
    default: BINARY_CONTIG_LOOP(op); break;
  }
}
#undef BINARY_CONTIG_LOOP

/* The four arithmetic ops with one item per element, no loop and no branch on
 * the op: the straight-line code a CPU device (PoCL) vectorizes across
 * work-items; a loop inside an item or a switch on the op stops it. */
#define BINARY_F32_ITEMS(NAME, EXPR)                                                                           \
  KERNEL void NAME(GLOBAL const float* a, GLOBAL const float* b, GLOBAL float* out, long oa, long ob, long oo, \
                   long n) {                                                                                   \
    const long i = GLOBAL_ID0();                                                                               \
    if (i < n) {                                                                                               \
      const float x = a[oa + i], y = b[ob + i];                                                                \
      out[oo + i] = EXPR;                                                                                      \
    }                                                                                                          \
  }
BINARY_F32_ITEMS(binary_f32_items_add, x + y)
BINARY_F32_ITEMS(binary_f32_items_sub, x - y)
BINARY_F32_ITEMS(binary_f32_items_mul, x* y)
BINARY_F32_ITEMS(binary_f32_items_div, x / y)
#undef BINARY_F32_ITEMS

KERNEL void binary_f32_strided(GLOBAL const float* a, GLOBAL const float* b, GLOBAL float* out, META(StridedMeta) m,
                               int op) {
  for (long i = GLOBAL_ID0(); i < m.numel; i += GLOBAL_SIZE0())
    out[strided_offset(&m, 2, i)] = binary_apply(op, a[strided_offset(&m, 0, i)], b[strided_offset(&m, 1, i)]);
}

/* x ** y on integers, exact and wrapping; a negative exponent (signed dtypes
 * only) gives the truncated 1 / x^|y|. */
DEVICE_FN ulong int_pow(long x, long y) {
  if (y < 0) return x == 1 ? 1u : x == -1 ? ((y & 1) ? (ulong)0 - 1u : 1u) : 0u;
  ulong r = 1u, b = (ulong)x;
  for (ulong e = (ulong)y; e; e >>= 1, b *= b)
    if (e & 1u) r *= b;
  return r;
}

/* Integers widened by load_int (sign- or zero-extended, so comparisons hold);
 * the result's low bits are the dtype's wrapped result. Division by zero gives
 * 0 (the op layer never divides integers here). */
DEVICE_FN long binary_apply_int(int op, long x, long y) {
  const ulong ux = (ulong)x, uy = (ulong)y;
  switch (op) {
    case BINARY_ADD: return (long)(ux + uy);
    case BINARY_SUB: return (long)(ux - uy);
    case BINARY_MUL: return (long)(ux * uy);
    case BINARY_DIV: return y == 0 ? 0 : y == -1 ? (long)((ulong)0 - ux) : x / y;
    case BINARY_MAX: return x > y ? x : y;
    case BINARY_POW: return (long)int_pow(x, y);
    default: return x < y ? x : y;
  }
}

/* f16, bf16 (dt: ELEM_*) and the integers. */
KERNEL void binary_strided(GLOBAL const uchar* a, GLOBAL const uchar* b, GLOBAL uchar* out, META(StridedMeta) m, int op,
                           int dt) {
  const int fl = dt == ELEM_F32 || dt == ELEM_F16 || dt == ELEM_BF16;
  for (long i = GLOBAL_ID0(); i < m.numel; i += GLOBAL_SIZE0()) {
    const long ia = strided_offset(&m, 0, i), ib = strided_offset(&m, 1, i), io = strided_offset(&m, 2, i);
    if (fl)
      store_elem(out, io, dt, binary_apply(op, load_elem(a, ia, dt), load_elem(b, ib, dt)));
    else
      store_int(out, io, dt, binary_apply_int(op, load_int(a, ia, dt), load_int(b, ib, dt)));
  }
}

#if defined(TORSH_FP64)
DEVICE_FN double binary_apply_f64(int op, double x, double y) {
  switch (op) {
    case BINARY_ADD: return x + y;
    case BINARY_SUB: return x - y;
    case BINARY_MUL: return x * y;
    case BINARY_DIV: return x / y;
    case BINARY_MAX: return (x != x || y != y) ? x + y : (x > y ? x : y);
    case BINARY_POW: return pow(x, y);
    default: return (x != x || y != y) ? x + y : (x < y ? x : y);
  }
}

KERNEL void binary_f64_strided(GLOBAL const double* a, GLOBAL const double* b, GLOBAL double* out, META(StridedMeta) m,
                               int op) {
  for (long i = GLOBAL_ID0(); i < m.numel; i += GLOBAL_SIZE0())
    out[strided_offset(&m, 2, i)] = binary_apply_f64(op, a[strided_offset(&m, 0, i)], b[strided_offset(&m, 1, i)]);
}
#endif
