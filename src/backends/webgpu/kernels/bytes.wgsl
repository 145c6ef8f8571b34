//! bind src:in dst:out
// dst[doff .. doff + n) = src[soff .. soff + n) at any byte offsets: each
// invocation owns one destination word and keeps its bytes outside the range.
// P: [0] soff, [1] doff, [2] n (bytes).
@compute @workgroup_size(256)
fn copy_bytes(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let soff = P[0];
  let doff = P[1];
  let n = P[2];
  let w = (doff >> 2u) + linear_id(gid, nwg, 256u);
  if (w * 4u >= doff + n) { return; }
  var word = dst_word(w);
  for (var k = 0u; k < 4u; k = k + 1u) {
    let a = w * 4u + k;
    if (a >= doff && a < doff + n) {
      let b = src_bits(a - doff + soff, 1u);
      word = with_byte(word, k, b);
    }
  }
  atomicStore(&dst[w], word);
}
