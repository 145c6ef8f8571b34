//! bind x:in out:out
// Elementwise unary ops over a strided x and out (P: strided layout, tensors
// 0 and 1), f32, f16 or bf16 storage with f32 math, as the CPU backend's
// unary.cpp computes them; neg, abs and relu also on i8, u8 and i32. Op codes:
// src/backends/gpu/kernels/meta.h's UNARY_*. In place, x and out are the same tensor.

// erfc(z) with a relative error near 1e-7 for every z (Numerical Recipes'
// Chebyshev fit), so 1 + erf(x) = erfc(-x) keeps its accuracy where erf is near -1.
fn erfc_acc(z: f32) -> f32 {
  let a = abs(z);
  let t = 1.0 / (1.0 + 0.5 * a);
  let p = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 +
          t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  let r = t * exp(-a * a + p);
  return select(r, 2.0 - r, z < 0.0);
}

fn unary_apply(op: u32, x: f32) -> f32 {
  switch (op) {
    case 0u: { return -x; }
    case 1u: { return abs(x); }
    case 2u: { return exp(x); }
    case 3u: {
      if (x < 0.0) { return bitcast<f32>(0x7fc00000u); }
      if (x == 0.0) { return bitcast<f32>(0xff800000u); }
      return log(x);
    }
    case 4u: { return select(sqrt(x), bitcast<f32>(0x7fc00000u), x < 0.0); }
    case 5u: {
      if (x == 0.0) { return bitcast<f32>(bitcast<u32>(1.0 / x) | (bitcast<u32>(x) & 0x80000000u)); }
      return select(1.0 / sqrt(x), bitcast<f32>(0x7fc00000u), x < 0.0);
    }
    case 6u: { return tanh_acc(x); }
    case 7u: { return 1.0 / (1.0 + exp(-x)); }
    case 8u: { return select(select(0.0, x, x > 0.0), x, is_nan(x)); }
    case 9u: { return 0.5 * x * erfc_acc(-x * 0.70710678118654752440); }
    case 10u: { return 0.5 * x * (1.0 + tanh_acc(0.79788456080286535588 * (x + 0.044715 * x * x * x))); }
    default: { return x / (1.0 + exp(-x)); }
  }
}

fn unary_apply_int(op: u32, x: i32) -> i32 {
  switch (op) {
    case 0u: { return -x; }
    case 1u: { return select(x, -x, x < 0); }
    default: { return max(x, 0); }
  }
}

// P[STRIDED_END]: op, +1: dtype.
@compute @workgroup_size(256)
fn unary_strided(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg, 256u);
  if (i >= P[0]) { return; }
  let op = P[STRIDED_END];
  let dt = P[STRIDED_END + 1u];
  let ix = strided_offset(0u, i);
  let io = strided_offset(1u, i);
  if (elem_is_float(dt)) {
    out_set_f(io, dt, unary_apply(op, x_f(ix, dt)));
  } else if (dt == ELEM_I64) {
    let v = x_i64(ix);
    let neg = (v.y & 0x80000000u) != 0u;
    var r = neg64(v);                                   // neg
    if (op == 1u) { r = select(v, neg64(v), neg); }    // abs
    if (op == 8u) { r = select(v, vec2<u32>(0u, 0u), neg); }  // relu
    out_set_i64(io, r);
  } else {
    out_set_i(io, dt, unary_apply_int(op, x_i(ix, dt)));
  }
}

// f32 with x and out dense in the same order (the common case): no index
// arithmetic beyond the offsets. Same params.
@compute @workgroup_size(256)
fn unary_f32_dense(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg, 256u);
  if (i >= P[0]) { return; }
  atomicStore(&out[P[35] + i], bitcast<u32>(unary_apply(P[STRIDED_END], bitcast<f32>(x[P[34] + i]))));
}
