//! bind src:in out:out
// Strided copies (P: strided layout, src tensor 0, out tensor 1). copy_strided
// moves elements of 1, 2, 4 or 8 bytes unchanged; cast_strided converts as the
// host's convert() (core/dtype.cpp): floats to integers truncate and
// saturate (NaN gives 0), integers to integers saturate, anything to bool is
// != 0, floats round to nearest even. No 64-bit dtypes in casts: WGSL has
// neither doubles nor 64-bit integers.

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
    f = f32(m) * exp2(f32(shift));
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

// P[STRIDED_END]: source dtype, +1: destination dtype.
@compute @workgroup_size(256)
fn cast_strided(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg, 256u);
  if (i >= P[0]) { return; }
  let sdt = P[STRIDED_END];
  let ddt = P[STRIDED_END + 1u];
  let si = strided_offset(0u, i);
  let di = strided_offset(1u, i);
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
