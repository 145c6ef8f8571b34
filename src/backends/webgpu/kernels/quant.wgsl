//! bind x:in w:in ids:in out:out
// Block-quantized weights (torsh/core/quant.hpp: ggml's Q4_0, Q4_1, Q8_0, Q5_0,
// Q5_1, IQ4_NL of 32 elements and Q2_K .. Q6_K, IQ4_XS of 256), as
// src/backends/gpu/kernels/quant.kern.h: rows dequantized (and embedding
// lookups), and qmatmul out[m, n] = x[m, k] @ dequantize(w)^T with f32
// activations. Every format is read per 32-element block b of a row (a K
// format's sub-block b % 8 of super-block b / 8). Blocks are 18 .. 210 bytes,
// so levels are read as bytes and the f16 scales assembled from two. An absent
// ids (or x) is bound to w and never read.
// P (both): [0] format (0 Q4_0, 1 Q4_1, 2 Q8_0, 3 Q5_0, 4 Q5_1, 5 Q4_K, 6 Q5_K,
// 7 Q6_K, 8 IQ4_NL, 9 IQ4_XS, 10 Q2_K, 11 Q3_K) [1] w offset (bytes) [2] x or ids offset [3] out offset.

fn super_blocks(fmt: u32) -> bool { return fmt == 5u || fmt == 6u || fmt == 7u || fmt >= 9u; }

// IQ4_NL's and IQ4_XS's 16 levels (torsh::kIq4Levels).
var<private> IQ4_LEVELS: array<i32, 16> = array<i32, 16>(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38,
                                                         53, 69, 89, 113);

fn block_bytes(fmt: u32) -> u32 {
  switch (fmt) {
    case 0u: { return 18u; }
    case 1u: { return 20u; }
    case 3u: { return 22u; }
    case 4u: { return 24u; }
    case 5u: { return 144u; }
    case 6u: { return 176u; }
    case 7u: { return 210u; }
    case 8u: { return 18u; }
    case 9u: { return 136u; }
    case 10u: { return 84u; }
    case 11u: { return 110u; }
    default: { return 34u; }
  }
}

// Elements per block.
fn block_elems(fmt: u32) -> u32 { return select(32u, 256u, super_blocks(fmt)); }

// Q4_1, Q5_1, Q4_K, Q5_K and Q2_K (per 16 elements) carry a minimum: x = q d + m.
fn has_min(fmt: u32) -> bool { return fmt == 1u || fmt == 4u || fmt == 5u || fmt == 6u || fmt == 10u; }

// Q3_K: the 6-bit scale i (0..15) less 32.
fn q3_scale(blk: u32, i: u32) -> i32 {
  let low = (w_bits(blk + 96u + (i & 7u), 1u) >> (4u * (i >> 3u))) & 15u;
  let high = (w_bits(blk + 104u + (i & 3u), 1u) >> (2u * (i >> 2u))) & 3u;
  return i32(low | (high << 4u)) - 32;
}

// The byte where a 32-format's nibbles start.
fn nibbles_at(fmt: u32) -> u32 {
  switch (fmt) {
    case 0u, 8u: { return 2u; }
    case 1u: { return 4u; }
    case 3u: { return 6u; }
    default: { return 8u; }
  }
}

fn quant_half(at: u32) -> f32 { return half_bits_to_float(w_bits(at, 1u) | (w_bits(at + 1u, 1u) << 8u)); }

// Byte of the block holding 32-element block b of the row at byte `row`.
fn block_of(row: u32, fmt: u32, b: u32) -> u32 { return row + select(b, b >> 3u, super_blocks(fmt)) * block_bytes(fmt); }

// Q4_K / Q5_K: sub-block j's 6-bit scale (want_min false) or minimum (true)
// from the 12 scale bytes at byte 4.
fn k_scale(blk: u32, j: u32, want_min: bool) -> u32 {
  let s = blk + 4u;
  let mo = select(0u, 4u, want_min);
  if (j < 4u) { return w_bits(s + j + mo, 1u) & 63u; }
  let low = select(w_bits(s + j + 4u, 1u) & 15u, w_bits(s + j + 4u, 1u) >> 4u, want_min);
  return low | ((w_bits(s + j - 4u + mo, 1u) >> 6u) << 4u);
}

// Scale of element e of block j (a K format's sub-block, else 0): f16 d, or
// d * sc in f32 as the host's dequantizer rounds it (Q6_K: per 16 elements).
fn quant_scale(fmt: u32, blk: u32, j: u32, e: u32) -> f32 {
  if (fmt == 10u) { return unfused(quant_half(blk + 80u) * f32(w_bits(blk + 2u * j + (e >> 4u), 1u) & 15u)); }
  if (fmt == 11u) { return unfused(quant_half(blk + 108u) * f32(q3_scale(blk, 2u * j + (e >> 4u)))); }
  if (fmt == 7u) {
    let sc = (i32(w_bits(blk + 192u + 2u * j + (e >> 4u), 1u)) << 24u) >> 24u;
    return unfused(quant_half(blk + 208u) * f32(sc));
  }
  if (fmt == 9u) {
    let low = (w_bits(blk + 4u + (j >> 1u), 1u) >> (4u * (j & 1u))) & 15u;
    let high = (((w_bits(blk + 2u, 1u) | (w_bits(blk + 3u, 1u) << 8u)) >> (2u * j)) & 3u) << 4u;
    return unfused(quant_half(blk) * f32(i32(low | high) - 32));
  }
  if (super_blocks(fmt)) { return unfused(quant_half(blk) * f32(k_scale(blk, j, false))); }
  return quant_half(blk);
}

