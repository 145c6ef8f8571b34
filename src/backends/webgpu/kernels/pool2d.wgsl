//! bind x:in out:out
// Max / average pooling of contiguous x [N, C, H, W] into out [N, C, P, Q], as
// the CPU backend's pool2d.cpp: padding counts as -inf for max (NaN wins);
// average divides by the whole window with count_include_pad, else by its
// in-bounds part. One invocation per output element; f32, f16 or bf16.
// P: [0] total [1] H [2] W [3] P [4] Q [5] kernel h [6] kernel w [7] stride h
// [8] stride w [9] pad h [10] pad w [11] max [12] count_include_pad [13] dtype
// [14] x offset [15] out offset.

@compute @workgroup_size(256)
fn pool2d_elems(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = linear_id(gid, nwg, 256u);
  if (e >= P[0]) { return; }
  let hh = i32(P[1]);
  let ww = i32(P[2]);
  let pp = P[3];
  let qq = P[4];
  let dt = P[13];
  let q = e % qq;
  let p = (e / qq) % pp;
  let nc = e / (pp * qq);
  let h0 = i32(p * P[7]) - i32(P[9]);
  let w0 = i32(q * P[8]) - i32(P[10]);
  let base = P[14] + nc * P[1] * P[2];
  var best = neg_inf();
  var sum = 0.0;
  var count = 0u;
  for (var i = 0; i < i32(P[5]); i = i + 1) {
    let h = h0 + i;
    if (h < 0 || h >= hh) { continue; }
    for (var j = 0; j < i32(P[6]); j = j + 1) {
      let w = w0 + j;
      if (w < 0 || w >= ww) { continue; }
      let v = x_f(base + u32(h) * P[2] + u32(w), dt);
      if (v > best || is_nan(v)) { best = v; }
      sum = sum + v;
      count = count + 1u;
    }
  }
  var r = best;
  if (P[11] == 0u) { r = sum / f32(select(count, P[5] * P[6], P[12] != 0u)); }
  out_set_f(P[15] + e, dt, r);
}
