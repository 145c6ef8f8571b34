// Shared part (`//! use group_reduce`): sums and maxima across a work-group of
// 128 invocations through workgroup memory, for kernels that give one
// work-group a row (softmax, norms, reductions). Every invocation must call
// them (they hold barriers).
var<workgroup> red: array<f32, 128>;

fn group_sum(v: f32, lid: u32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = 64u; s > 0u; s = s >> 1u) {
    if (lid < s) { red[lid] = red[lid] + red[lid + s]; }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}

// The maximum, NaN winning.
fn group_max(v: f32, lid: u32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = 64u; s > 0u; s = s >> 1u) {
    if (lid < s) {
      let o = red[lid + s];
      if (o > red[lid] || is_nan(o)) { red[lid] = o; }
    }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}
