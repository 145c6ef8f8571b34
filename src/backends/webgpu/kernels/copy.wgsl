//! bind src:in out:out
// Strided copies (P: strided layout, src tensor 0, out tensor 1). copy_strided
// moves elements of 1, 2, 4 or 8 bytes unchanged; cast_strided converts as the
// host's convert() (core/dtype.cpp): floats to integers truncate and
// saturate (NaN gives 0), integers to integers saturate, anything to bool is
// != 0, floats round to nearest even. i64 values are word pairs (lo, hi)
// handled with 32-bit integer arithmetic; no f64 (WGSL has no doubles).

// P[STRIDED_END]: element bytes.
@compute @workgroup_size(256)
fn copy_strided(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg, 256u);
  if (i >= P[0]) { return; }
  let es = P[STRIDED_END];
  let s = strided_offset(0u, i);
  let o = strided_offset(1u, i);
  if (es == 8u) {
    out_put_bits(o * 8u, 4u, src_bits(s * 8u, 4u));
    out_put_bits(o * 8u + 4u, 4u, src_bits(s * 8u + 4u, 4u));
  } else {
    out_put_bits(o * es, es, src_bits(s * es, es));
  }
}

// 2^e as an f32 (0 <= e < 128), exactly.
fn pow2(e: u32) -> f32 { return bitcast<f32>((127u + e) << 23u); }

// The f32 nearest to v, ties to even (f32(v) may round either way in WGSL).
fn int_to_float(v: i32) -> f32 {
  let neg = v < 0;
  var u = select(u32(v), 0u - u32(v), neg);
  var f: f32;
  if (u < 0x1000000u) {
    f = f32(u);
  } else {
    let shift = u32(firstLeadingBit(u)) - 23u;
    let rem = u & ((1u << shift) - 1u);
    let mid = 1u << (shift - 1u);
    var m = u >> shift;
    if (rem > mid || (rem == mid && (m & 1u) != 0u)) { m = m + 1u; }
    f = f32(m) * pow2(shift);
  }
  return select(f, -f, neg);
}

fn float_to_int_sat(f: f32, dt: u32) -> i32 {
  if (is_nan(f)) { return 0; }
  switch (dt) {
    case 4u: { return i32(clamp(f, -128.0, 127.0)); }
    case 5u: { return i32(clamp(f, 0.0, 255.0)); }
    default: {
      if (f <= -2147483648.0) { return -2147483647 - 1; }
      if (f >= 2147483648.0) { return 2147483647; }
      return i32(f);
    }
  }
}

fn clamp_int(v: i32, dt: u32) -> i32 {
  switch (dt) {
    case 4u: { return clamp(v, -128, 127); }
    case 5u: { return clamp(v, 0, 255); }
    default: { return v; }
  }
}

// v >> s (1 <= s < 64) rounded to nearest, ties to even.
fn shr_rne(v: vec2<u32>, s: u32) -> vec2<u32> {
  let q = shr64(v, s);
  var r = v;  // the s bits shifted out
  if (s < 32u) { r = vec2<u32>(v.x & ((1u << s) - 1u), 0u); } else if (s > 32u) { r.y = v.y & ((1u << (s - 32u)) - 1u); } else { r.y = 0u; }
  let half = shl64(vec2<u32>(1u, 0u), s - 1u);
  let up = less64(half, r) || (all(r == half) && (q.x & 1u) == 1u);
  if (!up) { return q; }
  let lo = q.x + 1u;
  return vec2<u32>(lo, q.y + select(0u, 1u, lo == 0u));
}

// An i64 as the host converts it to f32: to double (53 bits, nearest even),
// then to f32 (nearest even).
fn i64_to_float(v: vec2<u32>) -> f32 {
  let neg = (v.y & 0x80000000u) != 0u;
  var m = select(v, neg64(v), neg);
  if (m.x == 0u && m.y == 0u) { return 0.0; }
  var e = 0u;
  let p = lead64(m);
  if (p > 52u) {
    m = shr_rne(m, p - 52u);
    e = p - 52u;
  }
  let p1 = lead64(m);
  if (p1 > 23u) {
    m = shr_rne(m, p1 - 23u);
    e = e + p1 - 23u;
  }
  let f = f32(m.x) * pow2(e);
  return select(f, -f, neg);
}

// An f32 into an i64: truncated, saturated, NaN to 0.
fn float_to_i64_sat(f: f32) -> vec2<u32> {
  if (is_nan(f)) { return vec2<u32>(0u, 0u); }
  if (f <= bitcast<f32>(0xdf000000u)) { return vec2<u32>(0u, 0x80000000u); }  // -2^63
  if (f >= bitcast<f32>(0x5f000000u)) { return vec2<u32>(0xffffffffu, 0x7fffffffu); }  // 2^63
  let a = abs(trunc(f));
  if (a < 1.0) { return vec2<u32>(0u, 0u); }
  let bits = bitcast<u32>(a);
  let e = (bits >> 23u) - 127u;
  let m = (bits & 0x7fffffu) | 0x800000u;
  var r: vec2<u32>;
  if (e >= 23u) { r = shl64(vec2<u32>(m, 0u), e - 23u); } else { r = vec2<u32>(m >> (23u - e), 0u); }
  return select(r, neg64(r), f < 0.0);
}

// An i64 into i8, u8 or i32 (saturated) or bool (!= 0).
fn i64_to_int(v: vec2<u32>, dt: u32) -> i32 {
  if (dt == ELEM_BOOL) { return select(0, 1, v.x != 0u || v.y != 0u); }
  let neg = (v.y & 0x80000000u) != 0u;
  let fits32 = v.y == select(0u, 0xffffffffu, (v.x & 0x80000000u) != 0u);
  if (!fits32) { return clamp_int(select(2147483647, -2147483647 - 1, neg), dt); }
  return clamp_int(bitcast<i32>(v.x), dt);
}

// P[STRIDED_END]: source dtype, +1: destination dtype.
@compute @workgroup_size(256)
fn cast_strided(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg, 256u);
  if (i >= P[0]) { return; }
  let sdt = P[STRIDED_END];
  let ddt = P[STRIDED_END + 1u];
  let si = strided_offset(0u, i);
  let di = strided_offset(1u, i);
  if (sdt == ELEM_I64) {
    let v = src_i64(si);
    if (elem_is_float(ddt)) { out_set_f(di, ddt, i64_to_float(v)); } else { out_set_i(di, ddt, i64_to_int(v, ddt)); }
    return;
  }
  if (ddt == ELEM_I64) {
    var v: vec2<u32>;
    if (elem_is_float(sdt)) {
      v = float_to_i64_sat(src_f(si, sdt));
    } else {
      let x = src_i(si, sdt);
      v = vec2<u32>(bitcast<u32>(x), select(0u, 0xffffffffu, x < 0));
    }
    out_set_i64(di, v);
    return;
  }
  if (elem_is_float(sdt)) {
    let f = src_f(si, sdt);
    if (elem_is_float(ddt)) {
      out_set_f(di, ddt, f);
    } else if (ddt == ELEM_BOOL) {
      out_set_i(di, ddt, select(0, 1, f != 0.0 || is_nan(f)));
    } else {
      out_set_i(di, ddt, float_to_int_sat(f, ddt));
    }
  } else {
    let v = src_i(si, sdt);
    if (elem_is_float(ddt)) {
      out_set_f(di, ddt, int_to_float(v));
    } else if (ddt == ELEM_BOOL) {
      out_set_i(di, ddt, v);
    } else {
      out_set_i(di, ddt, clamp_int(v, ddt));
    }
  }
}
