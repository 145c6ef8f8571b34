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
#define DEVICE_FN static inline
#define GLOBAL_ID0() ((long)get_global_id(0))
#define GLOBAL_SIZE0() ((long)get_global_size(0))
#define GROUP_ID(d) ((long)get_group_id(d))
#define LOCAL_ID(d) ((long)get_local_id(d))
#define LOCAL_SIZE(d) ((long)get_local_size(d))
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define META(type) type
#else /* CUDA / HIP */
#define KERNEL extern "C" __global__
#define GLOBAL
#define LOCAL_ARRAY(type, name, n) __shared__ type name[n]
#define DEVICE_FN static __device__ __forceinline__
#define GLOBAL_ID0() ((long)blockIdx.x * blockDim.x + threadIdx.x)
#define GLOBAL_SIZE0() ((long)gridDim.x * blockDim.x)
#define GROUP_ID(d) ((long)((d) == 0 ? blockIdx.x : (d) == 1 ? blockIdx.y : blockIdx.z))
#define LOCAL_ID(d) ((long)((d) == 0 ? threadIdx.x : (d) == 1 ? threadIdx.y : threadIdx.z))
#define LOCAL_SIZE(d) ((long)((d) == 0 ? blockDim.x : (d) == 1 ? blockDim.y : blockDim.z))
#define BARRIER() __syncthreads()
#define META(type) type
typedef unsigned int uint;
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

#endif
