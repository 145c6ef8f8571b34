// Outputs are arrays of atomic words: elements narrower than a word share it
// with their neighbours, which other invocations write at the same time; each
// invocation clears and sets only its own bits.
fn BUF_word(w: u32) -> u32 { return atomicLoad(&BUF[w]); }

fn BUF_put_bits(byte: u32, width: u32, v: u32) {
  let w = byte >> 2u;
  if (width == 4u) {
    atomicStore(&BUF[w], v);
    return;
  }
  let shift = (byte & 3u) * 8u;
  let mask = ((1u << (width * 8u)) - 1u) << shift;
  atomicAnd(&BUF[w], ~mask);
  atomicOr(&BUF[w], (v << shift) & mask);
}

// Stores v into element i of an f32, f16 or bf16 tensor, rounded as the host rounds.
fn BUF_set_f(i: u32, dt: u32, v: f32) {
  if (dt == ELEM_F32) {
    atomicStore(&BUF[i], bitcast<u32>(v));
  } else if (dt == ELEM_F16) {
    BUF_put_bits(i * 2u, 2u, float_to_half_bits(v));
  } else {
    BUF_put_bits(i * 2u, 2u, float_to_bf16_bits(v));
  }
}

// Stores the low bits of v into element i of an i8, u8, i32 or bool tensor (bool: v != 0).
fn BUF_set_i(i: u32, dt: u32, v: i32) {
  switch (dt) {
    case 4u, 5u: { BUF_put_bits(i, 1u, bitcast<u32>(v) & 0xffu); }
    case 8u: { BUF_put_bits(i, 1u, select(0u, 1u, v != 0)); }
    default: { atomicStore(&BUF[i], bitcast<u32>(v)); }
  }
}
