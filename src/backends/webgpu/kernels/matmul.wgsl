//! bind a:in b:in out:out
//! use gemm_tile
// Batched GEMM out[bi] = alpha * a[bi] @ b[bi] + beta * out[bi] with any
// strides (transposes and broadcast batches are strides), f32, f16 or bf16
// storage with f32 accumulation. A 64 x 64 tile of out per work-group of
// 16 x 16 invocations, each holding a 4 x 4 block in registers; 64 x 16 tiles
// of a and b staged in workgroup memory. beta == 0 never reads out.
// P: [0] m [1] n [2] k [3..6) a strides {batch, row, col} [6..9) b [9..12) out
// [12] a offset [13] b offset [14] out offset [15] alpha [16] beta (f32 bits)
// [17] dtype [18] outputs in all (matmul_small). Groups (matmul_tiled): x over
// column tiles, y over row tiles, z over batches.

@compute @workgroup_size(16, 16)
fn matmul_tiled(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let m = P[0];
  let n = P[1];
  let k = P[2];
  let dt = P[17];
  let bi = wid.z;
  let a0 = P[12] + bi * P[3];
  let b0 = P[13] + bi * P[6];
  let row0 = wid.y * MT;
  let col0 = wid.x * MT;
  let t = lid.y * 16u + lid.x;  // 0..255
  var acc: array<f32, 16>;
  for (var i = 0u; i < 16u; i = i + 1u) { acc[i] = 0.0; }
  for (var k0 = 0u; k0 < k; k0 = k0 + KT) {
    // 1024 elements of each tile, 4 per invocation.
    for (var e = t; e < 1024u; e = e + 256u) {
      let kk = e / MT;
      let r = e % MT;
      var va = 0.0;
      if (row0 + r < m && k0 + kk < k) { va = a_f(a0 + (row0 + r) * P[4] + (k0 + kk) * P[5], dt); }
      ta[e] = va;
      var vb = 0.0;
      if (col0 + r < n && k0 + kk < k) { vb = b_f(b0 + (k0 + kk) * P[7] + (col0 + r) * P[8], dt); }
      tb[e] = vb;
    }
    workgroupBarrier();
    tile_accumulate(&acc, lid);
    workgroupBarrier();
  }
  let alpha = bitcast<f32>(P[15]);
  let beta = bitcast<f32>(P[16]);
  for (var i = 0u; i < 4u; i = i + 1u) {
    let row = row0 + lid.y + 16u * i;
    for (var j = 0u; j < 4u; j = j + 1u) {
      let col = col0 + lid.x + 16u * j;
      if (row < m && col < n) {
        let o = P[14] + bi * P[9] + row * P[10] + col * P[11];
        var v = alpha * acc[i * 4u + j];
        if (beta != 0.0) { v = v + beta * out_f(o, dt); }
        out_set_f(o, dt, v);
      }
    }
  }
}

// Small outputs (a few rows or columns per batch): one invocation per output
// element with a plain dot product, where a 64 x 64 tile would idle. Same
// params; one-dimensional grid over batch * m * n (run()).
@compute @workgroup_size(256)
fn matmul_small(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = linear_id(gid, nwg, 256u);
  let m = P[0];
  let n = P[1];
  if (e >= P[18]) { return; }
  let dt = P[17];
  let col = e % n;
  let row = (e / n) % m;
  let bi = e / (m * n);
  let ar = P[12] + bi * P[3] + row * P[4];
  let bc = P[13] + bi * P[6] + col * P[8];
  var acc = 0.0;
  for (var kk = 0u; kk < P[2]; kk = kk + 1u) { acc = acc + a_f(ar + kk * P[5], dt) * b_f(bc + kk * P[7], dt); }
  let o = P[14] + bi * P[9] + row * P[10] + col * P[11];
  var v = bitcast<f32>(P[15]) * acc;
  let beta = bitcast<f32>(P[16]);
  if (beta != 0.0) { v = v + beta * out_f(o, dt); }
  out_set_f(o, dt, v);
}
