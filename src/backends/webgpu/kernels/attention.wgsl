//! bind q:in k:in v:in out:out part:out
// Scaled dot-product attention, flash-style, as src/backends/gpu/kernels/attention.kern.h:
// one work-group of 64 per query row (per split of its keys when decoding:
// P[18] splits > 1, P[19] keys per split, partials of dv + 2 f32 into part,
// combined by attention_combine) walks the keys it sees in tiles of 64
// with an online softmax (running max and sum), so no score matrix is stored.
// Each invocation scores one key of the tile, then owns output dimensions
// lid, lid + 64, ... (head sizes up to 256). Grouped-query heads read k/v head
// h / (hq / hkv). A query that sees no key gets zeros. f32, f16 or bf16 with
// f32 math. Rows laid out by run_rows.
// P: [0] hq [1] sq [2] d [3] hkv [4] skv [5] dv [6] k batch stride [7] k head
// stride [8] v batch stride [9] v head stride [10] q offset [11] k offset
// [12] v offset [13] out offset [14] causal shift (i32 bits) [15] scale (f32
// bits) [16] causal [17] dtype [18] splits [19] split length [20] sliding
// window (0: none; the first key row i sees is i + shift - window + 1)
// [21] logit soft-cap (f32 bits; 0: none, else s = cap tanh(s / cap)).

var<workgroup> qs: array<f32, 256>;
var<workgroup> p: array<f32, 64>;
var<workgroup> red: array<f32, 64>;

@compute @workgroup_size(64)
fn attention_rows(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
  let lid = lid3.x;
  let splits = P[18];
  let g = group_index(wid, nwg);
  let row = g / splits;  // (b * hq + h) * sq + i
  let split = g % splits;
  let hq = P[0];
  let sq = P[1];
  let dq = P[2];
  let skv = P[4];
  let dv = P[5];
  let dt = P[17];
  let i = row % sq;
  let bh = row / sq;
  let h = bh % hq;
  let b = bh / hq;
  let kvh = h / (hq / P[3]);
  let kbase = P[11] + b * P[6] + kvh * P[7];
  let vbase = P[12] + b * P[8] + kvh * P[9];
  let scale = bitcast<f32>(P[15]);
  for (var d = lid; d < dq; d = d + 64u) { qs[d] = q_f(P[10] + row * dq + d, dt) * scale; }
  var kend = skv;
  if (P[16] != 0u) {
    let lim = i32(i) + bitcast<i32>(P[14]) + 1;
    kend = u32(clamp(lim, 0, i32(skv)));
  }
  // This work-group's share of the keys: [jbeg, kend), within the window.
  var jbeg = split * P[19];
  if (splits > 1u) { kend = min(kend, jbeg + P[19]); }
  if (P[20] > 0u) {
    let first = i32(i) + bitcast<i32>(P[14]) - i32(P[20]) + 1;
    if (first > i32(jbeg)) { jbeg = u32(first); }
  }
  let cap = bitcast<f32>(P[21]);
  var acc: array<f32, 4>;
  for (var r = 0u; r < 4u; r = r + 1u) { acc[r] = 0.0; }
  var mx = neg_inf();
  var l = 0.0;
  workgroupBarrier();
  for (var j0 = jbeg; j0 < kend; j0 = j0 + 64u) {
    let j = j0 + lid;
    var s = neg_inf();
    if (j < kend) {
      s = 0.0;
      let kr = kbase + j * dq;
      for (var d = 0u; d < dq; d = d + 1u) { s = s + qs[d] * k_f(kr + d, dt); }
      if (cap > 0.0) { s = cap * tanh_acc(s / cap); }
    }
    red[lid] = s;
    workgroupBarrier();
    for (var st = 32u; st > 0u; st = st >> 1u) {
      if (lid < st && red[lid + st] > red[lid]) { red[lid] = red[lid + st]; }
      workgroupBarrier();
    }
    let tmax = red[0];
    workgroupBarrier();
    let mnew = max(tmax, mx);
    let alpha = exp(mx - mnew);
    var pj = 0.0;
    if (j < kend) { pj = exp(s - mnew); }
    p[lid] = pj;
    red[lid] = pj;
    workgroupBarrier();
    for (var st = 32u; st > 0u; st = st >> 1u) {
      if (lid < st) { red[lid] = red[lid] + red[lid + st]; }
      workgroupBarrier();
    }
    l = l * alpha + red[0];
    mx = mnew;
    let nk = min(kend - j0, 64u);
    for (var r = 0u; r < 4u; r = r + 1u) {
      let d = lid + r * 64u;
      if (d < dv) {
        var a = acc[r] * alpha;
        for (var jj = 0u; jj < nk; jj = jj + 1u) { a = a + p[jj] * v_f(vbase + (j0 + jj) * dv + d, dt); }
        acc[r] = a;
      }
    }
    workgroupBarrier();
  }
  if (splits > 1u) {
    // Partial: running max, sum and the unnormalised outputs.
    let base = g * (dv + 2u);
    if (lid == 0u) {
      part_set_f(base, ELEM_F32, mx);
      part_set_f(base + 1u, ELEM_F32, l);
    }
    for (var r = 0u; r < 4u; r = r + 1u) {
      let d = lid + r * 64u;
      if (d < dv) { part_set_f(base + 2u + d, ELEM_F32, acc[r]); }
    }
    return;
  }
  let inv = select(0.0, 1.0 / l, l > 0.0);
  for (var r = 0u; r < 4u; r = r + 1u) {
    let d = lid + r * 64u;
    if (d < dv) { out_set_f(P[13] + row * dv + d, dt, acc[r] * inv); }
  }
}

// Split-K's second pass: one work-group per query row rescales its splits'
// partials to the largest max and normalises; a split that held no key the
// row sees (sum 0) counts for nothing, a row that sees none gets zeros.
@compute @workgroup_size(64)
fn attention_combine(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
                     @builtin(num_workgroups) nwg: vec3<u32>) {
  let lid = lid3.x;
  let row = group_index(wid, nwg);
  let dv = P[5];
  let splits = P[18];
  let base = row * splits * (dv + 2u);
  var mx = neg_inf();
  for (var s = 0u; s < splits; s = s + 1u) {
    let o = base + s * (dv + 2u);
    if (bitcast<f32>(part_word(o + 1u)) > 0.0) { mx = max(mx, bitcast<f32>(part_word(o))); }
  }
  var sum = 0.0;
  for (var s = 0u; s < splits; s = s + 1u) {
    let o = base + s * (dv + 2u);
    let ls = bitcast<f32>(part_word(o + 1u));
    if (ls > 0.0) { sum = sum + ls * exp(bitcast<f32>(part_word(o)) - mx); }
  }
  let inv = select(0.0, 1.0 / sum, sum > 0.0);
  for (var d = lid; d < dv; d = d + 64u) {
    var acc = 0.0;
    for (var s = 0u; s < splits; s = s + 1u) {
      let o = base + s * (dv + 2u);
      let ls = bitcast<f32>(part_word(o + 1u));
      if (ls > 0.0) { acc = acc + exp(bitcast<f32>(part_word(o)) - mx) * bitcast<f32>(part_word(o + 2u + d)); }
    }
    out_set_f(P[13] + row * dv + d, P[17], acc * inv);
  }
}
