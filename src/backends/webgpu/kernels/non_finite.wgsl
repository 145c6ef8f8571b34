//! bind x:in flag:out
// The loss scaler's overflow check, as src/backends/gpu/kernels/non_finite.kern.h: sets the
// Bool flag when contiguous x holds a NaN or an infinity (all exponent bits
// set), tested on the bits, so f64 needs no doubles. Every invocation that
// finds one stores the same byte.
// P: [0] x offset [1] n [2] dtype [3] flag offset.

@compute @workgroup_size(256)
fn non_finite_elems(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg, 256u);
  if (i >= P[1]) { return; }
  let dt = P[2];
  let e = P[0] + i;
  var found = false;
  if (dt == ELEM_F32) {
    found = (x_word(e) & 0x7f800000u) == 0x7f800000u;
  } else if (dt == ELEM_F64) {
    found = (x_word(2u * e + 1u) & 0x7ff00000u) == 0x7ff00000u;
  } else {
    let mask = select(0x7f80u, 0x7c00u, dt == ELEM_F16);
    found = (x_bits(2u * e, 2u) & mask) == mask;
  }
  if (found) { flag_put_bits(P[3], 1u, 1u); }
}
