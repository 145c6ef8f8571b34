/* rand / randn / bernoulli into contiguous out (n elements from element off),
 * as the CPU backend's random.cpp: element i is lane i % 4 of Philox block
 * (offset + i / 4) through philox_sample4 (philox.kern.h, the CPU's own code),
 * so every device writes the CPU's bits. One work-item per block of four
 * elements, grid-stride. seed and offset are 64-bit unsigned, passed as long.
 * random_elems stores f32, f16, bf16 (dt: ELEM_*); random_f64 stores the same
 * f32 samples widened, as the CPU does. */

KERNEL void random_elems(GLOBAL uchar* out, long off, long n, long seed, long offset, int kind, float a, float b,
                         int dt) {
  const long blocks = (n + 3) / 4;
  for (long j = GLOBAL_ID0(); j < blocks; j += GLOBAL_SIZE0()) {
    const PhiloxFloat4 v = philox_sample4(kind, a, b, philox4x32_10((ulong)offset + (ulong)j, (ulong)seed));
    for (int lane = 0; lane < 4 && 4 * j + lane < n; ++lane) store_elem(out, off + 4 * j + lane, dt, v.v[lane]);
  }
}

#if defined(TORSH_FP64)
KERNEL void random_f64(GLOBAL double* out, long off, long n, long seed, long offset, int kind, float a, float b) {
  const long blocks = (n + 3) / 4;
  for (long j = GLOBAL_ID0(); j < blocks; j += GLOBAL_SIZE0()) {
    const PhiloxFloat4 v = philox_sample4(kind, a, b, philox4x32_10((ulong)offset + (ulong)j, (ulong)seed));
    for (int lane = 0; lane < 4 && 4 * j + lane < n; ++lane) out[off + 4 * j + lane] = (double)v.v[lane];
  }
}
#endif