// The minimum m of block j (formats with one; Q2_K: of element e's 16).
fn quant_min(fmt: u32, blk: u32, j: u32, e: u32) -> f32 {
  if (fmt == 10u) { return -unfused(quant_half(blk + 82u) * f32(w_bits(blk + 2u * j + (e >> 4u), 1u) >> 4u)); }
  if (super_blocks(fmt)) { return -unfused(quant_half(blk + 2u) * f32(k_scale(blk, j, true))); }
  return quant_half(blk + 2u);
}

// Level of element e (0..31) of block j: a 32-format's nibble byte e % 16
// holds e in its low nibble when e < 16, e - 16 in its high one; Q5 adds bit e
// of the u32 before the nibbles as 16 (Q4_0 centred on 8, Q5_0 on 16); Q8_0 a
// signed byte; the K formats as quant.hpp lays them out (Q6_K centred on 32).
fn quant_level(fmt: u32, blk: u32, j: u32, e: u32) -> f32 {
  if (fmt == 2u) { return f32((i32(w_bits(blk + 2u + e, 1u)) << 24u) >> 24u); }
  if (fmt == 10u || fmt == 11u) {
    let q = i32((w_bits(blk + select(32u, 16u, fmt == 10u) + 32u * (j >> 2u) + e, 1u) >> (2u * (j & 3u))) & 3u);
    if (fmt == 10u || ((w_bits(blk + e, 1u) >> j) & 1u) == 1u) { return f32(q); }
    return f32(q - 4);
  }
  if (fmt == 8u || fmt == 9u) {
    let qs = blk + select(8u + 16u * j, 2u, fmt == 8u);
    return f32(IQ4_LEVELS[(w_bits(qs + (e & 15u), 1u) >> select(4u, 0u, e < 16u)) & 15u]);
  }
  if (fmt == 7u) {
    let h = j >> 2u;
    let s = j & 3u;
    let low = (w_bits(blk + 64u * h + 32u * (s & 1u) + e, 1u) >> (4u * (s >> 1u))) & 15u;
    let high = (w_bits(blk + 128u + 32u * h + e, 1u) >> (2u * s)) & 3u;
    return f32(i32(low | (high << 4u)) - 32);
  }
  if (super_blocks(fmt)) {
    let q5 = fmt == 6u;
    var q = (w_bits(blk + select(16u, 48u, q5) + 32u * (j >> 1u) + e, 1u) >> (4u * (j & 1u))) & 15u;
    if (q5) { q = q | (((w_bits(blk + 16u + e, 1u) >> j) & 1u) << 4u); }
    return f32(q);
  }
  let at = blk + nibbles_at(fmt);
  let b = w_bits(at + (e & 15u), 1u);
  var q = select(b >> 4u, b & 15u, e < 16u);
  if (fmt >= 3u) { q = q | (((w_bits(at - 4u + (e >> 3u), 1u) >> (e & 7u)) & 1u) << 4u); }
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
  let blk = block_of(P[1] + row * (cols / block_elems(fmt)) * block_bytes(fmt), fmt, c / 32u);
  let j = select(0u, (c / 32u) & 7u, super_blocks(fmt));
  let q = quant_level(fmt, blk, j, c & 31u);
  let d = quant_scale(fmt, blk, j, c & 31u);
  var v: f32;
  if (has_min(fmt)) {
    let p = unfused(q * d);  // rounded, then the sum, as the host
    v = p + quant_min(fmt, blk, j, c & 31u);
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
  let wrow = P[1] + row * (k / block_elems(fmt)) * block_bytes(fmt);
  var acc = vec4<f32>(0.0);
  for (var u = lid; u < nb * 4u; u = u + 64u) {
    let b = u >> 2u;
    let t = u & 3u;
    let blk = block_of(wrow, fmt, b);
    let j = select(0u, b & 7u, super_blocks(fmt));
    // Elements 4t.. lie in the block's first half, 16 + 4t.. in its second (Q6_K's scales differ).
    let d0 = quant_scale(fmt, blk, j, 0u);
    let d1 = quant_scale(fmt, blk, j, 16u);
    var m0 = 0.0;  // the minima of the two halves (Q2_K's differ)
    var m1 = 0.0;
    if (has_min(fmt)) {
      m0 = quant_min(fmt, blk, j, 0u);
      m1 = quant_min(fmt, blk, j, 16u);
    }
    var lv: array<f32, 8>;
    for (var e = 0u; e < 8u; e = e + 1u) { lv[e] = quant_level(fmt, blk, j, 4u * t + select(e + 12u, e, e < 4u)); }
    for (var r = 0u; r < 4u; r = r + 1u) {
      if (r < rows) {
        let xr = P[2] + (r0 + r) * k + b * 32u + 4u * t;
        var dot0 = 0.0;
        var dot1 = 0.0;
        var sx0 = 0.0;
        var sx1 = 0.0;
        for (var e = 0u; e < 4u; e = e + 1u) {
          let x0 = x_f(xr + e, ELEM_F32);
          let x1 = x_f(xr + e + 16u, ELEM_F32);
          dot0 = dot0 + lv[e] * x0;
          dot1 = dot1 + lv[e + 4u] * x1;
          sx0 = sx0 + x0;
          sx1 = sx1 + x1;
        }
        acc[r] = acc[r] + d0 * dot0 + d1 * dot1 + m0 * sx0 + m1 * sx1;
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
