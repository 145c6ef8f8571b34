/* Rotary embedding on contiguous x [batch, seq, heads, hd] into out (same
 * layout), as the CPU backend's rope.cpp: cos and sin are contiguous f32
 * [max_pos, rot_dim / 2], token s at position pos0 + s. neox rotates halves
 * (d, d + rot_dim / 2), GPT-J interleaved pairs (2i, 2i + 1); dimensions past
 * rot_dim are copied. One work-item per output element (grid-stride); f32,
 * f16 or bf16 storage (dt: ELEM_*); element offsets of the first elements. */

KERNEL void rope_elems(GLOBAL const uchar* x, GLOBAL const float* cs, GLOBAL const float* sn, GLOBAL uchar* out,
                       long total, long seq, long heads, long hd, long rot_dim, long pos0, long ox, long oc, long os, long oo,
                       int neox, int dt) {
  const long nhalf = rot_dim / 2;
  for (long e = GLOBAL_ID0(); e < total; e += GLOBAL_SIZE0()) {
    const long d = e % hd;
    if (d >= rot_dim) {
      store_elem(out, oo + e, dt, load_elem(x, ox + e, dt));
      continue;
    }
    const long pos = pos0 + (e / (heads * hd)) % seq;
    const long row = e - d; /* the head's first element */
    long i, i0, i1;
    if (neox) {
      i = d < nhalf ? d : d - nhalf;
      i0 = i;
      i1 = i + nhalf;
    } else {
      i = d / 2;
      i0 = 2 * i;
      i1 = 2 * i + 1;
    }
    const float c = cs[oc + pos * nhalf + i], s = sn[os + pos * nhalf + i];
    const float x0 = load_elem(x, ox + row + i0, dt), x1 = load_elem(x, ox + row + i1, dt);
    /* Each product rounded, then the sum, as the host computes it (a fused
     * multiply-add would differ where the two products nearly cancel). */
    store_elem(out, oo + e, dt, d == i0 ? mul_add_unfused(x0, c, -(x1 * s)) : mul_add_unfused(x1, c, x0 * s));
  }
}
