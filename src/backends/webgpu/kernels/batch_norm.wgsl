//! bind x:in w:in b:in rm:out rv:out out:out
//! use group_reduce
// Batch normalisation of contiguous x [N, C, S] into out, as the CPU backend's
// norm.cpp: one work-group of 128 per channel (run_rows). Training normalises
// with the batch's mean and biased variance, sums in f32 about the channel's
// first element (so values far from zero keep their digits), and updates the
// running statistics with momentum and the unbiased variance; inference uses
// the running statistics. Products are rounded before their sums, as the
// host's (unfused: prelude.wgsl). f32, f16 or bf16 storage. Absent tensors are bound
// to x and never touched.
// P: [0] N [1] C [2] S [3] training [4] has weight [5] has bias [6] has
// running stats [7] momentum [8] eps (f32 bits) [9] dtype [10..16) offsets of
// x, w, b, rm, rv, out.

@compute @workgroup_size(128)
fn batch_norm_channels(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
                       @builtin(num_workgroups) nwg: vec3<u32>) {
  let lid = lid3.x;
  let c = group_index(wid, nwg);
  let nn = P[0];
  let cc = P[1];
  let ss = P[2];
  let dt = P[9];
  let count = nn * ss;
  var mean: f32;
  var var_: f32;
  if (P[3] != 0u) {
    let shift = x_f(P[10] + c * ss, dt);
    var s = 0.0;
    for (var e = lid; e < count; e = e + 128u) { s = s + (x_f(P[10] + ((e / ss) * cc + c) * ss + e % ss, dt) - shift); }
    mean = shift + group_sum(s, lid) / f32(count);
    var q = 0.0;
    for (var e = lid; e < count; e = e + 128u) {
      let d = x_f(P[10] + ((e / ss) * cc + c) * ss + e % ss, dt) - mean;
      q = q + d * d;
    }
    q = group_sum(q, lid);
    var_ = q / f32(count);
    if (P[6] != 0u && lid == 0u) {
      let m = bitcast<f32>(P[7]);
      let unbiased = select(var_, q / f32(count - 1u), count > 1u);
      rm_set_f(P[13] + c, dt, unfused((1.0 - m) * rm_f(P[13] + c, dt)) + unfused(m * mean));
      rv_set_f(P[14] + c, dt, unfused((1.0 - m) * rv_f(P[14] + c, dt)) + unfused(m * unbiased));
    }
  } else {
    mean = rm_f(P[13] + c, dt);
    var_ = rv_f(P[14] + c, dt);
  }
  let inv = 1.0 / sqrt(var_ + bitcast<f32>(P[8]));
  var scale = inv;
  if (P[4] != 0u) { scale = inv * w_f(P[11] + c, dt); }
  var shift = 0.0;
  if (P[5] != 0u) { shift = b_f(P[12] + c, dt); }
  shift = shift - unfused(mean * scale);
  for (var e = lid; e < count; e = e + 128u) {
    let i = ((e / ss) * cc + c) * ss + e % ss;
    out_set_f(P[15] + i, dt, unfused(x_f(P[10] + i, dt) * scale) + shift);
  }
}
