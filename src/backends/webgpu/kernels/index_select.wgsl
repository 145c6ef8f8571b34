//! bind x:in ids:in out:out
// index_select, as src/backends/gpu/kernels/index_select.kern.h: contiguous
// out [outer, m, inner] = x [outer, n, inner] at [o, ids[j], i], elements moved
// unchanged by their size es (1, 2 or 4 bytes through the byte accessors, 8 as
// two words), so every dtype. ids is i32 or i64, each in [0, n < 2^31) (checked
// by the op layer), so an i64's low word is the id. One invocation per element.
// P: [0] x offset [1] ids offset [2] out offset [3] total [4] n [5] inner [6] m
// [7] es [8] ids width (4 or 8).

@compute @workgroup_size(256)
fn index_select_elems(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = linear_id(gid, nwg, 256u);
  if (e >= P[3]) { return; }
  let inner = P[5];
  let m = P[6];
  let i = e % inner;
  let r = e / inner;
  let j = r % m;
  let o = r / m;
  let id = select(ids_word(P[1] + j), ids_word(2u * (P[1] + j)), P[8] == 8u);
  let s = P[0] + (o * P[4] + id) * inner + i;
  let d = P[2] + e;
  let es = P[7];
  if (es == 8u) {
    out_put_bits(d * 8u, 4u, x_word(2u * s));
    out_put_bits(d * 8u + 4u, 4u, x_word(2u * s + 1u));
  } else {
    out_put_bits(d * es, es, x_bits(s * es, es));
  }
}
