/* The Torsh kernel dialect: one C-family kernel source that builds as OpenCL
 * C (OpenCL backend), CUDA C++ (NVRTC, CUDA backend), HIP (hiprtc, ROCm
 * backend) and C++ (the CPU backend). Backend::compile_kernel() puts this
 * header in front of a KernelDialect::Torsh source, so kernels use these
 * names and nothing vendor-specific:
 *
 *   KERNEL void scale(GLOBAL float* y, GLOBAL const float* x, float a, long n) {
 *     const long i = GLOBAL_ID(0);
 *     if (i < n) y[i] = a * x[i];
 *   }
 *
 * Types: `long` / `ulong` are 64-bit, `int` / `uint` 32-bit, `uchar`,
 * `ushort` as in OpenCL; `double` only under `#ifdef TORSH_FP64`. Pointers to
 * tensors are GLOBAL; pointers inside a kernel to work-group memory are
 * LOCAL_PTR(type). Helper functions are DEVICE_FN.
 *
 * Work-items: GLOBAL_ID(d) = GROUP_ID(d) * LOCAL_SIZE(d) + LOCAL_ID(d) for
 * d in 0..2; GLOBAL_SIZE(d), NUM_GROUPS(d). LOCAL_ARRAY(type, name, n)
 * declares work-group memory (at kernel scope) and BARRIER() waits for every
 * item of the work-group, fencing work-group memory.
 *
 * The target is named by one macro: __OPENCL_VERSION__ (OpenCL),
 * __CUDACC__ or __HIPCC__ / __HIPCC_RTC__ (CUDA, HIP), TORSH_DIALECT_CPU (the
 * CPU backend). */
#ifndef TORSH_KERNEL_DIALECT_H
#define TORSH_KERNEL_DIALECT_H

#if defined(__OPENCL_VERSION__)
#define KERNEL __kernel
#define GLOBAL __global
#define LOCAL_ARRAY(type, name, n) __local type name[n]
#define LOCAL_PTR(type) __local type*
#define DEVICE_FN static inline
#define GLOBAL_ID(d) ((long)get_global_id(d))
#define GLOBAL_SIZE(d) ((long)get_global_size(d))
#define GROUP_ID(d) ((long)get_group_id(d))
#define NUM_GROUPS(d) ((long)get_num_groups(d))
#define LOCAL_ID(d) ((long)get_local_id(d))
#define LOCAL_SIZE(d) ((long)get_local_size(d))
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define AS_FLOAT(u) as_float(u)
#define AS_UINT(f) as_uint(f)
/* double where the device has it (cl_khr_fp64). */
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define TORSH_FP64 1
#endif

#elif defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIPCC_RTC__) || defined(__CUDACC_RTC__)
#define KERNEL extern "C" __global__
#define GLOBAL
#define LOCAL_ARRAY(type, name, n) __shared__ type name[n]
#define LOCAL_PTR(type) type*
#define DEVICE_FN static __device__ __forceinline__
#define TORSH_DIM_(v, d) ((long)((d) == 0 ? v.x : (d) == 1 ? v.y : v.z))
#define GROUP_ID(d) TORSH_DIM_(blockIdx, d)
#define NUM_GROUPS(d) TORSH_DIM_(gridDim, d)
#define LOCAL_ID(d) TORSH_DIM_(threadIdx, d)
#define LOCAL_SIZE(d) TORSH_DIM_(blockDim, d)
#define GLOBAL_ID(d) (GROUP_ID(d) * LOCAL_SIZE(d) + LOCAL_ID(d))
#define GLOBAL_SIZE(d) (NUM_GROUPS(d) * LOCAL_SIZE(d))
#define BARRIER() __syncthreads()
#define AS_FLOAT(u) __uint_as_float(u)
#define AS_UINT(f) __float_as_uint(f)
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
#define TORSH_FP64 1

#elif defined(TORSH_DIALECT_CPU)
/* C++17, built by the host's C++ compiler into a shared object that the CPU
 * backend loads; work-groups run on its thread pool. All items of one
 * work-group run on one thread, one group at a time, so per-thread storage is
 * per-work-group storage. An item's coordinates are in a per-thread context
 * the backend fills for the running item (the layout is the backend's ABI:
 * src/backends/cpu/user_kernel/kernel_abi.hpp); the items of a group without
 * barriers run as a loop the compiler can vectorize. */
/* The math OpenCL C and CUDA have built in: the C library's functions with
 * their float overloads (tanh(float) stays float, as on a GPU), FLT_MAX and
 * the like, rsqrt, and min / max over any two numbers (templates, so a
 * kernel's own min or max takes precedence). */
