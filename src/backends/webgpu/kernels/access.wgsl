// Elements of binding BUF (program.cpp renames BUF for each binding), over
// BUF_word from access_in.wgsl or access_out.wgsl.

// `width` (1, 2 or 4) bytes at byte address `byte` (a multiple of width).
fn BUF_bits(byte: u32, width: u32) -> u32 {
  let w = BUF_word(byte >> 2u);
  if (width == 4u) { return w; }
  return (w >> ((byte & 3u) * 8u)) & ((1u << (width * 8u)) - 1u);
}

// Element i of an f32, f16 or bf16 tensor, as f32.
fn BUF_f(i: u32, dt: u32) -> f32 {
  if (dt == ELEM_F32) { return bitcast<f32>(BUF_word(i)); }
  let h = BUF_bits(i * 2u, 2u);
  if (dt == ELEM_F16) { return half_bits_to_float(h); }
  return bitcast<f32>(h << 16u);
}

// Element i of an i8, u8, i32 or bool tensor, widened (bool: 0 or 1).
fn BUF_i(i: u32, dt: u32) -> i32 {
  switch (dt) {
    case 4u: { return (i32(BUF_bits(i, 1u)) << 24u) >> 24u; }
    case 5u: { return i32(BUF_bits(i, 1u)); }
    case 8u: { return select(0, 1, BUF_bits(i, 1u) != 0u); }
    default: { return bitcast<i32>(BUF_word(i)); }
  }
}
