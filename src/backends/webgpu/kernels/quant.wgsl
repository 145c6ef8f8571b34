//! bind x:in w:in ids:in out:out
// Block-quantized weights (torsh/core/quant.hpp: ggml's Q4_0, Q4_1, Q8_0, Q5_0,
// Q5_1), as src/backends/gpu/kernels/quant.kern.h: rows dequantized (and
// embedding lookups), and qmatmul out[m, n] = x[m, k] @ dequantize(w)^T with f32
// activations. Blocks are 18, 20, 34, 22 or 24 bytes, so levels are read as
// bytes and the f16 scales assembled from two. An absent ids (or x) is bound to
// w and never read.
// P (both): [0] format (0 Q4_0, 1 Q4_1, 2 Q8_0, 3 Q5_0, 4 Q5_1) [1] w offset
// (bytes) [2] x or ids offset [3] out offset.

fn block_bytes(fmt: u32) -> u32 {
  switch (fmt) {
    case 0u: { return 18u; }
    case 1u: { return 20u; }
    case 3u: { return 22u; }
    case 4u: { return 24u; }
    default: { return 34u; }
  }
}

// Q4_1 and Q5_1 carry a minimum: x = q d + m.
fn has_min(fmt: u32) -> bool { return fmt == 1u || fmt == 4u; }

// The byte where a 4/5-bit format's nibbles start.
fn nibbles_at(fmt: u32) -> u32 {
  switch (fmt) {
    case 0u: { return 2u; }
    case 1u: { return 4u; }
    case 3u: { return 6u; }
    default: { return 8u; }
  }
}

fn quant_half(at: u32) -> f32 { return half_bits_to_float(w_bits(at, 1u) | (w_bits(at + 1u, 1u) << 8u)); }

// Level of element j (0..31) of the block at byte `blk`: nibble byte j % 16
// holds j in its low nibble when j < 16, j - 16 in its high one; Q5 adds bit j
// of the u32 before the nibbles as 16 (Q4_0 centred on 8, Q5_0 on 16); Q8_0 a
// signed byte.
fn quant_level(fmt: u32, blk: u32, j: u32) -> f32 {
  if (fmt == 2u) { return f32((i32(w_bits(blk + 2u + j, 1u)) << 24u) >> 24u); }
  let at = blk + nibbles_at(fmt);
  let b = w_bits(at + (j & 15u), 1u);
  var q = select(b >> 4u, b & 15u, j < 16u);
  if (fmt >= 3u) { q = q | (((w_bits(at - 4u + (j >> 3u), 1u) >> (j & 7u)) & 1u) << 4u); }
  if (fmt == 0u) { return f32(i32(q) - 8); }
  if (fmt == 3u) { return f32(i32(q) - 16); }
  return f32(q);
}

// P: [4] cols [5] total [6] ids width (0 none, 4 i32, 8 i64: the op layer has
// range-checked the ids, so an i64's low word is the id) [7] out dtype.
@compute @workgroup_size(256)
fn dequantize_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg, 256u);
  if (i >= P[5]) { return; }
  let fmt = P[0];
  let cols = P[4];
  let r = i / cols;
  let c = i - r * cols;
  var row = r;
  if (P[6] == 4u) { row = ids_word(P[2] + r); }
  if (P[6] == 8u) { row = ids_word(2u * (P[2] + r)); }
  let blk = P[1] + (row * (cols / 32u) + c / 32u) * block_bytes(fmt);
  let q = quant_level(fmt, blk, c & 31u);
  let d = quant_half(blk);
  var v: f32;
  if (has_min(fmt)) {
    let p = unfused(q * d);  // rounded, then the sum, as the host
    v = p + quant_half(blk + 2u);
  } else {
    v = q * d;
  }
  out_set_f(P[3] + i, P[7], v);
}

// qmatmul, as quant.kern.h's qmatmul_f32: work-group g (64 invocations)
// computes weight row g % n against activation rows [(g / n) * 4, + 4); each
// invocation strides over the row's quarter blocks (8 weights), decoding them
// once for all its x rows; partial sums meet in workgroup memory. Groups laid
// out by run_rows. P: [4] m [5] n [6] k.
var<workgroup> red: array<f32, 256>;  // [4 rows][64]

@compute @workgroup_size(64)
fn qmatmul_rows(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
  let lid = lid3.x;
  let g = group_index(wid, nwg);
  let fmt = P[0];
  let m = P[4];
  let n = P[5];
  let k = P[6];
  let row = g % n;
  let r0 = (g / n) * 4u;
  let rows = min(m - r0, 4u);
  let nb = k / 32u;
  let bytes = block_bytes(fmt);
  let wrow = P[1] + row * nb * bytes;
  var acc = vec4<f32>(0.0);
  for (var u = lid; u < nb * 4u; u = u + 64u) {
    let b = u >> 2u;
    let t = u & 3u;
    let blk = wrow + b * bytes;
    let d = quant_half(blk);
    var mn = 0.0;
    if (has_min(fmt)) { mn = quant_half(blk + 2u); }
    var lv: array<f32, 8>;
    for (var e = 0u; e < 8u; e = e + 1u) { lv[e] = quant_level(fmt, blk, 4u * t + select(e + 12u, e, e < 4u)); }
    for (var r = 0u; r < 4u; r = r + 1u) {
      if (r < rows) {
        let xr = P[2] + (r0 + r) * k + b * 32u + 4u * t;
        var dot = 0.0;
        var sx = 0.0;
        for (var e = 0u; e < 8u; e = e + 1u) {
          let xv = x_f(xr + select(e + 12u, e, e < 4u), ELEM_F32);
          dot = dot + lv[e] * xv;
          sx = sx + xv;
        }
        acc[r] = acc[r] + select(d * dot, d * dot + mn * sx, has_min(fmt));
      }
    }
  }
  for (var r = 0u; r < 4u; r = r + 1u) { red[r * 64u + lid] = acc[r]; }
  workgroupBarrier();
  for (var s = 32u; s > 0u; s = s >> 1u) {
    if (lid < s) {
      for (var r = 0u; r < 4u; r = r + 1u) { red[r * 64u + lid] = red[r * 64u + lid] + red[r * 64u + lid + s]; }
    }
    workgroupBarrier();
  }
  if (lid < rows) { out_set_f(P[3] + (r0 + lid) * n + row, ELEM_F32, red[lid * 64u]); }
}
