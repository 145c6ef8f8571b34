//! bind src:in dst:out
// FFT passes for rt::FftArgs, as src/backends/gpu/kernels/fft.kern.h (f32: WGSL has no
// f64), driven by src/backends/gpu/fft_passes.hpp through fft.cpp. Complex
// values are (re, im) pairs of f32 words; row buffers hold `lines` rows of
// n (or Bluestein's m) pairs. sign: 0 forward (exp(-i...)), 1 inverse.
// One invocation per element or butterfly.

const FFT_PI: f32 = 3.14159265358979323846;

fn fft_get(i: u32) -> f32 { return bitcast<f32>(src_word(i)); }
fn fft_set(i: u32, v: f32) { atomicStore(&dst[i], bitcast<u32>(v)); }
fn fft_dst(i: u32) -> f32 { return bitcast<f32>(dst_word(i)); }

// exp(+-2 pi i num / den), num reduced first.
fn fft_root(num: u32, den: u32, sign: u32) -> vec2<f32> {
  let a = select(-2.0, 2.0, sign == 1u) * FFT_PI * f32(num % den) / f32(den);
  return vec2<f32>(cos(a), sin(a));
}

// a b mod mo without 64-bit integers (mo <= 2^31: no sum below overflows).
fn mulmod(a: u32, b: u32, mo: u32) -> u32 {
  var r = 0u;
  var x = a % mo;
  var y = b;
  while (y > 0u) {
    if ((y & 1u) != 0u) { r = (r + x) % mo; }
    x = (x * 2u) % mo;
    y = y >> 1u;
  }
  return r;
}

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  return vec2<f32>(unfused(a.x * b.x) - unfused(a.y * b.y), unfused(a.x * b.y) + unfused(a.y * b.x));
}

// Value t of line (o, i) of x: C2C reads the pair, R2C the real value (im 0),
// C2R the Hermitian extension of the half spectrum (dropping the imaginary
// parts a real signal's spectrum cannot have). fft_gather and fft_local share
// the parameter layout: P[0] x offset [3] n [4] inner [5] kind [6] len_x.
fn fft_load(t: u32, o: u32, i: u32) -> vec2<f32> {
  let n = P[3];
  var v = vec2<f32>(0.0, 0.0);
  if (P[5] == 1u) {
    v.x = fft_get(P[0] + (o * P[6] + t) * P[4] + i);
  } else if (P[5] == 2u) {
    let k = select(n - t, t, 2u * t <= n);
    let at = P[0] + ((o * P[6] + k) * P[4] + i) * 2u;
    v.x = fft_get(at);
    if (k != 0u && 2u * k != n) { v.y = fft_get(at + 1u); }
    if (k != t) { v.y = -v.y; }
  } else {
    let at = P[0] + ((o * P[6] + t) * P[4] + i) * 2u;
    v = vec2<f32>(fft_get(at), fft_get(at + 1u));
  }
  return v;
}

// x in its layout -> rows of pairs. P: [0] x offset [1] (unused) [2] lines [3] n [4] inner [5] kind
// (0 C2C, 1 R2C, 2 C2R) [6] len_x.
@compute @workgroup_size(256)
fn fft_gather(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = linear_id(gid, nwg, 256u);
  let n = P[3];
  if (e >= P[2] * n) { return; }
  let l = e / n;
  let o = l / P[4];
  let v = fft_load(e - l * n, o, l - o * P[4]);
  fft_set(2u * e, v.x);
  fft_set(2u * e + 1u, v.y);
}

