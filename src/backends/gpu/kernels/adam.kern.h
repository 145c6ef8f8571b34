/* One fused Adam / AdamW step on one parameter tensor, in place, as the CPU
 * backend's adam.cpp: param and grad in f32, f16 or bf16 storage (dt:
 * ELEM_*), the moments in f32, every tensor contiguous from its element
 * offset. Each element is read once and written once; the step's scalars
 * (step_size = lr / (1 - beta1^t), inv_sqrt_bc2 = 1 / sqrt(1 - beta2^t), the
 * AdamW decay 1 - lr * wd, the Adam L2 term) come from the host as the CPU
 * computes them. The arithmetic is the CPU's, in its order, each product
 * rounded on its own (mul_add_unfused, dot2_unfused), grid-stride. */

KERNEL void adam_elems(GLOBAL uchar* param, GLOBAL const uchar* grad, GLOBAL float* exp_avg, GLOBAL float* exp_avg_sq,
                       long op, long og, long om, long ov, long n, float beta1, float beta2, float step_size,
                       float inv_sqrt_bc2, float eps, float decay, float l2, float grad_scale, int dt) {
  for (long i = GLOBAL_ID0(); i < n; i += GLOBAL_SIZE0()) {
    const float p = load_elem(param, op + i, dt);
    const float g = dot2_unfused(load_elem(grad, og + i, dt), grad_scale, l2, p);
    const float m = dot2_unfused(beta1, exp_avg[om + i], 1.0f - beta1, g);
    const float v = dot2_unfused(beta2, exp_avg_sq[ov + i], (1.0f - beta2) * g, g);
    exp_avg[om + i] = m;
    exp_avg_sq[ov + i] = v;
    const float denom = mul_add_unfused(sqrt(v), inv_sqrt_bc2, eps);
    store_elem(param, op + i, dt, mul_add_unfused(p, decay, -(step_size * m / denom)));
  }
}
