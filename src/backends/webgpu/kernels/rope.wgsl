//! bind x:in cs:in sn:in out:out
// Rotary embedding on contiguous x [batch, seq, heads, hd] into out (same
// layout), as the CPU backend's rope.cpp: cos and sin are contiguous f32
// [max_pos, rot_dim / 2], token s at position pos0 + s. neox rotates halves
// (d, d + rot_dim / 2), GPT-J interleaved pairs (2i, 2i + 1); dimensions past
// rot_dim are copied. One invocation per element; f32, f16 or bf16 storage.
// P: [0] total [1] seq [2] heads [3] hd [4] rot_dim [5] pos0 [6] x offset
// [7] cos offset [8] sin offset [9] out offset [10] neox [11] dtype.

@compute @workgroup_size(256)
fn rope_elems(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = linear_id(gid, nwg, 256u);
  if (e >= P[0]) { return; }
  let hd = P[3];
  let rot = P[4];
  let dt = P[11];
  let d = e % hd;
  if (d >= rot) {
    out_set_f(P[9] + e, dt, x_f(P[6] + e, dt));
    return;
  }
  let nhalf = rot / 2u;
  let pos = P[5] + (e / (P[2] * hd)) % P[1];
  let row = e - d;
  var i: u32;
  var i0: u32;
  var i1: u32;
  if (P[10] != 0u) {
    i = select(d - nhalf, d, d < nhalf);
    i0 = i;
    i1 = i + nhalf;
  } else {
    i = d / 2u;
    i0 = 2u * i;
    i1 = 2u * i + 1u;
  }
  let c = cs_f(P[7] + pos * nhalf + i, ELEM_F32);
  let s = sn_f(P[8] + pos * nhalf + i, ELEM_F32);
  let x0 = x_f(P[6] + row + i0, dt);
  let x1 = x_f(P[6] + row + i1, dt);
  // Each product rounded, then the sum, as the host computes it (unfused:
  // prelude.wgsl).
  let p0 = unfused(x0 * c);
  let p1 = unfused(x1 * s);
  let p2 = unfused(x1 * c);
  let p3 = unfused(x0 * s);
  out_set_f(P[9] + e, dt, select(p2 + p3, p0 - p1, d == i0));
}
