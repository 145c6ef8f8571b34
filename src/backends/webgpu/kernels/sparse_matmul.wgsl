//! bind ip:in ix:in val:in x:in out:out
// CSR @ dense, as the CPU backend's sparse_matmul.cpp (rt::SparseMatmulArgs):
// indptr and indices i32 or i64, values, x [cols, n] and out [rows, n] f32,
// contiguous from their element offsets. One invocation per output element;
// each sums its row's products in order, as the CPU does. i64 indices are
// read by their low word: the op layer checked them against sizes that fit
// one binding.
// P: [0] indptr offset [1] indices offset [2] index dtype [3] values offset
//    [4] x offset [5] out offset [6] rows [7] n.

fn sp_ptr(i: u32) -> u32 {
  if (P[2] == ELEM_I64) { return ip_i64(i).x; }
  return bitcast<u32>(ip_i(i, ELEM_I32));
}

fn sp_col(i: u32) -> u32 {
  if (P[2] == ELEM_I64) { return ix_i64(i).x; }
  return bitcast<u32>(ix_i(i, ELEM_I32));
}

@compute @workgroup_size(256)
fn sparse_matmul_elems(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = linear_id(gid, nwg, 256u);
  let n = P[7];
  if (e >= P[6] * n) { return; }
  let r = e / n;
  let c = e - r * n;
  let end = sp_ptr(P[0] + r + 1u);
  var s = 0.0;
  for (var j = sp_ptr(P[0] + r); j < end; j = j + 1u) {
    s = s + unfused(val_f(P[3] + j, ELEM_F32) * x_f(P[4] + sp_col(P[1] + j) * n + c, ELEM_F32));
  }
  out_set_f(P[5] + e, ELEM_F32, s);
}
