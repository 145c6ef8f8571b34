/* Strided copies (src tensor 0 -> out tensor 1) of elements of 1, 2, 4 or 8
 * bytes, moved unchanged whatever their dtype. */
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