// One Stockham stage: y[q + s (r p + k)] = w_len^(p k) sum_j x[q + s (p + j m)] w_r^(j k).
// P: [0] lines [1] n [2] len [3] s [4] r [5] sign.
@compute @workgroup_size(256)
fn fft_stage(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = linear_id(gid, nwg, 256u);
  let r = P[4];
  let s = P[3];
  let m = P[2] / r;
  let per_line = m * s;
  if (e >= P[0] * per_line) { return; }
  let l = e / per_line;
  let rem = e - l * per_line;
  let p = rem / s;
  let q = rem - p * s;
  let base = 2u * l * P[1];
  var a: array<vec2<f32>, 8>;
  for (var j = 0u; j < r; j++) {
    let at = base + 2u * (q + s * (p + j * m));
    a[j] = vec2<f32>(fft_get(at), fft_get(at + 1u));
  }
  var w: array<vec2<f32>, 8>;
  for (var k = 0u; k < r; k++) { w[k] = fft_root(k, r, P[5]); }
  let out = base + 2u * (q + s * r * p);
  for (var k = 0u; k < r; k++) {
    var sum = vec2<f32>(0.0, 0.0);
    var jk = 0u;
    for (var j = 0u; j < r; j++) {
      sum += cmul(a[j], w[jk]);
      jk += k;
      if (jk >= r) { jk -= r; }
    }
    if (k > 0u) { sum = cmul(sum, fft_root(p * k, P[2], P[5])); }
    fft_set(out + 2u * s * k, sum.x);
    fft_set(out + 2u * s * k + 1u, sum.y);
  }
}

// P: [0] out offset [1] lines [2] n [3] inner [4] kind [5] len_out [6] scale (f32 bits).
@compute @workgroup_size(256)
fn fft_scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = linear_id(gid, nwg, 256u);
  let len = P[5];
  if (e >= P[1] * len) { return; }
  let l = e / len;
  let k = e - l * len;
  let o = l / P[3];
  let i = l - o * P[3];
  let scale = bitcast<f32>(P[6]);
  let at = 2u * (l * P[2] + k);
  if (P[4] == 2u) {
    fft_set(P[0] + (o * len + k) * P[3] + i, unfused(fft_get(at) * scale));
  } else {
    let dst_at = P[0] + ((o * len + k) * P[3] + i) * 2u;
    fft_set(dst_at, unfused(fft_get(at) * scale));
    fft_set(dst_at + 1u, unfused(fft_get(at + 1u) * scale));
  }
}

// Bluestein, chirp c_k = exp(+-i pi k^2 / n) (k^2 mod 2n in integers):
// mode 0: dst[l][k] = src[l][k] c_k (src rows n, dst rows m, zero past n);
// mode 1: dst[0][k] = conj(c_k) at k and m - k (k < n), else 0;
// mode 2: dst[l][k] = src[l][k] c_k for k < n (src rows m, dst rows n).
// P: [0] lines [1] n [2] m [3] sign [4] mode.
@compute @workgroup_size(256)
fn fft_chirp(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = linear_id(gid, nwg, 256u);
  let n = P[1];
  let m = P[2];
  let mode = P[4];
  let rows = select(P[0], 1u, mode == 1u);
  let cols = select(m, n, mode == 2u);
  if (e >= rows * cols) { return; }
  let l = e / cols;
  let k = e - l * cols;
  let kk = select(k, m - k, mode == 1u && k >= n);
  var c = vec2<f32>(0.0, 0.0);
  if (kk < n) { c = fft_root(mulmod(kk, kk, 2u * n), 2u * n, P[3]); }
  if (mode == 0u) {
    var x = vec2<f32>(0.0, 0.0);
    if (k < n) { x = vec2<f32>(fft_get(2u * (l * n + k)), fft_get(2u * (l * n + k) + 1u)); }
    let y = cmul(x, c);
    fft_set(2u * (l * m + k), y.x);
    fft_set(2u * (l * m + k) + 1u, y.y);
  } else if (mode == 1u) {
    fft_set(2u * k, c.x);
    fft_set(2u * k + 1u, -c.y);
  } else {
    let y = cmul(vec2<f32>(fft_get(2u * (l * m + k)), fft_get(2u * (l * m + k) + 1u)), c);
    fft_set(2u * (l * n + k), y.x);
    fft_set(2u * (l * n + k) + 1u, y.y);
  }
}

