/* The loss scaler's overflow check, as the CPU backend's non_finite.cpp:
 * flag[flag_off] = 1 when contiguous x (n elements from element off) holds a
 * NaN or an infinity (all exponent bits set), untouched otherwise. f32, f64,
 * f16 and bf16 (dt: ELEM_*) are tested on their bits, so f64 needs no doubles
 * on the device. Every work-item that finds one stores the same 1, so the
 * racing stores need no atomics. Grid-stride. */

KERNEL void non_finite_elems(GLOBAL const uchar* x, long off, long n, int dt, GLOBAL uchar* flag, long flag_off) {
  int found = 0;
  if (dt == ELEM_F32) {
    for (long i = GLOBAL_ID0(); i < n; i += GLOBAL_SIZE0())
      found |= (((GLOBAL const uint*)x)[off + i] & 0x7f800000u) == 0x7f800000u;
  } else if (dt == ELEM_F64) {
    const ulong exponent = (ulong)0x7ff00000u << 32;
    for (long i = GLOBAL_ID0(); i < n; i += GLOBAL_SIZE0())
      found |= (((GLOBAL const ulong*)x)[off + i] & exponent) == exponent;
  } else {
    const uint exponent = dt == ELEM_F16 ? 0x7c00u : 0x7f80u;
    for (long i = GLOBAL_ID0(); i < n; i += GLOBAL_SIZE0())
      found |= (((GLOBAL const ushort*)x)[off + i] & exponent) == exponent;
  }
  if (found) flag[flag_off] = 1;
}
