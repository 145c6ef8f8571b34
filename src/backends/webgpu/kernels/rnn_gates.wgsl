//! bind g:in q:in st:in h:out c:out acts:out
// One LSTM or GRU step's gates, fused (rt::RnnGatesArgs), as the CPU
// backend's rnn_gates.cpp and src/backends/gpu/kernels/rnn_gates.kern.h compute them, f32:
// one invocation per element (b, j) of h_out [B, H]. Every operand is given
// by an element offset and a row stride. gru: 0 for an LSTM (g = gates
// [B, 4H], st = c, c written), 1 for a GRU (g = gi and q = gh [B, 3H], st =
// h). keep: write the activations into acts [B, 4H]. Operands a step lacks
// are bound as h and never touched. The logistic and tanh are unary.wgsl's.
// P: [0] g offset [1] g row stride [2] q offset [3] q stride [4] st offset
//    [5] st stride [6] h offset [7] h stride [8] c offset [9] c stride
//    [10] acts offset [11] acts stride [12] rows [13] hidden [14] gru [15] keep.

fn rnn_logistic(x: f32) -> f32 { return 1.0 / (1.0 + exp(-x)); }

@compute @workgroup_size(256)
fn rnn_gates_elems(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = linear_id(gid, nwg, 256u);
  let hid = P[13];
  if (e >= P[12] * hid) { return; }
  let b = e / hid;
  let j = e - b * hid;
  let go = P[0] + b * P[1];
  let ao = P[10] + b * P[11];
  let prev = st_f(P[4] + b * P[5] + j, ELEM_F32);
  if (P[14] == 0u) {
    let i = rnn_logistic(g_f(go + j, ELEM_F32));
    let f = rnn_logistic(g_f(go + hid + j, ELEM_F32));
    let gg = tanh_acc(g_f(go + 2u * hid + j, ELEM_F32));
    let o = rnn_logistic(g_f(go + 3u * hid + j, ELEM_F32));
    // Each product rounded, then the sum, as the host computes it.
    let cn = unfused(f * prev) + unfused(i * gg);
    c_set_f(P[8] + b * P[9] + j, ELEM_F32, cn);
    h_set_f(P[6] + b * P[7] + j, ELEM_F32, unfused(o * tanh_acc(cn)));
    if (P[15] != 0u) {
      acts_set_f(ao + j, ELEM_F32, i);
      acts_set_f(ao + hid + j, ELEM_F32, f);
      acts_set_f(ao + 2u * hid + j, ELEM_F32, gg);
      acts_set_f(ao + 3u * hid + j, ELEM_F32, o);
    }
  } else {
    let qo = P[2] + b * P[3];
    let r = rnn_logistic(g_f(go + j, ELEM_F32) + q_f(qo + j, ELEM_F32));
    let z = rnn_logistic(g_f(go + hid + j, ELEM_F32) + q_f(qo + hid + j, ELEM_F32));
    let ghn = q_f(qo + 2u * hid + j, ELEM_F32);
    let nn = tanh_acc(unfused(r * ghn) + g_f(go + 2u * hid + j, ELEM_F32));
    h_set_f(P[6] + b * P[7] + j, ELEM_F32, unfused((1.0 - z) * nn) + unfused(z * prev));
    if (P[15] != 0u) {
      acts_set_f(ao + j, ELEM_F32, r);
      acts_set_f(ao + hid + j, ELEM_F32, z);
      acts_set_f(ao + 2u * hid + j, ELEM_F32, nn);
      acts_set_f(ao + 3u * hid + j, ELEM_F32, ghn);
    }
  }
}