// dst[l][k] *= src[k] / m (the transformed kernel). P: [0] lines [1] m.
@compute @workgroup_size(256)
fn fft_pointwise(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = linear_id(gid, nwg, 256u);
  let m = P[1];
  if (e >= P[0] * m) { return; }
  let k = e % m;
  let inv = 1.0 / f32(m);
  let b = vec2<f32>(fft_get(2u * k) * inv, fft_get(2u * k + 1u) * inv);
  let y = cmul(vec2<f32>(fft_dst(2u * e), fft_dst(2u * e + 1u)), b);
  fft_set(2u * e, y.x);
  fft_set(2u * e + 1u, y.y);
}

// One work-group per line, every stage in workgroup memory (n <= 1024): the
// gather of fft_gather, the Stockham stages of the radices packed 4 bits each
// (first stage in the low bits), the scatter of fft_scatter. One dispatch
// instead of one per stage.
// P: [0] x offset [1] out offset [2] lines [3] n [4] inner [5] kind [6] len_x [7] len_out [8] radices
//    [9] sign [10] scale (f32 bits).
var<workgroup> fft_a: array<vec2<f32>, 1024>;
var<workgroup> fft_b: array<vec2<f32>, 1024>;

// The radix-r butterfly (p, q) of a stage of length len, stride s: from fft_a into fft_b when a_to_b, else back.
fn fft_local_butterfly(p: u32, q: u32, s: u32, m: u32, r: u32, len: u32, a_to_b: bool) {
  let sign = P[9];
  var x: array<vec2<f32>, 8>;
  for (var j = 0u; j < r; j++) {
    let at = q + s * (p + j * m);
    x[j] = select(fft_b[at], fft_a[at], a_to_b);
  }
  var w: array<vec2<f32>, 8>;
  for (var k = 0u; k < r; k++) { w[k] = fft_root(k, r, sign); }
  let out = q + s * r * p;
  for (var k = 0u; k < r; k++) {
    var sum = vec2<f32>(0.0, 0.0);
    var jk = 0u;
    for (var j = 0u; j < r; j++) {
      sum += cmul(x[j], w[jk]);
      jk += k;
      if (jk >= r) { jk -= r; }
    }
    if (k > 0u) { sum = cmul(sum, fft_root(p * k, len, sign)); }
    if (a_to_b) { fft_b[out + s * k] = sum; } else { fft_a[out + s * k] = sum; }
  }
}

@compute @workgroup_size(128)
fn fft_local(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
  let n = P[3];
  let groups = nwg.x * nwg.y;
  for (var l = group_index(wid, nwg); l < P[2]; l += groups) {
    let o = l / P[4];
    let i = l - o * P[4];
    for (var t = lid; t < n; t += 128u) { fft_a[t] = fft_load(t, o, i); }
    workgroupBarrier();
    var len = n;
    var rs = P[8];
    var a_to_b = true;
    while (len > 1u) {
      let r = rs & 15u;
      rs = rs >> 4u;
      let m = len / r;
      let s = n / len;
      for (var b = lid; b < m * s; b += 128u) {
        let p = b / s;
        fft_local_butterfly(p, b - p * s, s, m, r, len, a_to_b);
      }
      workgroupBarrier();
      a_to_b = !a_to_b;
      len = m;
    }
    let scale = bitcast<f32>(P[10]);
    for (var k = lid; k < P[7]; k += 128u) {
      let v = select(fft_b[k], fft_a[k], a_to_b);
      if (P[5] == 2u) {
        fft_set(P[1] + (o * P[7] + k) * P[4] + i, unfused(v.x * scale));
      } else {
        let at = P[1] + ((o * P[7] + k) * P[4] + i) * 2u;
        fft_set(at, unfused(v.x * scale));
        fft_set(at + 1u, unfused(v.y * scale));
      }
    }
    workgroupBarrier();
  }
}
