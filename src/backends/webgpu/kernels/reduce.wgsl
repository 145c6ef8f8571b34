//! bind x:in out:out
//! use group_reduce
// Reductions over the middle axis of contiguous x viewed as [outer, n, inner]
// into out [outer, inner], as the CPU backend's reduce.cpp: one work-group of
// 128 per output element (run_rows), each invocation striding over n, partial
// results combined in workgroup memory. Floats (f32, f16, bf16) accumulate in
// f32; variance is two-pass (the mean, then squares about it). Max, min and
// argmax: NaN wins (the first NaN for argmax), ties keep the first index.
// Integers (i8, u8, i32, i64 as word pairs): sum wraps, max, min, argmax.
// P: [0] op (rt::ReduceOp: sum, mean, max, min, argmax, var) [1] n [2] inner
// [3] correction (i32) [4] dtype [5] x offset [6] out offset.

var<workgroup> rv: array<vec2<u32>, 128>;  // integers as i64 (lo, hi)
var<workgroup> ri: array<u32, 128>;        // indices

// Element i of an integer tensor as i64.
fn load_int64(i: u32, dt: u32) -> vec2<u32> {
  if (dt == ELEM_I64) { return x_i64(i); }
  let v = x_i(i, dt);
  return vec2<u32>(bitcast<u32>(v), select(0u, 0xffffffffu, v < 0));
}

// Whether (v, i) beats (w, j) for max (want_max) or min: NaN first, then the
// value, then the lower index.
fn better_f(v: f32, i: u32, w: f32, j: u32, want_max: bool) -> bool {
  let vn = is_nan(v);
  let wn = is_nan(w);
  if (vn || wn) { return vn && (!wn || i < j); }
  if (v == w) { return i < j; }
  return select((v < w), (v > w), want_max);
}

fn better_i(v: vec2<u32>, i: u32, w: vec2<u32>, j: u32, want_max: bool) -> bool {
  if (all(v == w)) { return i < j; }
  return select(lt64(v, w), lt64(w, v), want_max);
}

@compute @workgroup_size(128)
fn reduce_rows(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
               @builtin(num_workgroups) nwg: vec3<u32>) {
  let lid = lid3.x;
  let row = group_index(wid, nwg);
  let op = P[0];
  let n = P[1];
  let inner = P[2];
  let dt = P[4];
  let base = P[5] + (row / inner) * n * inner + (row % inner);
  let o = P[6] + row;
  let want_max = op != 3u;
  if (elem_is_float(dt)) {
    if (op == 0u || op == 1u || op == 5u) {
      var s = 0.0;
      for (var i = lid; i < n; i = i + 128u) { s = s + x_f(base + i * inner, dt); }
      s = group_sum(s, lid);
      if (op == 5u) {
        let mean = select(0.0, s / f32(n), n > 0u);
        var ss = 0.0;
        for (var i = lid; i < n; i = i + 128u) {
          let d = x_f(base + i * inner, dt) - mean;
          ss = ss + d * d;
        }
        ss = group_sum(ss, lid);
        s = ss / f32(max(i32(n) - bitcast<i32>(P[3]), 0));
      } else if (op == 1u) {
        s = select(bitcast<f32>(0x7fc00000u), s / f32(n), n > 0u);
      }
      if (lid == 0u) { out_set_f(o, dt, s); }
      return;
    }
    var best = x_f(base, dt);
    var arg = 0u;
    for (var i = lid; i < n; i = i + 128u) {
      let v = x_f(base + i * inner, dt);
      if (better_f(v, i, best, arg, want_max)) {
        best = v;
        arg = i;
      }
    }
    red[lid] = best;
    ri[lid] = arg;
    workgroupBarrier();
    for (var s = 64u; s > 0u; s = s >> 1u) {
      if (lid < s && better_f(red[lid + s], ri[lid + s], red[lid], ri[lid], want_max)) {
        red[lid] = red[lid + s];
        ri[lid] = ri[lid + s];
      }
      workgroupBarrier();
    }
    if (lid == 0u) {
      if (op == 4u) {
        out_set_i64(o, vec2<u32>(ri[0], 0u));
      } else {
        out_set_f(o, dt, red[0]);
      }
    }
    return;
  }
  // Integers.
  var acc = vec2<u32>(0u, 0u);
  var arg = 0u;
  if (op != 0u) { acc = load_int64(base, dt); }
  for (var i = lid; i < n; i = i + 128u) {
    let v = load_int64(base + i * inner, dt);
    if (op == 0u) {
      acc = add64(acc, v);
    } else if (better_i(v, i, acc, arg, want_max)) {
      acc = v;
      arg = i;
    }
  }
  rv[lid] = acc;
  ri[lid] = arg;
  workgroupBarrier();
  for (var s = 64u; s > 0u; s = s >> 1u) {
    if (lid < s) {
      if (op == 0u) {
        rv[lid] = add64(rv[lid], rv[lid + s]);
      } else if (better_i(rv[lid + s], ri[lid + s], rv[lid], ri[lid], want_max)) {
        rv[lid] = rv[lid + s];
        ri[lid] = ri[lid + s];
      }
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    if (op == 4u) {
      out_set_i64(o, vec2<u32>(ri[0], 0u));
    } else if (dt == ELEM_I64) {
      out_set_i64(o, rv[0]);
    } else {
      out_set_i(o, dt, bitcast<i32>(rv[0].x));
    }
  }
}
