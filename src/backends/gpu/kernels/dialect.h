/* One kernel body, three dialects. The files in this folder are compiled as
 * OpenCL C (embedded into the OpenCL plugin and built at run time, so PoCL runs
 * them in CI), as CUDA by nvcc, and as HIP by hipcc. Kernel bodies use only the
 * public dialect's macros, the ones below, and `long` (64-bit in all three on
 * LP64 hosts). */
#ifndef TORSH_KERNELS_DIALECT_H
#define TORSH_KERNELS_DIALECT_H

/* The public dialect (include/torsh/kernel_dialect.h) defines the target
 * macros and the f16/bf16 bit conversions; OpenCL gets it as the first of the
 * concatenated files. These are the library's own additions. */
#if !defined(__OPENCL_VERSION__)
#include "torsh/kernel_dialect.h"
#endif
#define GLOBAL_ID0() GLOBAL_ID(0)
#define GLOBAL_SIZE0() GLOBAL_SIZE(0)
#define META(type) type

/* OpenCL compiles the files concatenated, meta.h first; nvcc and hipcc include it. */
#if !defined(__OPENCL_VERSION__)
#include "meta.h"
#endif

/* Element offset of linear index i in tensor t. */
DEVICE_FN long strided_offset(const StridedMeta* m, int t, long i) {
  long off = m->off[t];
  for (long d = m->nd - 1; d >= 0; --d) {
    const long q = i / m->dims[d];
    off += (i - q * m->dims[d]) * m->st[t][d];
    i = q;
  }
  return off;
}

/* Element i of a tensor of storage dtype dt (ELEM_*, meta.h), as f32, and
 * an f32 stored into one, rounded as the host rounds. */
DEVICE_FN float load_elem(GLOBAL const uchar* p, long i, int dt) {
  if (dt == ELEM_F32) return ((GLOBAL const float*)p)[i];
  const uint h = ((GLOBAL const ushort*)p)[i];
  return dt == ELEM_F16 ? half_bits_to_float(h) : AS_FLOAT(h << 16);
}

DEVICE_FN void store_elem(GLOBAL uchar* p, long i, int dt, float v) {
  if (dt == ELEM_F32) {
    ((GLOBAL float*)p)[i] = v;
    return;
  }
  ((GLOBAL ushort*)p)[i] = (ushort)(dt == ELEM_F16 ? float_to_half_bits(v) : float_to_bf16_bits(v));
}

/* Element i of an integer or bool tensor (ELEM_I8 ... ELEM_BOOL), widened
 * (bool: 0 or 1, whatever byte it holds), and the low bits of v stored into
 * one: integers wrap; bool stores v != 0. */
DEVICE_FN long load_int(GLOBAL const uchar* p, long i, int dt) {
  switch (dt) {
    case ELEM_I8: return (long)p[i] - (p[i] & 0x80u ? 256 : 0);
    case ELEM_U8: return (long)p[i];
    case ELEM_I32: return (long)((GLOBAL const int*)p)[i];
    case ELEM_I64: return ((GLOBAL const long*)p)[i];
    default: return p[i] != 0 ? 1 : 0;
  }
}

DEVICE_FN void store_int(GLOBAL uchar* p, long i, int dt, long v) {
  switch (dt) {
    case ELEM_I8:
    case ELEM_U8: p[i] = (uchar)((ulong)v & 0xffu); return;
    case ELEM_I32: ((GLOBAL uint*)p)[i] = (uint)((ulong)v & 0xffffffffu); return;
    case ELEM_I64: ((GLOBAL ulong*)p)[i] = (ulong)v; return;
    default: p[i] = v != 0 ? 1 : 0;
  }
}

/* tanh, exactly +-1 where it rounds there (|y| > 10), as the host's: some
 * device libraries stop a few ulps short, which 1 + tanh(y) would magnify.
 * Here, not in unary.kern.h, because other kernel files (rnn_gates.kern.h)
 * come before it in OpenCL's one program. */
DEVICE_FN float tanh_sat(float y) {
  if (y > 10.0f) return 1.0f;
  if (y < -10.0f) return -1.0f;
  return tanh(y);
}

#if defined(TORSH_FP64)
/* tanh saturated where it rounds to +-1 in f64 (|y| > 20), as tanh_sat. */
DEVICE_FN double tanh_sat_f64(double y) {
  if (y > 20.0) return 1.0;
  if (y < -20.0) return -1.0;
  return tanh(y);
}
#endif

#endif
