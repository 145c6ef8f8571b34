#pragma once
// Kernel sources more than one user-kernel test builds.

namespace torsh::test {

// Every name of the dialect, so each compiler is shown to take the whole header.
inline const char* kDialectTour = R"(DEVICE_FN float twice(float v) { return 2.0f * v; }
KERNEL void tour(GLOBAL float* y, GLOBAL const ushort* h, GLOBAL uchar* flags, GLOBAL double* d, uint n) {
  LOCAL_ARRAY(float, tile, 64);
  LOCAL_PTR(float) p = tile;
  const long i = GLOBAL_ID(0) + GLOBAL_ID(1) * GLOBAL_SIZE(0) + GLOBAL_ID(2) * GLOBAL_SIZE(0) * GLOBAL_SIZE(1);
  const long g = GROUP_ID(0) + GROUP_ID(1) + GROUP_ID(2) + NUM_GROUPS(0) + NUM_GROUPS(1) + NUM_GROUPS(2);
  const long l = LOCAL_ID(0) + LOCAL_ID(1) + LOCAL_ID(2) + LOCAL_SIZE(0) + LOCAL_SIZE(1) + LOCAL_SIZE(2);
  p[LOCAL_ID(0) % 64] = half_bits_to_float(h[i]);
  BARRIER();
  if ((ulong)i < n) {
    const float v = mul_add_unfused(twice(p[LOCAL_ID(0) % 64]), 3.0f, (float)(g + l));
    y[i] = AS_FLOAT(AS_UINT(v));
    flags[i] = (uchar)(float_to_half_bits(v) != 0u) | (uchar)((float_to_bf16_bits(v) & 1u) << 1);
#ifdef TORSH_FP64
    d[i] = mul_add_unfused_f64((double)v, 0.5, 1.0);
#endif
  }
}
)";

}  // namespace torsh::test
