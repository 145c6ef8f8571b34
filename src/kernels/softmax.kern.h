/* Softmax / log-softmax over the middle axis of contiguous [outer, n, inner]
 * (f32). One work-group of SM_GROUP items per row; max and sum are reduced in
 * local memory. */
/* SM_GROUP: meta.h. */

KERNEL void softmax_f32_rows(GLOBAL const float* x, GLOBAL float* y, long n, long inner, int log_out) {
  LOCAL_ARRAY(float, red, SM_GROUP);
  const long row = GROUP_ID(0);
  const long lid = LOCAL_ID(0);
  const long base = (row / inner) * n * inner + (row % inner);
  float mx = -INFINITY;
  for (long i = lid; i < n; i += SM_GROUP) {
    const float v = x[base + i * inner];
    mx = (v > mx || v != v) ? v : mx;
  }
  red[lid] = mx;
  BARRIER();
  for (long s = SM_GROUP / 2; s > 0; s >>= 1) {
    if (lid < s) {
      const float o = red[lid + s];
      red[lid] = (o > red[lid] || o != o) ? o : red[lid];
    }
    BARRIER();
  }
  mx = red[0];
  BARRIER();
  const float shift = (mx == -INFINITY) ? 0.0f : mx;
  float sum = 0.0f;
  for (long i = lid; i < n; i += SM_GROUP) sum += exp(x[base + i * inner] - shift);
  red[lid] = sum;
  BARRIER();
  for (long s = SM_GROUP / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    BARRIER();
  }
  sum = red[0];
  if (log_out) {
    const float lse = log(sum);
    for (long i = lid; i < n; i += SM_GROUP) y[base + i * inner] = x[base + i * inner] - shift - lse;
  } else {
    const float inv = 1.0f / sum;
    for (long i = lid; i < n; i += SM_GROUP) y[base + i * inner] = exp(x[base + i * inner] - shift) * inv;
  }
}
