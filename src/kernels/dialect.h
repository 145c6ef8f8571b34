/* One kernel body, three dialects. The files in this folder are compiled as
 * OpenCL C (embedded into the OpenCL plugin and built at run time, so PoCL runs
 * them in CI), as CUDA by nvcc, and as HIP by hipcc. Kernel bodies use only the
 * macros below and `long` (64-bit in all three on LP64 hosts). */
#ifndef TORSH_KERNELS_DIALECT_H
#define TORSH_KERNELS_DIALECT_H

#if defined(__OPENCL_VERSION__)
#define KERNEL __kernel
#define GLOBAL __global
#define LOCAL_ARRAY(type, name, n) __local type name[n]
#define LOCAL_PTR(type) __local type*
#define DEVICE_FN static inline
#define GLOBAL_ID0() ((long)get_global_id(0))
#define GLOBAL_SIZE0() ((long)get_global_size(0))
#define GROUP_ID(d) ((long)get_group_id(d))
#define LOCAL_ID(d) ((long)get_local_id(d))
#define LOCAL_SIZE(d) ((long)get_local_size(d))
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define META(type) type
#define AS_FLOAT(u) as_float(u)
#define AS_UINT(f) as_uint(f)
/* double where the device has it (cl_khr_fp64); kernels using it sit under TORSH_FP64. */
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define TORSH_FP64 1
#endif
#else /* CUDA / HIP */
#define KERNEL extern "C" __global__
#define GLOBAL
#define LOCAL_ARRAY(type, name, n) __shared__ type name[n]
#define LOCAL_PTR(type) type*
#define DEVICE_FN static __device__ __forceinline__
#define GLOBAL_ID0() ((long)blockIdx.x * blockDim.x + threadIdx.x)
#define GLOBAL_SIZE0() ((long)gridDim.x * blockDim.x)
#define GROUP_ID(d) ((long)((d) == 0 ? blockIdx.x : (d) == 1 ? blockIdx.y : blockIdx.z))
#define LOCAL_ID(d) ((long)((d) == 0 ? threadIdx.x : (d) == 1 ? threadIdx.y : threadIdx.z))
#define LOCAL_SIZE(d) ((long)((d) == 0 ? blockDim.x : (d) == 1 ? blockDim.y : blockDim.z))
#define BARRIER() __syncthreads()
#define META(type) type
#define AS_FLOAT(u) __uint_as_float(u)
#define AS_UINT(f) __float_as_uint(f)
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
#define TORSH_FP64 1
#endif

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

/* IEEE half and bfloat16 <-> f32 on the bits, as torsh's host conversions
 * (core/dtype.cpp) round, so device and CPU agree bit for bit. Integer code
 * only: no cl_khr_fp16 or cuda_fp16.h, and a half can be assembled from two
 * bytes wherever it lies (quantized blocks put them at any even offset). */
DEVICE_FN float half_bits_to_float(uint h) {
  const uint sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) { /* zero or subnormal: m * 2^-24 is exact in f32 */
    const float v = (float)m * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (e == 31) return AS_FLOAT(sign | 0x7f800000u | (m << 13)); /* inf, NaN (payload kept) */
  return AS_FLOAT(sign | ((e + 112u) << 23) | (m << 13));
}

DEVICE_FN uint float_to_half_bits(float f) { /* round to nearest even */
  const uint x = AS_UINT(f), sign = (x >> 16) & 0x8000u, absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) return sign | 0x7e00u | ((absx >> 13) & 0x3ffu);
  if (absx >= 0x477ff000u) return sign | 0x7c00u;
  if (absx < 0x38800000u) {
    if (absx < 0x33000000u) return sign;
    const uint shift = 126u - (absx >> 23), mant = (absx & 0x7fffffu) | 0x800000u;
    const uint rem = mant & ((1u << shift) - 1u), mid = 1u << (shift - 1u);
    uint h = mant >> shift;
    if (rem > mid || (rem == mid && (h & 1u))) ++h;
    return sign | h;
  }
  uint h = (absx - 0x38000000u) >> 13;
  const uint rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return sign | h;
}

DEVICE_FN uint float_to_bf16_bits(float f) { /* round to nearest even; NaN stays quiet */
  const uint x = AS_UINT(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return ((x >> 16) | 0x40u) & 0xffffu;
  return ((x + 0x7fffu + ((x >> 16) & 1u)) >> 16) & 0xffffu;
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

/* a * b + c with both roundings (never contracted to a fused multiply-add),
 * for results that must equal the host's bit for bit. */
DEVICE_FN float mul_add_unfused(float a, float b, float c) {
#if defined(__OPENCL_VERSION__)
#pragma OPENCL FP_CONTRACT OFF
  return a * b + c;
#else
  return __fadd_rn(__fmul_rn(a, b), c);
#endif
}

/* The same in doubles. */
#if defined(TORSH_FP64)
DEVICE_FN double mul_add_unfused_f64(double a, double b, double c) {
#if defined(__OPENCL_VERSION__)
#pragma OPENCL FP_CONTRACT OFF
  return a * b + c;
#else
  return __dadd_rn(__dmul_rn(a, b), c);
#endif
}
#endif

#endif
