/* Tiled batched GEMM (f32): out[b] = alpha * a[b] @ b[b] + beta * out[b].
 * Work-group TILE x TILE; dims: 0 -> columns, 1 -> rows, 2 -> batch.
 * Strides in elements: {batch, row, col} per operand. beta == 0 never reads out. */
/* MM_TILE and MatmulMeta: meta.h. */

KERNEL void matmul_f32_tiled(GLOBAL const float* a, GLOBAL const float* b, GLOBAL float* out, META(MatmulMeta) g) {
  LOCAL_ARRAY(float, ta, MM_TILE * MM_TILE);
  LOCAL_ARRAY(float, tb, MM_TILE * MM_TILE);
  const long tx = LOCAL_ID(0), ty = LOCAL_ID(1);
  const long col = GROUP_ID(0) * MM_TILE + tx;
  const long row = GROUP_ID(1) * MM_TILE + ty;
  const long bi = GROUP_ID(2);
  GLOBAL const float* A = a + g.oa + bi * g.sa[0];
  GLOBAL const float* B = b + g.ob + bi * g.sb[0];
  float acc = 0.0f;
  for (long t = 0; t < g.k; t += MM_TILE) {
    const long ac = t + tx, br = t + ty;
    ta[ty * MM_TILE + tx] = (row < g.m && ac < g.k) ? A[row * g.sa[1] + ac * g.sa[2]] : 0.0f;
    tb[ty * MM_TILE + tx] = (br < g.k && col < g.n) ? B[br * g.sb[1] + col * g.sb[2]] : 0.0f;
    BARRIER();
    for (int p = 0; p < MM_TILE; ++p) acc += ta[ty * MM_TILE + p] * tb[p * MM_TILE + tx];
    BARRIER();
  }
  if (row < g.m && col < g.n) {
    GLOBAL float* C = out + g.oo + bi * g.so[0] + row * g.so[1] + col * g.so[2];
    const float v = g.alpha * acc;
    *C = g.beta != 0.0f ? v + g.beta * *C : v;
  }
}
