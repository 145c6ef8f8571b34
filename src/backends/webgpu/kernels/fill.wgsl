//! bind dst:out
// Repeats a 1-, 2-, 4- or 8-byte pattern over dst[off .. off + n): byte a of
// the range is byte (a - off) % psize of the pattern. Each invocation owns one word.
// P: [0] off, [1] n, [2] pattern low word, [3] high word, [4] psize.
@compute @workgroup_size(256)
fn fill_bytes(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let off = P[0];
  let n = P[1];
  let psize = P[4];
  let w = (off >> 2u) + linear_id(gid, nwg, 256u);
  if (w * 4u >= off + n) { return; }
  var word = dst_word(w);
  for (var k = 0u; k < 4u; k = k + 1u) {
    let a = w * 4u + k;
    if (a >= off && a < off + n) {
      let j = (a - off) % psize;
      let b = select(P[2] >> (j * 8u), P[3] >> ((j - 4u) * 8u), j >= 4u) & 0xffu;
      word = with_byte(word, k, b);
    }
  }
  atomicStore(&dst[w], word);
}
