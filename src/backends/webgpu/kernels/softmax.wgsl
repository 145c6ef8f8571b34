//! bind x:in out:out
//! use group_reduce
// Softmax / log-softmax over the middle axis of contiguous [outer, n, inner],
// f32, f16 or bf16 storage with f32 math, as the CPU backend's softmax.cpp.
// One work-group of 128 per row (outer * inner rows, laid out by run_rows);
// max and sum reduced across it (group_reduce.wgsl).
// P: [0] n [1] inner [2] log [3] dtype [4] x offset [5] out offset.

@compute @workgroup_size(128)
fn softmax_rows(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
  let lid = lid3.x;
  let row = group_index(wid, nwg);
  let n = P[0];
  let inner = P[1];
  let dt = P[3];
  let base = (row / inner) * n * inner + (row % inner);
  var mx = neg_inf();
  for (var i = lid; i < n; i = i + 128u) {
    let v = x_f(P[4] + base + i * inner, dt);
    if (v > mx || is_nan(v)) { mx = v; }
  }
  mx = group_max(mx, lid);
  let shift = select(mx, 0.0, mx == neg_inf());
  var sum = 0.0;
  for (var i = lid; i < n; i = i + 128u) { sum = sum + exp(x_f(P[4] + base + i * inner, dt) - shift); }
  sum = group_sum(sum, lid);
  if (P[2] != 0u) {
    let lse = log(sum);
    for (var i = lid; i < n; i = i + 128u) {
      out_set_f(P[5] + base + i * inner, dt, x_f(P[4] + base + i * inner, dt) - shift - lse);
    }
  } else {
    let inv = 1.0 / sum;
    for (var i = lid; i < n; i = i + 128u) {
      out_set_f(P[5] + base + i * inner, dt, exp(x_f(P[4] + base + i * inner, dt) - shift) * inv);
    }
  }
}
