//! bind x:in scale:in zp:in out:out
// int8 quantization with ONNX's QuantizeLinear / DequantizeLinear semantics,
// as src/backends/gpu/kernels/linear_quant.kern.h: element i of contiguous x belongs to
// channel (i / inner) % channels, with its f32 scale and (when has_zp) its U8 or
// I8 zero point. round() rounds half to even. Math in f32.
// P: [0] x offset [1] fdt/qdt of x [2] scale offset [3] zp offset [4] has_zp
//    [5] out offset [6] dtype of out [7] n [8] channels [9] inner.

fn lq_channel(i: u32) -> u32 { return (i / P[9]) % P[8]; }

fn lq_zero(c: u32, qdt: u32) -> f32 {
  if (P[4] == 0u) { return 0.0; }
  return f32(zp_i(P[3] + c, qdt));
}

// saturate(round(x / scale) + zero_point); NaN gives the zero point.
@compute @workgroup_size(256)
fn quantize_linear_elems(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg, 256u);
  if (i >= P[7]) { return; }
  let qdt = P[6];
  let c = lq_channel(i);
  let z = lq_zero(c, qdt);
  let lo = select(-128.0, 0.0, qdt == ELEM_U8);
  let hi = select(127.0, 255.0, qdt == ELEM_U8);
  var q = round(x_f(P[0] + i, P[1]) / scale_f(P[2] + c, ELEM_F32)) + z;
  if (is_nan(q)) { q = z; }
  out_set_i(P[5] + i, qdt, i32(clamp(q, lo, hi)));
}

// (x - zero_point) * scale in f32, stored as out's dtype.
@compute @workgroup_size(256)
fn dequantize_linear_elems(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg, 256u);
  if (i >= P[7]) { return; }
  let qdt = P[1];
  let c = lq_channel(i);
  let v = (f32(x_i(P[0] + i, qdt)) - lq_zero(c, qdt)) * scale_f(P[2] + c, ELEM_F32);
  out_set_f(P[5] + i, P[6], v);
}
