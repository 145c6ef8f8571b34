//! bind out:out
// rand / randn / bernoulli into contiguous out, as src/backends/gpu/kernels/random.kern.h
// and the CPU backend: element i is lane i % 4 of Philox4x32-10 block
// (offset + i / 4) keyed by the 64-bit seed, through the same Box-Muller
// (log, sqrt, sin and cos from f32 +, -, * and bit operations only, each
// product rounded on its own, ported from src/backends/gpu/kernels/philox.kern.h), so the
// bits equal the CPU's where the driver keeps WGSL's operations as written
// (lavapipe; NVIDIA's Vulkan moves the last bit of a few randn values). WGSL has no 64-bit integers: the 32 x 32 -> 64
// products are prelude.wgsl's mul64. One invocation per block of four.
// P: [0] out offset [1] n [2] seed lo [3] seed hi [4] offset lo [5] offset hi
// [6] kind (0 uniform, 1 normal, 2 bernoulli) [7] a [8] b (f32 bits) [9] dtype.

fn philox(counter: vec2<u32>, seed: vec2<u32>) -> vec4<u32> {
  var c = vec4<u32>(counter.x, counter.y, 0u, 0u);
  var k = seed;
  for (var r = 0; r < 10; r = r + 1) {
    let p0 = mul64(vec2<u32>(0xD2511F53u, 0u), vec2<u32>(c.x, 0u));
    let p1 = mul64(vec2<u32>(0xCD9E8D57u, 0u), vec2<u32>(c.z, 0u));
    c = vec4<u32>(p1.y ^ c.y ^ k.x, p1.x, p0.y ^ c.w ^ k.y, p0.x);
    k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}

fn uniform01(x: u32) -> f32 { return f32(x >> 8u) * (1.0 / 16777216.0); }

// a * b + c with both roundings (unfused: some drivers contract even
// separate statements, which would change the last bits of randn).
fn mad(a: f32, b: f32, c: f32) -> f32 { return unfused(a * b) + c; }

fn plog(u: f32) -> f32 {  // Cephes' logf for u in [2^-24, 1]
  let bits = bitcast<u32>(u);
  var e = i32(bits >> 23u) - 126;
  var x = bitcast<f32>((bits & 0x7fffffu) | 0x3f000000u);
  if (x < 0.70710678) {
    e = e - 1;
    x = (x + x) - 1.0;
  } else {
    x = x - 1.0;
  }
  let z = x * x;
  var p = 7.0376836292e-2;
  p = mad(p, x, -1.1514610310e-1);
  p = mad(p, x, 1.1676998740e-1);
  p = mad(p, x, -1.2420140846e-1);
  p = mad(p, x, 1.4249322787e-1);
  p = mad(p, x, -1.6668057665e-1);
  p = mad(p, x, 2.0000714765e-1);
  p = mad(p, x, -2.4999993993e-1);
  p = mad(p, x, 3.3333331174e-1);
  let fe = f32(e);
  var y = mad(p * x, z, unfused(-2.12194440e-4 * fe));
  y = mad(-0.5, z, y);
  return mad(0.693359375, fe, x + y);
}

fn psqrt(v: f32) -> f32 {
  if (v == 0.0) { return 0.0; }
  var y = bitcast<f32>(0x5f3759dfu - (bitcast<u32>(v) >> 1u));
  for (var i = 0; i < 3; i = i + 1) { y = y * mad(-(0.5 * v * y), y, 1.5); }
  let s = v * y;
  return mad(0.5 * y, mad(-s, s, v), s);
}

fn sin_quarter(r: f32) -> f32 {
  let r2 = r * r;
  var p = 1.6044118478e-4;
  p = mad(p, r2, -4.6817541354e-3);
  p = mad(p, r2, 7.9692626246e-2);
  p = mad(p, r2, -6.4596409750e-1);
  p = mad(p, r2, 1.5707963268);
  return p * r;
}

fn cos_quarter(r: f32) -> f32 {
  let r2 = r * r;
  var p = -2.5202042373e-5;
  p = mad(p, r2, 9.1926027484e-4);
  p = mad(p, r2, -2.0863480763e-2);
  p = mad(p, r2, 2.5366950790e-1);
  p = mad(p, r2, -1.2337005501);
  return mad(p, r2, 1.0);
}

fn sincos_turns(u: f32, want_cos: bool) -> f32 {
  let k = i32(u * 16777216.0);
  let quarter = (k + (1 << 21u)) >> 22u;
  let r = f32(k - (quarter << 22u)) * (1.0 / 4194304.0);
  let q = (quarter + select(0, 1, want_cos)) & 3;
  var v = sin_quarter(r);
  if ((q & 1) != 0) { v = cos_quarter(r); }
  return select(v, -v, (q & 2) != 0);
}

@compute @workgroup_size(256)
fn random_blocks(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let j = linear_id(gid, nwg, 256u);
  let n = P[1];
  if (j >= (n + 3u) / 4u) { return; }
  let lo = P[4] + j;
  let blk = philox(vec2<u32>(lo, P[5] + select(0u, 1u, lo < j)), vec2<u32>(P[2], P[3]));
  let kind = P[6];
  let a = bitcast<f32>(P[7]);
  let b = bitcast<f32>(P[8]);
  var v: vec4<f32>;
  for (var lane = 0u; lane < 4u; lane = lane + 2u) {
    if (kind == 1u) {
      let u1 = f32(16777216u - (blk[lane] >> 8u)) * (1.0 / 16777216.0);
      let rad = b * psqrt(-2.0 * plog(u1));
      let u2 = uniform01(blk[lane + 1u]);
      v[lane] = mad(rad, sincos_turns(u2, true), a);
      v[lane + 1u] = mad(rad, sincos_turns(u2, false), a);
    } else {
      for (var k = lane; k < lane + 2u; k = k + 1u) {
        let u = uniform01(blk[k]);
        v[k] = select(select(0.0, 1.0, u < a), mad(b - a, u, a), kind == 0u);
      }
    }
  }
  for (var lane = 0u; lane < 4u; lane = lane + 1u) {
    if (4u * j + lane < n) { out_set_f(P[0] + 4u * j + lane, P[9], v[lane]); }
  }
}
