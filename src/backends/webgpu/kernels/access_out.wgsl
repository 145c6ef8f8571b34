// Outputs are arrays of atomic words: elements narrower than a word share it
// with their neighbours, which other invocations write at the same time; each
// invocation clears and sets only its own bits.
fn BUF_word(p_w: u32) -> u32 { return atomicLoad(&BUF[p_w]); }

fn BUF_put_bits(p_byte: u32, p_width: u32, p_v: u32) {
  let p_w = p_byte >> 2u;
  if (p_width == 4u) {
    atomicStore(&BUF[p_w], p_v);
    return;
  }
  let p_shift = (p_byte & 3u) * 8u;
  let p_mask = ((1u << (p_width * 8u)) - 1u) << p_shift;
  atomicAnd(&BUF[p_w], ~p_mask);
  atomicOr(&BUF[p_w], (p_v << p_shift) & p_mask);
}

// Stores p_v into element p_i of an f32, f16 or bf16 tensor, rounded as the host rounds.
fn BUF_set_f(p_i: u32, p_dt: u32, p_v: f32) {
  if (p_dt == ELEM_F32) {
    atomicStore(&BUF[p_i], bitcast<u32>(p_v));
  } else if (p_dt == ELEM_F16) {
    BUF_put_bits(p_i * 2u, 2u, float_to_half_bits(p_v));
  } else {
    BUF_put_bits(p_i * 2u, 2u, float_to_bf16_bits(p_v));
  }
}

// Stores the low bits of p_v into element p_i of an i8, u8, i32 or bool tensor (bool: p_v != 0).
fn BUF_set_i(p_i: u32, p_dt: u32, p_v: i32) {
  switch (p_dt) {
    case 4u, 5u: { BUF_put_bits(p_i, 1u, bitcast<u32>(p_v) & 0xffu); }
    case 8u: { BUF_put_bits(p_i, 1u, select(0u, 1u, p_v != 0)); }
    default: { atomicStore(&BUF[p_i], bitcast<u32>(p_v)); }
  }
}

fn BUF_set_i64(p_i: u32, p_v: vec2<u32>) {
  atomicStore(&BUF[2u * p_i], p_v.x);
  atomicStore(&BUF[2u * p_i + 1u], p_v.y);
}
