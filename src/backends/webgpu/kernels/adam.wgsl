//! bind param:out grad:in m:out v:out
// One fused Adam / AdamW step on one parameter tensor, in place, as
// src/backends/gpu/kernels/adam.kern.h and the CPU backend's adam.cpp: param and grad in
// f32, f16 or bf16, the moments in f32, each tensor contiguous from its
// element offset; the step's scalars come from the host (gpu/adam_step.hpp).
// The CPU's arithmetic in its order, each product rounded on its own.
// P: [0..4) offsets of param, grad, m, v [4] n [5] beta1 [6] beta2
// [7] step_size [8] inv_sqrt_bc2 [9] eps [10] decay [11] l2 [12] grad_scale
// (f32 bits) [13] dtype.

// a * b + c with both roundings, as the host (unfused: prelude.wgsl).
fn mad(a: f32, b: f32, c: f32) -> f32 { return unfused(a * b) + c; }

@compute @workgroup_size(256)
fn adam_elems(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg, 256u);
  if (i >= P[4]) { return; }
  let dt = P[13];
  let beta1 = bitcast<f32>(P[5]);
  let beta2 = bitcast<f32>(P[6]);
  let p = param_f(P[0] + i, dt);
  let g = mad(grad_f(P[1] + i, dt), bitcast<f32>(P[12]), unfused(bitcast<f32>(P[11]) * p));
  let mm = mad(beta1, m_f(P[2] + i, ELEM_F32), unfused((1.0 - beta1) * g));
  let vv = mad(beta2, v_f(P[3] + i, ELEM_F32), unfused((1.0 - beta2) * g * g));
  m_set_f(P[2] + i, ELEM_F32, mm);
  v_set_f(P[3] + i, ELEM_F32, vv);
  let denom = mad(sqrt(vv), bitcast<f32>(P[8]), bitcast<f32>(P[9]));
  param_set_f(P[0] + i, dt, mad(p, bitcast<f32>(P[10]), -(bitcast<f32>(P[7]) * mm / denom)));
}
