/* index_select, as the CPU backend's index_select.cpp: contiguous out
 * [outer, m, inner] = x [outer, n, inner] at [o, ids[j], i]. Elements are moved
 * unchanged by their size es (1, 2, 4 or 8 bytes), so one kernel serves every
 * dtype. ids is contiguous i32 (ids_wide 0) or i64 (1), each in [0, n): the op
 * layer has checked them on the host. One work-item per output element
 * (grid-stride); ox, oi, oo: element offsets of the first elements. */

KERNEL void index_select_elems(GLOBAL const uchar* x, GLOBAL const uchar* ids, GLOBAL uchar* out, long ox, long oi,
                               long oo, long total, long n, long inner, long m, int es, int ids_wide) {
  for (long e = GLOBAL_ID0(); e < total; e += GLOBAL_SIZE0()) {
    const long i = e % inner, r = e / inner;
    const long j = r % m, o = r / m;
    const long id = ids_wide ? ((GLOBAL const long*)ids)[oi + j] : (long)((GLOBAL const int*)ids)[oi + j];
    const long s = (o * n + id) * inner + i;
    if (es == 4)
      ((GLOBAL uint*)out)[oo + e] = ((GLOBAL const uint*)x)[ox + s];
    else if (es == 8)
      ((GLOBAL ulong*)out)[oo + e] = ((GLOBAL const ulong*)x)[ox + s];
    else if (es == 2)
      ((GLOBAL ushort*)out)[oo + e] = ((GLOBAL const ushort*)x)[ox + s];
    else
      out[oo + e] = x[ox + s];
  }
}