#include <float.h>
#include <limits.h>
#include <math.h>
template <class torsh_A, class torsh_B> /* the type of a + b: the usual arithmetic conversions */
static inline auto min(torsh_A a, torsh_B b) -> decltype(a + b) {
  return b < a ? b : a;
}
template <class torsh_A, class torsh_B>
static inline auto max(torsh_A a, torsh_B b) -> decltype(a + b) {
  return a < b ? b : a;
}
template <class torsh_T>
static inline auto rsqrt(torsh_T x) -> decltype(sqrt(x)) {
  return (decltype(sqrt(x)))1 / sqrt(x);
}
#define KERNEL extern "C"
#define GLOBAL
#define LOCAL_ARRAY(type, name, n) static thread_local type name[n]
#define LOCAL_PTR(type) type*
#define DEVICE_FN static inline
struct torsh_cpu_item {
  long local_id[3], group_id[3], local_size[3], num_groups[3];
  void (*barrier)(struct torsh_cpu_item*);
};
static thread_local struct torsh_cpu_item torsh_cpu_ctx;
#define GROUP_ID(d) ((long)torsh_cpu_ctx.group_id[d])
#define NUM_GROUPS(d) ((long)torsh_cpu_ctx.num_groups[d])
#define LOCAL_ID(d) ((long)torsh_cpu_ctx.local_id[d])
#define LOCAL_SIZE(d) ((long)torsh_cpu_ctx.local_size[d])
#define GLOBAL_ID(d) (GROUP_ID(d) * LOCAL_SIZE(d) + LOCAL_ID(d))
#define GLOBAL_SIZE(d) (NUM_GROUPS(d) * LOCAL_SIZE(d))
/* The backend runs the group's other items (each with its own context) and
 * comes back here once all of them reached a barrier: this item's context is
 * put back, and the compiler must reload memory the others may have written. */
static inline void torsh_cpu_barrier(void) {
  struct torsh_cpu_item self = torsh_cpu_ctx;
  self.barrier(&self);
  __asm__ __volatile__("" ::: "memory");
  torsh_cpu_ctx = self;
}
#define BARRIER() torsh_cpu_barrier()
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
static inline float torsh_cpu_as_float(uint u) {
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
}
static inline uint torsh_cpu_as_uint(float f) {
  uint u;
  __builtin_memcpy(&u, &f, sizeof u);
  return u;
}
#define AS_FLOAT(u) torsh_cpu_as_float(u)
#define AS_UINT(f) torsh_cpu_as_uint(f)
#define TORSH_FP64 1

#else
#error "torsh/kernel_dialect.h: unknown target (OpenCL C, CUDA, HIP or TORSH_DIALECT_CPU)"
#endif

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

/* a * b + c with both roundings (never contracted to a fused multiply-add),
 * for results that must equal the host's bit for bit. */
DEVICE_FN float mul_add_unfused(float a, float b, float c) {
#if defined(__OPENCL_VERSION__)
#pragma OPENCL FP_CONTRACT OFF
  return a * b + c;
#elif defined(TORSH_DIALECT_CPU) /* compiled with -ffp-contract=off */
  return a * b + c;
#else
  return __fadd_rn(__fmul_rn(a, b), c);
#endif
}

/* a * b + c * d with each product and the sum rounded on its own. A product
 * passed to mul_add_unfused as c is computed in the caller, where OpenCL's
 * default FP_CONTRACT ON lets a compiler fuse it into the sum once inlined
 * (NVIDIA's does); here both products are under the pragma. */
DEVICE_FN float dot2_unfused(float a, float b, float c, float d) {
#if defined(__OPENCL_VERSION__)
#pragma OPENCL FP_CONTRACT OFF
  return a * b + c * d;
#elif defined(TORSH_DIALECT_CPU)
  return a * b + c * d;
#else
  return __fadd_rn(__fmul_rn(a, b), __fmul_rn(c, d));
#endif
}

/* The same in doubles (where the target has them). */
#if defined(TORSH_FP64)
DEVICE_FN double mul_add_unfused_f64(double a, double b, double c) {
#if defined(__OPENCL_VERSION__)
#pragma OPENCL FP_CONTRACT OFF
  return a * b + c;
#elif defined(TORSH_DIALECT_CPU)
  return a * b + c;
#else
  return __dadd_rn(__dmul_rn(a, b), c);
#endif
}

DEVICE_FN double dot2_unfused_f64(double a, double b, double c, double d) {
#if defined(__OPENCL_VERSION__)
#pragma OPENCL FP_CONTRACT OFF
  return a * b + c * d;
#elif defined(TORSH_DIALECT_CPU)
  return a * b + c * d;
#else
  return __dadd_rn(__dmul_rn(a, b), __dmul_rn(c, d));
#endif
}
#endif

#endif
