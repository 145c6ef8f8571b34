//! bind a:in b:in za:in zb:in sa:in sb:in sy:in zy:in bias:in out:out
// int8 matrix products with ONNX's MatMulInteger / QLinearMatMul semantics,
// as the CPU backend's igemm and src/backends/gpu/kernels/integer_matmul.kern.h
// (rt::IntegerMatmulArgs): a [batch, m, k] and b ([batch or 1], k, n), U8 or
// I8, contiguous from their element offsets.
//
// A work-group of 16 x 16 invocations owns a 64 x 64 block of the output,
// each invocation a 4 x 4 block (rows 4 lid.y + i, columns 4 lid.x + j).
// 64 x 16 tiles of a and b pass through workgroup memory as i32 with their
// zero points already subtracted (padding is 0 after the subtraction); the
// sums accumulate as u32, which wraps as ONNX's int32.
//
// Zero points (counts za_n, zb_n: 0 absent, 1 per tensor, else per row /
// column) have their operand's dtype; scales are f32 (sa_n, sb_n: 0 absent).
// The sum plus bias[col] (has_bias: int32), s, becomes out (odt): I32 s; F32
// s * (sa * sb); U8 / I8 saturate(round(s * ((sa * sb) / sy)) + zy), round
// half to even, NaN giving zy. Absent operands are bound as a and never read.
// P: [0] a offset [1] adt [2] b offset [3] bdt [4] b's elements per batch
//    (0: shared) [5] za offset [6] za_n [7] zb offset [8] zb_n [9] sa offset
//    [10] sa_n [11] sb offset [12] sb_n [13] sy offset [14] zy offset
//    [15] y_scale present (bit 0), y_zero_point present (bit 1) [16] bias offset [17] has_bias [18] out offset [19] odt
//    [20] m [21] n [22] k. Groups: x over column blocks, y over row blocks,
//    z over batches.

var<workgroup> im_as: array<i32, 1024>;
var<workgroup> im_bs: array<i32, 1024>;

fn im_zero_a(r: u32) -> i32 {
  if (P[6] == 0u) { return 0; }
  return za_i(P[5] + select(r, 0u, P[6] == 1u), P[1]);
}

fn im_zero_b(c: u32) -> i32 {
  if (P[8] == 0u) { return 0; }
  return zb_i(P[7] + select(c, 0u, P[8] == 1u), P[3]);
}

fn im_mul(r: u32, c: u32) -> f32 {
  var s = 1.0;
  if (P[10] != 0u) { s = sa_f(P[9] + select(r, 0u, P[10] == 1u), ELEM_F32); }
  var t = 1.0;
  if (P[12] != 0u) { t = sb_f(P[11] + select(c, 0u, P[12] == 1u), ELEM_F32); }
  return s * t;
}

fn im_store(o: u32, sum: u32, r: u32, c: u32) {
  var s = sum;
  if (P[17] != 0u) { s = s + bitcast<u32>(bias_i(P[16] + c, ELEM_I32)); }
  let odt = P[19];
  if (odt == ELEM_I32) {
    out_set_i(o, ELEM_I32, bitcast<i32>(s));
    return;
  }
  let mul = im_mul(r, c);
  if (odt == ELEM_F32) {
    out_set_f(o, ELEM_F32, f32(bitcast<i32>(s)) * mul);
    return;
  }
  var y_scale = 1.0;
  var y_zero = 0.0;
  if ((P[15] & 1u) != 0u) { y_scale = sy_f(P[13], ELEM_F32); }
  if ((P[15] & 2u) != 0u) { y_zero = f32(zy_i(P[14], odt)); }
  let lo = select(-128.0, 0.0, odt == ELEM_U8);
  let hi = select(127.0, 255.0, odt == ELEM_U8);
  var q = round(f32(bitcast<i32>(s)) * (mul / y_scale));
  if (is_nan(q)) { q = 0.0; }
  out_set_i(o, odt, i32(clamp(q + y_zero, lo, hi)));
}

@compute @workgroup_size(16, 16)
fn integer_matmul_tiles(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let m = P[20];
  let n = P[21];
  let k = P[22];
  let c0 = wid.x * 64u;
  let r0 = wid.y * 64u;
  let bi = wid.z;
  let abase = P[0] + bi * m * k;
  let bbase = P[2] + bi * P[4];
  let t = lid.y * 16u + lid.x;
  var acc: array<u32, 16>;
  for (var i = 0u; i < 16u; i = i + 1u) { acc[i] = 0u; }
  for (var k0 = 0u; k0 < k; k0 = k0 + 16u) {
    for (var e = t; e < 1024u; e = e + 256u) {
      // a: a row's 16 k values are neighbouring bytes; b: a k row's 64 columns.
      let kk = e % 16u;
      let row = e / 16u;
      var av = 0;
      if (r0 + row < m && k0 + kk < k) { av = a_i(abase + (r0 + row) * k + k0 + kk, P[1]) - im_zero_a(r0 + row); }
      im_as[kk * 64u + row] = av;
      let bk = e / 64u;
      let col = e % 64u;
      var bv = 0;
      if (c0 + col < n && k0 + bk < k) { bv = b_i(bbase + (k0 + bk) * n + c0 + col, P[3]) - im_zero_b(c0 + col); }
      im_bs[bk * 64u + col] = bv;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < 16u; kk = kk + 1u) {
      var ar: array<i32, 4>;
      var br: array<i32, 4>;
      for (var i = 0u; i < 4u; i = i + 1u) {
        ar[i] = im_as[kk * 64u + 4u * lid.y + i];
        br[i] = im_bs[kk * 64u + 4u * lid.x + i];
      }
      // |a - za|, |b - zb| <= 255: each product fits i32.
      for (var i = 0u; i < 4u; i = i + 1u) {
        for (var j = 0u; j < 4u; j = j + 1u) { acc[i * 4u + j] = acc[i * 4u + j] + bitcast<u32>(ar[i] * br[j]); }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i = i + 1u) {
    let r = r0 + 4u * lid.y + i;
    for (var j = 0u; j < 4u; j = j + 1u) {
      let c = c0 + 4u * lid.x + j;
      if (r < m && c < n) { im_store(P[18] + (bi * m + r) * n + c, acc[i * 4u + j], r, c); }
    }
  }
}
