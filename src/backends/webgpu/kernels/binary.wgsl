//! bind a:in b:in out:out
// Elementwise binary ops over broadcast, strided operands (P: strided layout,
// a, b, out = tensors 0, 1, 2), as the CPU backend's binary.cpp computes
// them. f32, f16 and bf16 compute in f32 and round once; i8, u8, i32 and i64
// (word pairs) wrap (two's complement). Op codes: src/backends/gpu/kernels/meta.h's BINARY_*.

// x ** y for every sign of x, as C's powf: WGSL's pow is only defined for x > 0.
fn pow_f(x: f32, y: f32) -> f32 {
  if (y == 0.0 || x == 1.0) { return 1.0; }
  if (is_nan(x) || is_nan(y)) { return x + y; }
  let ay = abs(y);
  let y_int = floor(y) == y && ay < 16777216.0;
  let odd = y_int && (u32(ay) & 1u) == 1u;
  if (x == 0.0) {
    let r = select(bitcast<f32>(0x7f800000u), 0.0, y > 0.0);
    return select(r, bitcast<f32>(bitcast<u32>(r) | (bitcast<u32>(x) & 0x80000000u)), odd);
  }
  if (x < 0.0 && !y_int && ay != bitcast<f32>(0x7f800000u)) { return bitcast<f32>(0x7fc00000u); }
  let r = exp2(y * log2(abs(x)));
  return select(r, -r, x < 0.0 && odd);
}

fn binary_apply(op: u32, x: f32, y: f32) -> f32 {
  switch (op) {
    case 0u: { return x + y; }
    case 1u: { return x - y; }
    case 2u: { return x * y; }
    case 3u: { return x / y; }
    case 4u: { return select(max(x, y), x + y, is_nan(x) || is_nan(y)); }
    case 6u: { return pow_f(x, y); }
    default: { return select(min(x, y), x + y, is_nan(x) || is_nan(y)); }
  }
}

// x ** y on integers, wrapping; a negative exponent gives the truncated 1 / x^|y|.
fn int_pow(x: i32, y: i32) -> i32 {
  if (y < 0) {
    if (x == 1) { return 1; }
    if (x == -1) { return select(1, -1, (y & 1) != 0); }
    return 0;
  }
  var r = 1u;
  var b = bitcast<u32>(x);
  for (var e = u32(y); e != 0u; e = e >> 1u) {
    if ((e & 1u) != 0u) { r = r * b; }
    b = b * b;
  }
  return bitcast<i32>(r);
}

// Integers widened to i32 (so comparisons hold for u8); the result's low bits are the dtype's.
fn binary_apply_int(op: u32, x: i32, y: i32) -> i32 {
  switch (op) {
    case 0u: { return x + y; }
    case 1u: { return x - y; }
    case 2u: { return x * y; }
    case 4u: { return max(x, y); }
    case 6u: { return int_pow(x, y); }
    default: { return min(x, y); }
  }
}

// i64 as word pairs: wrapping add, sub, mul and pow; signed max and min.
fn binary_apply_i64(op: u32, x: vec2<u32>, y: vec2<u32>) -> vec2<u32> {
  switch (op) {
    case 0u: { return add64(x, y); }
    case 1u: { return sub64(x, y); }
    case 2u: { return mul64(x, y); }
    case 4u: { return select(x, y, lt64(x, y)); }
    case 6u: {
      if ((y.y & 0x80000000u) != 0u) {  // negative exponent: the truncated 1 / x^|y|
        if (x.y == 0u && x.x == 1u) { return x; }
        if (x.y == 0xffffffffu && x.x == 0xffffffffu) { return select(vec2<u32>(1u, 0u), x, (y.x & 1u) != 0u); }
        return vec2<u32>(0u, 0u);
      }
      var r = vec2<u32>(1u, 0u);
      var base = x;
      var e = y;
      while (e.x != 0u || e.y != 0u) {
        if ((e.x & 1u) != 0u) { r = mul64(r, base); }
        base = mul64(base, base);
        e = shr64(e, 1u);
      }
      return r;
    }
    default: { return select(y, x, lt64(x, y)); }
  }
}

// P[STRIDED_END]: op, +1: dtype.
@compute @workgroup_size(256)
fn binary_strided(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg, 256u);
  if (i >= P[0]) { return; }
  let op = P[STRIDED_END];
  let dt = P[STRIDED_END + 1u];
  let ia = strided_offset(0u, i);
  let ib = strided_offset(1u, i);
  let io = strided_offset(2u, i);
  if (elem_is_float(dt)) {
    out_set_f(io, dt, binary_apply(op, a_f(ia, dt), b_f(ib, dt)));
  } else if (dt == ELEM_I64) {
    out_set_i64(io, binary_apply_i64(op, a_i64(ia), b_i64(ib)));
  } else {
    out_set_i(io, dt, binary_apply_int(op, a_i(ia, dt), b_i(ib, dt)));
  }
}

// f32 with all three tensors dense in the same order (the common case): no
// index arithmetic beyond the offsets. Same params.
@compute @workgroup_size(256)
fn binary_f32_dense(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg, 256u);
  if (i >= P[0]) { return; }
  let v = binary_apply(P[STRIDED_END], bitcast<f32>(a[P[34] + i]), bitcast<f32>(b[P[35] + i]));
  atomicStore(&out[P[36] + i], bitcast<u32>(v));
}
