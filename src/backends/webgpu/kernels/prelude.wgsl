// Shared by every WebGPU kernel (program.cpp puts it after the bindings).
// Storage dtype codes, as src/backends/gpu/kernels/meta.h's ELEM_*.
const ELEM_F32: u32 = 0u;
const ELEM_F16: u32 = 1u;
const ELEM_BF16: u32 = 2u;
const ELEM_F64: u32 = 3u;
const ELEM_I8: u32 = 4u;
const ELEM_U8: u32 = 5u;
const ELEM_I32: u32 = 6u;
const ELEM_I64: u32 = 7u;
const ELEM_BOOL: u32 = 8u;

fn elem_is_float(dt: u32) -> bool { return dt <= ELEM_BF16; }

// Index of this invocation in a 2-D grid of `wg`-wide work-groups (more than
// 65535 groups are laid out as rows of groups_x).
fn linear_id(gid: vec3<u32>, nwg: vec3<u32>, wg: u32) -> u32 { return gid.x + gid.y * nwg.x * wg; }

// Index of this work-group when a launch lays its groups out in rows (Launch::run_rows).
fn group_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 { return wid.x + wid.y * nwg.x; }

// A zero the shader compiler cannot see: dispatch() binds P with at least one
// zero word past the params.
fn opaque_zero() -> u32 { return P[arrayLength(&P) - 1u]; }

// x rounded to f32 as a value of its own. WGSL has no way to forbid
// contraction, and some drivers (NVIDIA's Vulkan) fuse a * b + c into one
// rounding even across statements; a product passed through here cannot be,
// so results that must match the host's bit for bit (randn, rope, the
// moment updates) keep both roundings on every driver.
fn unfused(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) | opaque_zero()); }

fn neg_inf() -> f32 { return bitcast<f32>(0xff800000u); }

// NaN tests on the bits: shader compilers may assume floats are never NaN.
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }

// IEEE half and bfloat16 <-> f32 on the bits, rounding to nearest even as the
// host does (core/dtype.cpp), so results agree bit for bit with the CPU.
fn half_bits_to_float(h: u32) -> f32 {
  let sign = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0u) {  // zero or subnormal: m * 2^-24 is exact in f32
    let v = f32(m) * 5.9604644775390625e-8;
    return bitcast<f32>(bitcast<u32>(v) | sign);
  }
  if (e == 31u) { return bitcast<f32>(sign | 0x7f800000u | (m << 13u)); }
  return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));
}

fn float_to_half_bits(f: f32) -> u32 {
  let x = bitcast<u32>(f);
  let sign = (x >> 16u) & 0x8000u;
  let absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) { return sign | 0x7e00u | ((absx >> 13u) & 0x3ffu); }
  if (absx >= 0x477ff000u) { return sign | 0x7c00u; }
  if (absx < 0x38800000u) {
    if (absx < 0x33000000u) { return sign; }
    let shift = 126u - (absx >> 23u);
    let mant = (absx & 0x7fffffu) | 0x800000u;
    let rem = mant & ((1u << shift) - 1u);
    let mid = 1u << (shift - 1u);
    var h = mant >> shift;
    if (rem > mid || (rem == mid && (h & 1u) != 0u)) { h = h + 1u; }
    return sign | h;
  }
  var h = (absx - 0x38000000u) >> 13u;
  let rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) { h = h + 1u; }
  return sign | h;
}

fn float_to_bf16_bits(f: f32) -> u32 {
  let x = bitcast<u32>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) { return ((x >> 16u) | 0x40u) & 0xffffu; }
  return ((x + 0x7fffu + ((x >> 16u) & 1u)) >> 16u) & 0xffffu;
}

// Strided indexing over up to three tensors walking one index space, laid
// out in P by the host (launch.cpp, strided_params): P[0] numel, P[1] rank,
// P[2 + d] dims, P[10 + 8 t + d] strides of tensor t, P[34 + t] its offset
// (elements). Kernel parameters follow from P[STRIDED_END].
const STRIDED_END: u32 = 40u;

fn strided_offset(t: u32, i0: u32) -> u32 {
  var i = i0;
  var off = P[34u + t];
  // One dimension (every dense tensor, after the host merges dimensions): no division.
  if (P[1] == 1u) { return off + i * P[10u + t * 8u]; }
  for (var d = i32(P[1]) - 1; d >= 0; d = d - 1) {
    let dim = P[2u + u32(d)];
    let q = i / dim;
    off = off + (i - q * dim) * P[10u + t * 8u + u32(d)];
    i = q;
  }
  return off;
}

// 64-bit integers as vec2<u32>(lo, hi), two's complement (WGSL has no 64-bit
// types): the arithmetic the kernels need on i64 tensors.

fn neg64(v: vec2<u32>) -> vec2<u32> {
  let lo = ~v.x + 1u;
  return vec2<u32>(lo, ~v.y + select(0u, 1u, lo == 0u));
}

fn lead64(v: vec2<u32>) -> u32 {  // index of the highest set bit (v != 0)
  if (v.y != 0u) { return 32u + u32(firstLeadingBit(v.y)); }
  return u32(firstLeadingBit(v.x));
}

fn shr64(v: vec2<u32>, s: u32) -> vec2<u32> {
  if (s == 0u) { return v; }
  if (s >= 32u) { return vec2<u32>(v.y >> (s - 32u), 0u); }
  return vec2<u32>((v.x >> s) | (v.y << (32u - s)), v.y >> s);
}

fn shl64(v: vec2<u32>, s: u32) -> vec2<u32> {
  if (s == 0u) { return v; }
  if (s >= 32u) { return vec2<u32>(0u, v.x << (s - 32u)); }
  return vec2<u32>(v.x << s, (v.y << s) | (v.x >> (32u - s)));
}

fn less64(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y < b.y || (a.y == b.y && a.x < b.x); }

fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

// a < b as signed 64-bit integers.
fn lt64(a: vec2<u32>, b: vec2<u32>) -> bool {
  let ah = bitcast<i32>(a.y);
  let bh = bitcast<i32>(b.y);
  return ah < bh || (ah == bh && a.x < b.x);
}

// The low 64 bits of a * b (wrapping, as two's complement multiplication).
fn mul64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let a0 = a.x & 0xffffu;
  let a1 = a.x >> 16u;
  let b0 = b.x & 0xffffu;
  let b1 = b.x >> 16u;
  let p00 = a0 * b0;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  let lo = (p00 & 0xffffu) | (mid << 16u);
  let hi = a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u) + a.x * b.y + a.y * b.x;
  return vec2<u32>(lo, hi);
}

fn sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return add64(a, neg64(b)); }

// `word` with its byte k (0 = least significant) replaced by the low 8 bits of b.
fn with_byte(word: u32, k: u32, b: u32) -> u32 {
  return (word & ~(0xffu << (k * 8u))) | ((b & 0xffu) << (k * 8u));
}

// tanh accurate near 0 (the exponential formula cancels there): Cephes'
// tanhf polynomial below 0.625, 1 - 2 / (e^2|y| + 1) above, +-1 past 10.
fn tanh_acc(y: f32) -> f32 {
  let a = abs(y);
  if (a > 10.0) { return sign(y); }
  if (a < 0.625) {
    let z = y * y;
    return ((((-5.70498872745e-3 * z + 2.06390887954e-2) * z - 5.37397155531e-2) * z + 1.33314422036e-1) * z -
            3.33332819422e-1) * z * y + y;
  }
  let r = 1.0 - 2.0 / (exp(2.0 * a) + 1.0);
  return select(r, -r, y < 0.0);
}
