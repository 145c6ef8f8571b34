// The same fused bias + GELU + dropout in WGSL for the WebGPU backend. Each
// argument is one binding, in argument order: tensors as storage arrays, the
// values as uniforms.
@group(0) @binding(0) var<storage, read_write> y : array<f32>;
@group(0) @binding(1) var<storage, read> x : array<f32>;
@group(0) @binding(2) var<storage, read> bias : array<f32>;
@group(0) @binding(3) var<storage, read> keep : array<f32>;
@group(0) @binding(4) var<uniform> rows : u32;
@group(0) @binding(5) var<uniform> cols : u32;
@group(0) @binding(6) var<uniform> scale : f32;

@compute @workgroup_size(256)
fn bias_gelu_dropout(@builtin(global_invocation_id) gid : vec3<u32>,
                     @builtin(num_workgroups) groups : vec3<u32>) {
  let n = rows * cols;
  var i = gid.x;
  while (i < n) {
    let v = x[i] + bias[i % cols];
    let g = 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    y[i] = keep[i] * g * scale;
    i = i + groups.x * 256u;
  }
}
