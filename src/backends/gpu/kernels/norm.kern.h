/* LayerNorm / RMSNorm over the rows of contiguous x [rows, n] into out, as the
 * CPU backend's norm.cpp: two passes in f32 (the mean, then the mean square
 * of x - mean), then (x - mean) * inv * weight + bias. One NM_GROUP work-group
 * per row; f32, f16 or bf16 storage (dt: ELEM_*) in norm_rows, f64 with f64
 * math in norm_f64_rows (where the device has doubles). weight and bias are
 * read only when has_w / has_b; offsets are the tensors' first elements. */

DEVICE_FN float norm_group_sum(LOCAL_PTR(float) red, float v, long lid) {
  red[lid] = v;
  BARRIER();
  for (long s = NM_GROUP / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    BARRIER();
  }
  const float total = red[0];
  BARRIER();
  return total;
}

KERNEL void norm_rows(GLOBAL const uchar* x, GLOBAL const uchar* w, GLOBAL const uchar* b, GLOBAL uchar* out, long n,
                      long ox, long ow, long ob, long oo, float eps, int rms, int has_w, int has_b, int dt) {
  LOCAL_ARRAY(float, red, NM_GROUP);
  const long row = GROUP_ID(0);
  const long lid = LOCAL_ID(0);
  const long xr = ox + row * n, orow = oo + row * n;
  float mean = 0.0f;
  if (!rms) {
    /* Summed about the row's first element, so a row far from zero loses no
     * digits of its mean to the large partial sums. */
    const float shift = load_elem(x, xr, dt);
    float s = 0.0f;
    for (long i = lid; i < n; i += NM_GROUP) s += load_elem(x, xr + i, dt) - shift;
    mean = shift + norm_group_sum(red, s, lid) / (float)n;
  }
  float ss = 0.0f;
  for (long i = lid; i < n; i += NM_GROUP) {
    const float d = load_elem(x, xr + i, dt) - mean;
    ss += d * d;
  }
  const float inv = 1.0f / sqrt(norm_group_sum(red, ss, lid) / (float)n + eps);
  for (long i = lid; i < n; i += NM_GROUP) {
    float v = (load_elem(x, xr + i, dt) - mean) * inv;
    if (has_w) v *= load_elem(w, ow + i, dt);
    if (has_b) v += load_elem(b, ob + i, dt);
    store_elem(out, orow + i, dt, v);
  }
}

#if defined(TORSH_FP64)
DEVICE_FN double norm_group_sum_f64(LOCAL_PTR(double) red, double v, long lid) {
  red[lid] = v;
  BARRIER();
  for (long s = NM_GROUP / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    BARRIER();
  }
  const double total = red[0];
  BARRIER();
  return total;
}

KERNEL void norm_f64_rows(GLOBAL const double* x, GLOBAL const double* w, GLOBAL const double* b, GLOBAL double* out,
                          long n, long ox, long ow, long ob, long oo, float eps, int rms, int has_w, int has_b) {
  LOCAL_ARRAY(double, red, NM_GROUP);
  const long row = GROUP_ID(0);
  const long lid = LOCAL_ID(0);
  const long xr = ox + row * n, orow = oo + row * n;
  double mean = 0.0;
  if (!rms) { /* about the row's first element, as norm_rows */
    const double shift = x[xr];
    double s = 0.0;
    for (long i = lid; i < n; i += NM_GROUP) s += x[xr + i] - shift;
    mean = shift + norm_group_sum_f64(red, s, lid) / (double)n;
  }
  double ss = 0.0;
  for (long i = lid; i < n; i += NM_GROUP) {
    const double d = x[xr + i] - mean;
    ss += d * d;
  }
  const double inv = 1.0 / sqrt(norm_group_sum_f64(red, ss, lid) / (double)n + (double)eps);
  for (long i = lid; i < n; i += NM_GROUP) {
    double v = (x[xr + i] - mean) * inv;
    if (has_w) v *= w[ow + i];
    if (has_b) v += b[ob + i];
    out[orow + i] = v;
  }
}
#endif
