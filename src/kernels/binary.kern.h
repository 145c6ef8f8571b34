/* Elementwise binary op over broadcast, strided operands (f32). Op codes: meta.h. */

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

/* Contiguous fast path: all three tensors dense with the same layout. */
KERNEL void binary_f32_contig(GLOBAL const float* a, GLOBAL const float* b, GLOBAL float* out, long n, int op) {
  for (long i = GLOBAL_ID0(); i < n; i += GLOBAL_SIZE0()) out[i] = binary_apply(op, a[i], b[i]);
}

KERNEL void binary_f32_strided(GLOBAL const float* a, GLOBAL const float* b, GLOBAL float* out, META(StridedMeta) m,
                               int op) {
  for (long i = GLOBAL_ID0(); i < m.numel; i += GLOBAL_SIZE0())
    out[strided_offset(&m, 2, i)] = binary_apply(op, a[strided_offset(&m, 0, i)], b[strided_offset(&m, 1, i)]);
}
