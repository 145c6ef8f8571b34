/* One LSTM or GRU step's gates, fused (rt::RnnGatesArgs), as the CPU
 * backend's rnn_gates.cpp computes them: one work-item per element (b, j) of
 * h_out [B, H], grid-stride, f32. Every operand is given by an element offset
 * and a row stride. gru: 0 for an LSTM (gates [B, 4H], state = c, c_out
 * written), 1 for a GRU (gates = gi and gh [B, 3H], state = h). keep: write
 * the activations into acts [B, 4H]. Operands a step lacks are passed as
 * h_out and never touched. */

DEVICE_FN float rnn_logistic(float x) { return 1.0f / (1.0f + exp(-x)); }

KERNEL void rnn_gates_f32(GLOBAL const float* gates, GLOBAL const float* gh, GLOBAL const float* state,
                          GLOBAL float* h_out, GLOBAL float* c_out, GLOBAL float* acts, long og, long sg, long oq,
                          long sq, long os, long ss, long oh, long sh, long oc, long sc, long oa, long sa, long rows,
                          long hid, int gru, int keep) {
  const long total = rows * hid;
  for (long e = GLOBAL_ID0(); e < total; e += GLOBAL_SIZE0()) {
    const long b = e / hid, j = e - b * hid;
    GLOBAL const float* g = gates + og + b * sg;
    GLOBAL float* a = acts + oa + b * sa;
    const float prev = state[os + b * ss + j];
    if (!gru) {
      const float i = rnn_logistic(g[j]), f = rnn_logistic(g[hid + j]);
      const float gg = tanh_sat(g[2 * hid + j]), o = rnn_logistic(g[3 * hid + j]);
      /* Each product rounded, then the sum, as the host computes it. */
      const float c = dot2_unfused(f, prev, i, gg);
      c_out[oc + b * sc + j] = c;
      h_out[oh + b * sh + j] = o * tanh_sat(c);
      if (keep) a[j] = i, a[hid + j] = f, a[2 * hid + j] = gg, a[3 * hid + j] = o;
    } else {
      GLOBAL const float* q = gh + oq + b * sq;
      const float r = rnn_logistic(g[j] + q[j]), z = rnn_logistic(g[hid + j] + q[hid + j]);
      const float ghn = q[2 * hid + j];
      const float n = tanh_sat(mul_add_unfused(r, ghn, g[2 * hid + j]));
      h_out[oh + b * sh + j] = dot2_unfused(1.0f - z, n, z, prev);
      if (keep) a[j] = r, a[hid + j] = z, a[2 * hid + j] = n, a[3 * hid + j] = ghn;
    }
  }
}
