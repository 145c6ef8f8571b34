/* CSR @ dense, as the CPU backend's sparse_matmul.cpp (rt::SparseMatmulArgs):
 * indptr and indices i32 or i64 (i64), values, x [cols, n] and out [rows, n]
 * contiguous from their element offsets. One work-item per output element,
 * grid-stride; each sums its row's products in order, as the CPU (the
 * results differ only where a compiler fuses a product into the sum).
 * sparse_matmul_f32; sparse_matmul_f64 where the device has doubles. */

DEVICE_FN long sp_index(GLOBAL const uchar* p, long i, int i64) {
  return i64 ? ((GLOBAL const long*)p)[i] : (long)((GLOBAL const int*)p)[i];
}

#define SP_DEFINE(T, S)                                                                                        \
  KERNEL void sparse_matmul_##S(GLOBAL const uchar* indptr, long poff, GLOBAL const uchar* indices, long ioff, \
                                int i64, GLOBAL const T* values, long voff, GLOBAL const T* x, long xoff,      \
                                GLOBAL T* out, long ooff, long rows, long n) {                                 \
    for (long e = GLOBAL_ID0(); e < rows * n; e += GLOBAL_SIZE0()) {                                           \
      const long r = e / n, c = e - r * n;                                                                     \
      const long end = sp_index(indptr, poff + r + 1, i64);                                                    \
      T s = (T)0;                                                                                              \
      for (long j = sp_index(indptr, poff + r, i64); j < end; ++j)                                             \
        s += values[voff + j] * x[xoff + sp_index(indices, ioff + j, i64) * n + c];                            \
      out[ooff + e] = s;                                                                                       \
    }                                                                                                          \
  }

SP_DEFINE(float, f32)
#if defined(TORSH_FP64)
SP_DEFINE(double, f64)
#endif
