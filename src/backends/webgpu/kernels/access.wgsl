// Elements of binding BUF (program.cpp renames BUF for each binding), over
// BUF_word from access_in.wgsl or access_out.wgsl.

// `p_width` (1, 2 or 4) bytes at byte address `p_byte` (a multiple of p_width).
fn BUF_bits(p_byte: u32, p_width: u32) -> u32 {
  let p_w = BUF_word(p_byte >> 2u);
  if (p_width == 4u) { return p_w; }
  return (p_w >> ((p_byte & 3u) * 8u)) & ((1u << (p_width * 8u)) - 1u);
}

// Element p_i of an f32, f16 or bf16 tensor, as f32.
fn BUF_f(p_i: u32, p_dt: u32) -> f32 {
  if (p_dt == ELEM_F32) { return bitcast<f32>(BUF_word(p_i)); }
  let p_h = BUF_bits(p_i * 2u, 2u);
  if (p_dt == ELEM_F16) { return half_bits_to_float(p_h); }
  return bitcast<f32>(p_h << 16u);
}

// Element p_i of an i8, u8, i32 or bool tensor, widened (bool: 0 or 1).
fn BUF_i(p_i: u32, p_dt: u32) -> i32 {
  switch (p_dt) {
    case 4u: { return (i32(BUF_bits(p_i, 1u)) << 24u) >> 24u; }
    case 5u: { return i32(BUF_bits(p_i, 1u)); }
    case 8u: { return select(0, 1, BUF_bits(p_i, 1u) != 0u); }
    default: { return bitcast<i32>(BUF_word(p_i)); }
  }
}

// Element p_i of an i64 tensor as (lo, hi) words.
fn BUF_i64(p_i: u32) -> vec2<u32> { return vec2<u32>(BUF_word(2u * p_i), BUF_word(2u * p_i + 1u)); }
