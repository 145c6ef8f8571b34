/* Elementwise unary ops over a strided x and out (StridedMeta tensors 0 and 1;
 * out may be x: in place), f32, f16 or bf16 storage (dt: ELEM_*) with f32
 * math, as the CPU backend's unary.cpp computes them. Op codes: meta.h. */

/* tanh, exactly +-1 where it rounds there (|y| > 10), as the host's: some
 * device libraries stop a few ulps short, which 1 + tanh(y) would magnify. */
DEVICE_FN float tanh_sat(float y) {
  if (y > 10.0f) return 1.0f;
  if (y < -10.0f) return -1.0f;
  return tanh(y);
}

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

KERNEL void unary_strided(GLOBAL const uchar* x, GLOBAL uchar* out, META(StridedMeta) m, int op, int dt) {
  for (long i = GLOBAL_ID0(); i < m.numel; i += GLOBAL_SIZE0())
    store_elem(out, strided_offset(&m, 1, i), dt, unary_apply(op, load_elem(x, strided_offset(&m, 0, i), dt)));
}
