/* Scaled dot-product attention (AttentionMeta, meta.h), flash-style: one
 * AT_GROUP work-group per query row (per split of its keys when decoding:
 * m.splits > 1) walks the keys it sees in tiles of
 * AT_GROUP with an online softmax (running max and sum), so no score matrix
 * is stored: O(d + AT_GROUP) local memory per work-group whatever the
 * sequence length. Each work-item scores one key of the tile, then owns the
 * output dimensions lid, lid + AT_GROUP, ... (d, dv <= AT_MAX_D). Grouped-
 * query heads read k/v head h / (hq / hkv). A sliding window (m.window > 0)
 * moves the first key a row sees; a soft-cap (m.softcap > 0) bends each score
 * through tanh before the softmax. A query that sees no key (causal,
 * shift < -i) gets zeros, as the CPU backend's attention.cpp. f32, f16 or
 * bf16 storage (m.dt: ELEM_*) with f32 math. */

KERNEL void attention_rows(GLOBAL const uchar* q, GLOBAL const uchar* k, GLOBAL const uchar* v, GLOBAL uchar* out,
                           GLOBAL float* part, META(AttentionMeta) m) {
  LOCAL_ARRAY(float, qs, AT_MAX_D);
  LOCAL_ARRAY(float, p, AT_GROUP);
  LOCAL_ARRAY(float, red, AT_GROUP);
  const long row = GROUP_ID(0) / m.splits; /* (b * hq + h) * sq + i */
  const long split = GROUP_ID(0) % m.splits;
  const long lid = LOCAL_ID(0);
  const long i = row % m.sq, bh = row / m.sq, h = bh % m.hq, b = bh / m.hq;
  const long kvh = h / (m.hq / m.hkv);
  const long kbase = m.ok + b * m.kb + kvh * m.kh, vbase = m.ov + b * m.vb + kvh * m.vh;
  for (long d = lid; d < m.d; d += AT_GROUP) qs[d] = load_elem(q, m.oq + row * m.d + d, m.dt) * m.scale;
  long kend = m.skv;
  if (m.causal) {
    const long lim = i + m.shift + 1;
    kend = lim < kend ? (lim > 0 ? lim : 0) : kend;
  }
  /* This work-group's share of the keys: [jbeg, kend), within the window. */
  long jbeg = split * m.split_len;
  if (m.splits > 1) kend = jbeg + m.split_len < kend ? jbeg + m.split_len : kend;
  if (m.window > 0 && i + m.shift - m.window + 1 > jbeg) jbeg = i + m.shift - m.window + 1;
  float acc[AT_MAX_D / AT_GROUP];
  for (int r = 0; r < AT_MAX_D / AT_GROUP; ++r) acc[r] = 0.0f;
  float mx = -INFINITY, l = 0.0f;
  BARRIER();
  for (long j0 = jbeg; j0 < kend; j0 += AT_GROUP) {
    const long j = j0 + lid;
    float s = -INFINITY;
    if (j < kend) {
      s = 0.0f;
      const long kr = kbase + j * m.d;
      for (long d = 0; d < m.d; ++d) s += qs[d] * load_elem(k, kr + d, m.dt);
      if (m.softcap > 0.0f) s = m.softcap * tanh_sat(s / m.softcap);
    }
    /* The tile's max, then the new running max and the rescale of what came before. */
    red[lid] = s;
    BARRIER();
    for (long st = AT_GROUP / 2; st > 0; st >>= 1) {
      if (lid < st) red[lid] = red[lid + st] > red[lid] ? red[lid + st] : red[lid];
      BARRIER();
    }
    const float tmax = red[0];
    BARRIER();
    const float mnew = tmax > mx ? tmax : mx;
    const float alpha = exp(mx - mnew);
    const float pj = j < kend ? exp(s - mnew) : 0.0f;
    p[lid] = pj;
    red[lid] = pj;
    BARRIER();
    for (long st = AT_GROUP / 2; st > 0; st >>= 1) {
      if (lid < st) red[lid] += red[lid + st];
      BARRIER();
    }
    l = l * alpha + red[0];
    mx = mnew;
    const long nk = kend - j0 < AT_GROUP ? kend - j0 : AT_GROUP;
    for (int r = 0; r < AT_MAX_D / AT_GROUP; ++r) {
      const long d = lid + (long)r * AT_GROUP;
      if (d < m.dv) {
        float a = acc[r] * alpha;
        for (long jj = 0; jj < nk; ++jj) a += p[jj] * load_elem(v, vbase + (j0 + jj) * m.dv + d, m.dt);
        acc[r] = a;
      }
    }
    BARRIER();
  }
  if (m.splits > 1) {
    /* Partial: running max, sum and the unnormalised outputs. */
    GLOBAL float* pr = part + GROUP_ID(0) * (m.dv + 2);
    if (lid == 0) {
      pr[0] = mx;
      pr[1] = l;
    }
    for (int r = 0; r < AT_MAX_D / AT_GROUP; ++r) {
      const long d = lid + (long)r * AT_GROUP;
      if (d < m.dv) pr[2 + d] = acc[r];
    }
    return;
  }
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;
  for (int r = 0; r < AT_MAX_D / AT_GROUP; ++r) {
    const long d = lid + (long)r * AT_GROUP;
    if (d < m.dv) store_elem(out, m.oo + row * m.dv + d, m.dt, acc[r] * inv);
  }
}

/* Split-K's second pass: one AT_GROUP work-group per query row rescales its
 * splits' partials to the largest max and normalises; splits that held no key
 * the row sees (sum 0) count for nothing, and a row that sees none gets zeros. */
KERNEL void attention_combine(GLOBAL const float* part, GLOBAL uchar* out, META(AttentionMeta) m) {
  const long row = GROUP_ID(0);
  const long lid = LOCAL_ID(0);
  GLOBAL const float* pr = part + row * m.splits * (m.dv + 2);
  float mx = -INFINITY;
  for (long s = 0; s < m.splits; ++s)
    if (pr[s * (m.dv + 2) + 1] > 0.0f && pr[s * (m.dv + 2)] > mx) mx = pr[s * (m.dv + 2)];
  float sum = 0.0f;
  for (long s = 0; s < m.splits; ++s) {
    const float ls = pr[s * (m.dv + 2) + 1];
    if (ls > 0.0f) sum += ls * exp(pr[s * (m.dv + 2)] - mx);
  }
  const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
  for (long d = lid; d < m.dv; d += AT_GROUP) {
    float o = 0.0f;
    for (long s = 0; s < m.splits; ++s) {
      const float ls = pr[s * (m.dv + 2) + 1];
      if (ls > 0.0f) o += exp(pr[s * (m.dv + 2)] - mx) * pr[s * (m.dv + 2) + 2 + d];
    }
    store_elem(out, m.oo + row * m.dv + d, m.dt, o * inv);
  }
}
