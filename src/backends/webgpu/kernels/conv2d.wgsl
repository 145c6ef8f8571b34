//! bind x:in w:in bias:in out:out
//! use gemm_tile
// NCHW convolution as an implicit GEMM, as the CPU backend's direct sum:
// out[n, k, p, q] = bias[k] + sum over (c, r, s) of x[n, g * Cg + c, h, w] *
// w[k, c, r, s] with h = p * sh - ph + r * dh, w = q * sw - pw + s * dw (zero
// outside the image). Rows of the GEMM are output pixels (n, p, q), columns
// the group's output channels, the reduction (c, r, s); input patches are
// gathered straight into workgroup memory (no unfolded copy). A 64 x 64 tile
// of out per work-group of 16 x 16, each invocation a 4 x 4 block; f32, f16
// or bf16 storage with f32 accumulation. Groups: x over channel tiles, y over
// pixel tiles, z over conv groups. An absent bias is bound to x, never read.
// P: [0] N [1] C [2] H [3] W [4] K [5] P [6] Q [7] R [8] S [9] sh [10] sw
// [11] ph [12] pw [13] dh [14] dw [15] groups [16] has bias [17] dtype
// [18..22) offsets of x, w, bias, out.

@compute @workgroup_size(16, 16)
fn conv2d_tiled(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let cin = P[1];
  let hh = i32(P[2]);
  let ww = i32(P[3]);
  let kout = P[4];
  let pp = P[5];
  let qq = P[6];
  let rr = P[7];
  let ss = P[8];
  let groups = P[15];
  let dt = P[17];
  let cg = cin / groups;
  let kg = kout / groups;
  let g = wid.z;
  let rows = P[0] * pp * qq;
  let red = cg * rr * ss;
  let row0 = wid.y * MT;
  let col0 = wid.x * MT;
  let t = lid.y * 16u + lid.x;
  var acc: array<f32, 16>;
  for (var i = 0u; i < 16u; i = i + 1u) { acc[i] = 0.0; }
  for (var k0 = 0u; k0 < red; k0 = k0 + KT) {
    for (var e = t; e < 1024u; e = e + 256u) {
      let kk = e / MT;
      let r = e % MT;
      let step = k0 + kk;
      var va = 0.0;
      let m = row0 + r;
      if (m < rows && step < red) {
        let n = m / (pp * qq);
        let pq = m % (pp * qq);
        let c = step / (rr * ss);
        let rs = step % (rr * ss);
        let h = i32((pq / qq) * P[9]) - i32(P[11]) + i32((rs / ss) * P[13]);
        let w = i32((pq % qq) * P[10]) - i32(P[12]) + i32((rs % ss) * P[14]);
        if (h >= 0 && h < hh && w >= 0 && w < ww) {
          va = x_f(P[18] + ((n * cin + g * cg + c) * P[2] + u32(h)) * P[3] + u32(w), dt);
        }
      }
      ta[e] = va;
      var vb = 0.0;
      if (col0 + r < kg && step < red) { vb = w_f(P[19] + (g * kg + col0 + r) * red + step, dt); }
      tb[e] = vb;
    }
    workgroupBarrier();
    tile_accumulate(&acc, lid);
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i = i + 1u) {
    let m = row0 + lid.y + 16u * i;
    for (var j = 0u; j < 4u; j = j + 1u) {
      let col = col0 + lid.x + 16u * j;
      if (m < rows && col < kg) {
        let k = g * kg + col;
        let n = m / (pp * qq);
        let pq = m % (pp * qq);
        var v = acc[i * 4u + j];
        if (P[16] != 0u) { v = v + bias_f(P[20] + k, dt); }
        out_set_f(P[21] + (n * kout + k) * pp * qq + pq, dt, v);
      }
    }
  }
}
