/* Elementwise unary ops over a strided x and out (StridedMeta tensors 0 and 1;
 * out may be x: in place), as the CPU backend's unary.cpp computes them. Op
 * codes: meta.h. f32, f16 or bf16 storage (dt: ELEM_*) with f32 math, and the
 * integers (neg, abs and relu only, wrapping as the host's casts do) in
 * unary_strided; f64 in unary_f64_strided, where the device has doubles. */

DEVICE_FN float unary_apply(int op, float x) {
  switch (op) {
    case UNARY_NEG: return -x;
    case UNARY_ABS: return x < 0.0f ? -x : x;
    case UNARY_EXP: return exp(x);
    case UNARY_LOG: return log(x);
    case UNARY_SQRT: return sqrt(x);
    case UNARY_RSQRT: return 1.0f / sqrt(x);
    case UNARY_TANH: return tanh_sat(x);
    case UNARY_SIGMOID: return 1.0f / (1.0f + exp(-x));
    case UNARY_RELU: return x > 0.0f ? x : (x != x ? x : 0.0f);
    case UNARY_GELU: return 0.5f * x * (1.0f + erf(x * 0.70710678118654752440f));
    case UNARY_GELU_TANH: return 0.5f * x * (1.0f + tanh_sat(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
    default: return x / (1.0f + exp(-x)); /* silu */
  }
}

/* Integers widened by load_int (sign- or zero-extended: u8 is never negative);
 * store_int keeps the low bits, so -(-128) is -128 in i8 as on the host. */
DEVICE_FN long unary_apply_int(int op, long x) {
  const long negated = (long)((ulong)0 - (ulong)x);
  switch (op) {
    case UNARY_NEG: return negated;
    case UNARY_ABS: return x < 0 ? negated : x;
    default: return x > 0 ? x : 0; /* relu */
  }
}

/* f32 with one item per element, one kernel per op (the switch folds away):
 * the straight-line code a CPU device (PoCL) vectorizes across work-items. */
#define UNARY_F32_ITEMS(NAME, OP)                                                        \
  KERNEL void NAME(GLOBAL const float* x, GLOBAL float* out, long ox, long oo, long n) { \
    const long i = GLOBAL_ID0();                                                         \
    if (i < n) out[oo + i] = unary_apply(OP, x[ox + i]);                                 \
  }
UNARY_F32_ITEMS(unary_f32_items_neg, UNARY_NEG)
UNARY_F32_ITEMS(unary_f32_items_abs, UNARY_ABS)
UNARY_F32_ITEMS(unary_f32_items_exp, UNARY_EXP)
UNARY_F32_ITEMS(unary_f32_items_log, UNARY_LOG)
UNARY_F32_ITEMS(unary_f32_items_sqrt, UNARY_SQRT)
UNARY_F32_ITEMS(unary_f32_items_rsqrt, UNARY_RSQRT)
UNARY_F32_ITEMS(unary_f32_items_tanh, UNARY_TANH)
UNARY_F32_ITEMS(unary_f32_items_sigmoid, UNARY_SIGMOID)
UNARY_F32_ITEMS(unary_f32_items_relu, UNARY_RELU)
UNARY_F32_ITEMS(unary_f32_items_gelu, UNARY_GELU)
UNARY_F32_ITEMS(unary_f32_items_gelu_tanh, UNARY_GELU_TANH)
UNARY_F32_ITEMS(unary_f32_items_silu, UNARY_SILU)
#undef UNARY_F32_ITEMS

KERNEL void unary_strided(GLOBAL const uchar* x, GLOBAL uchar* out, META(StridedMeta) m, int op, int dt) {
  const int fl = dt == ELEM_F32 || dt == ELEM_F16 || dt == ELEM_BF16;
  for (long i = GLOBAL_ID0(); i < m.numel; i += GLOBAL_SIZE0()) {
    const long ix = strided_offset(&m, 0, i), io = strided_offset(&m, 1, i);
    if (fl)
      store_elem(out, io, dt, unary_apply(op, load_elem(x, ix, dt)));
    else
      store_int(out, io, dt, unary_apply_int(op, load_int(x, ix, dt)));
  }
}

#if defined(TORSH_FP64)
DEVICE_FN double unary_apply_f64(int op, double x) {
  switch (op) {
    case UNARY_NEG: return -x;
    case UNARY_ABS: return x < 0.0 ? -x : x;
    case UNARY_EXP: return exp(x);
    case UNARY_LOG: return log(x);
    case UNARY_SQRT: return sqrt(x);
    case UNARY_RSQRT: return 1.0 / sqrt(x);
    case UNARY_TANH: return tanh_sat_f64(x);
    case UNARY_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case UNARY_RELU: return x > 0.0 ? x : (x != x ? x : 0.0);
    case UNARY_GELU: return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
    case UNARY_GELU_TANH: return 0.5 * x * (1.0 + tanh_sat_f64(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
    default: return x / (1.0 + exp(-x)); /* silu */
  }
}

KERNEL void unary_f64_strided(GLOBAL const double* x, GLOBAL double* out, META(StridedMeta) m, int op) {
  for (long i = GLOBAL_ID0(); i < m.numel; i += GLOBAL_SIZE0())
    out[strided_offset(&m, 1, i)] = unary_apply_f64(op, x[strided_offset(&m, 0, i)]);
}
#endif
