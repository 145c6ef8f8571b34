/* Strided copies (src tensor 0 -> out tensor 1). Copy moves elements of 1, 2,
 * 4 or 8 bytes unchanged, whatever their dtype; cast converts between dtypes
 * (ELEM_* codes, meta.h) exactly as the host's convert() (core/dtype.cpp):
 * floats to integers truncate and saturate (NaN gives 0), integers to
 * integers saturate, anything to bool is != 0, and f16 / bf16 / f32 results
 * are rounded to nearest even from the value the host would hold in a double. */
KERNEL void copy_b8_strided(GLOBAL const uchar* src, GLOBAL uchar* out, META(StridedMeta) m) {
  for (long i = GLOBAL_ID0(); i < m.numel; i += GLOBAL_SIZE0())
    out[strided_offset(&m, 1, i)] = src[strided_offset(&m, 0, i)];
}

KERNEL void copy_b16_strided(GLOBAL const ushort* src, GLOBAL ushort* out, META(StridedMeta) m) {
  for (long i = GLOBAL_ID0(); i < m.numel; i += GLOBAL_SIZE0())
    out[strided_offset(&m, 1, i)] = src[strided_offset(&m, 0, i)];
}

KERNEL void copy_b32_strided(GLOBAL const uint* src, GLOBAL uint* out, META(StridedMeta) m) {
  for (long i = GLOBAL_ID0(); i < m.numel; i += GLOBAL_SIZE0())
    out[strided_offset(&m, 1, i)] = src[strided_offset(&m, 0, i)];
}

KERNEL void copy_b64_strided(GLOBAL const ulong* src, GLOBAL ulong* out, META(StridedMeta) m) {
  for (long i = GLOBAL_ID0(); i < m.numel; i += GLOBAL_SIZE0())
    out[strided_offset(&m, 1, i)] = src[strided_offset(&m, 0, i)];
}

DEVICE_FN int elem_is_float(int dt) { return dt == ELEM_F32 || dt == ELEM_F16 || dt == ELEM_BF16; }

/* (float)(double)v without doubles: v rounded to 53 significant bits (nearest
 * even), then once more to f32 by the integer conversion. */
DEVICE_FN float long_to_float_via_double(long v) {
  ulong u = v < 0 ? (ulong)0 - (ulong)v : (ulong)v;
  if (u >> 53) {
    int sh = 1;
    while ((u >> sh) >> 53) ++sh;
    const ulong rem = u & (((ulong)1 << sh) - 1u), mid = (ulong)1 << (sh - 1);
    u >>= sh;
    if (rem > mid || (rem == mid && (u & 1u))) ++u;
    u <<= sh;
  }
  const float f = (float)u;
  return v < 0 ? -f : f;
}

/* The range of an integer dtype (ELEM_I64 for any other). */
DEVICE_FN void int_limits(int dt, long* lo, long* hi) {
  switch (dt) {
    case ELEM_I8:
      *lo = -128;
      *hi = 127;
      return;
    case ELEM_U8:
      *lo = 0;
      *hi = 255;
      return;
    case ELEM_I32:
      *lo = -2147483647L - 1;
      *hi = 2147483647L;
      return;
    default:
      *lo = -9223372036854775807L - 1;
      *hi = 9223372036854775807L;
      return;
  }
}

/* An f32 value (any f32, f16 or bf16 element) into an integer dtype: truncated,
 * saturated at the dtype's limits, NaN to 0. 2^31 - 1 and 2^63 - 1 are no f32:
 * converted, they round to 2^31 and 2^63, the first f32 above the range. */
DEVICE_FN long float_to_int_sat(float f, int dt) {
  if (f != f) return 0;
  long ilo, ihi;
  int_limits(dt, &ilo, &ihi);
  if (f <= (float)ilo) return ilo;
  if (f >= (float)ihi) return ihi;
  return (long)f; /* truncates */
}

DEVICE_FN long clamp_int(long v, int dt) {
  long lo, hi;
  int_limits(dt, &lo, &hi);
  return v < lo ? lo : v > hi ? hi : v;
}

/* Any dtype but f64 to any other. */
KERNEL void cast_strided(GLOBAL const uchar* src, GLOBAL uchar* out, META(StridedMeta) m, int sdt, int ddt) {
  const int sf = elem_is_float(sdt), df = elem_is_float(ddt);
  for (long i = GLOBAL_ID0(); i < m.numel; i += GLOBAL_SIZE0()) {
    const long si = strided_offset(&m, 0, i), di = strided_offset(&m, 1, i);
    if (sf) {
      const float f = load_elem(src, si, sdt);
      if (df)
        store_elem(out, di, ddt, f);
      else
        store_int(out, di, ddt, ddt == ELEM_BOOL ? (f != 0.0f ? 1 : 0) : float_to_int_sat(f, ddt));
    } else {
      const long v = load_int(src, si, sdt);
      if (df)
        store_elem(out, di, ddt, long_to_float_via_double(v));
      else
        store_int(out, di, ddt, ddt == ELEM_BOOL ? v : clamp_int(v, ddt));
    }
  }
}

#if defined(TORSH_FP64)
/* Casts to or from f64 (or any pair), through a double as the host converts. */
DEVICE_FN double load_as_double(GLOBAL const uchar* p, long i, int dt) {
  if (dt == ELEM_F64) return ((GLOBAL const double*)p)[i];
  if (elem_is_float(dt)) return (double)load_elem(p, i, dt);
  return (double)load_int(p, i, dt);
}

/* As float_to_int_sat; 2^63 - 1 converted rounds to 2^63 here too. */
DEVICE_FN long double_to_int_sat(double v, int dt) {
  if (v != v) return 0;
  long ilo, ihi;
  int_limits(dt, &ilo, &ihi);
  if (v <= (double)ilo) return ilo;
  if (v >= (double)ihi) return ihi;
  return (long)v; /* truncates */
}

KERNEL void cast_f64_strided(GLOBAL const uchar* src, GLOBAL uchar* out, META(StridedMeta) m, int sdt, int ddt) {
  for (long i = GLOBAL_ID0(); i < m.numel; i += GLOBAL_SIZE0()) {
    const double v = load_as_double(src, strided_offset(&m, 0, i), sdt);
    const long di = strided_offset(&m, 1, i);
    if (ddt == ELEM_F64)
      ((GLOBAL double*)out)[di] = v;
    else if (elem_is_float(ddt))
      store_elem(out, di, ddt, (float)v);
    else
      store_int(out, di, ddt, ddt == ELEM_BOOL ? (v != 0.0 ? 1 : 0) : double_to_int_sat(v, ddt));
  }
}
#endif
