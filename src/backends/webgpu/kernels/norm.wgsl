//! bind x:in w:in b:in out:out
//! use group_reduce
// LayerNorm / RMSNorm over the rows of contiguous x [rows, n] into out, as the
// CPU backend's norm.cpp: two passes in f32 (the mean, summed about the row's
// first element so a row far from zero keeps its digits, then the mean square
// of x - mean), then (x - mean) * inv * weight + bias. One work-group of 128
// per row (run_rows); f32, f16 or bf16 storage. An absent weight or bias is
// bound to x and never read.
// P: [0] n [1] x offset [2] w offset [3] b offset [4] out offset [5] eps (f32
// bits) [6] rms [7] has weight [8] has bias [9] dtype.

@compute @workgroup_size(128)
fn norm_rows(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
  let lid = lid3.x;
  let row = group_index(wid, nwg);
  let n = P[0];
  let dt = P[9];
  let xr = P[1] + row * n;
  let orow = P[4] + row * n;
  var mean = 0.0;
  if (P[6] == 0u) {
    let shift = x_f(xr, dt);
    var s = 0.0;
    for (var i = lid; i < n; i = i + 128u) { s = s + (x_f(xr + i, dt) - shift); }
    mean = shift + group_sum(s, lid) / f32(n);
  }
  var ss = 0.0;
  for (var i = lid; i < n; i = i + 128u) {
    let d = x_f(xr + i, dt) - mean;
    ss = ss + d * d;
  }
  let inv = 1.0 / sqrt(group_sum(ss, lid) / f32(n) + bitcast<f32>(P[5]));
  for (var i = lid; i < n; i = i + 128u) {
    var v = (x_f(xr + i, dt) - mean) * inv;
    if (P[7] != 0u) { v = v * w_f(P[2] + i, dt); }
    if (P[8] != 0u) { v = v + b_f(P[3] + i, dt); }
    out_set_f(orow + i, dt, v);
  }
}
