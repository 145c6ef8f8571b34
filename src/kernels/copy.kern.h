/* Strided copy of 4-byte elements (src tensor 0 -> out tensor 1). */
KERNEL void copy_b32_strided(GLOBAL const uint* src, GLOBAL uint* out, META(StridedMeta) m) {
  for (long i = GLOBAL_ID0(); i < m.numel; i += GLOBAL_SIZE0())
    out[strided_offset(&m, 1, i)] = src[strided_offset(&m, 0, i)];
}
