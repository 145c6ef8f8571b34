/* Philox4x32-10 (Salmon et al., SC'11): counter-based, so element i's numbers
 * depend only on (seed, offset + i / 4) — the same on every thread count and
 * device. Shared by the CPU backend (as C++) and the GPU dialects. */
#ifndef TORSH_KERNELS_PHILOX_H
#define TORSH_KERNELS_PHILOX_H

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

typedef struct {
  uint v[4];
} Philox4;

DEVICE_FN uint philox_mulhi(uint a, uint b) { return (uint)(((ulong)a * (ulong)b) >> 32); }

DEVICE_FN Philox4 philox4x32_10_full(uint c0, uint c1, uint c2, uint c3, uint k0, uint k1) {
  for (int r = 0; r < 10; ++r) {
    const uint hi0 = philox_mulhi(PHILOX_M0, c0), lo0 = PHILOX_M0 * c0;
    const uint hi1 = philox_mulhi(PHILOX_M1, c2), lo1 = PHILOX_M1 * c2;
    const uint n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
  Philox4 out;
  out.v[0] = c0;
  out.v[1] = c1;
  out.v[2] = c2;
  out.v[3] = c3;
  return out;
}

/* The 128-bit counter is (counter, 0); the key is the 64-bit seed. */
DEVICE_FN Philox4 philox4x32_10(ulong counter, ulong seed) {
  return philox4x32_10_full((uint)counter, (uint)(counter >> 32), 0u, 0u, (uint)seed, (uint)(seed >> 32));
}

/* [0, 1) with 24 random bits. */
DEVICE_FN float philox_uniform(uint x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }

/* Box-Muller's log, sqrt, sin and cos, written once for every backend: the
 * libraries' versions (libm, OpenCL's builtins, CUDA's) differ in the last
 * ulp, and OpenCL may even round sqrt to 3 ulps. These use only f32 +, -, *
 * (each rounded on its own: mul_add_unfused, never a fused multiply-add) and
 * integer bit operations, which every IEEE device rounds alike, so randn is
 * the same bits everywhere. Accurate to a few ulps (checked against libm in
 * tests/test_ops_nn.cpp) on the inputs Box-Muller gives them. */

/* log(u) for u in [2^-24, 1] (normal, positive): Cephes' logf. u = 2^e * m,
 * m in [sqrt(1/2), sqrt(2)), log(m) by a polynomial in m - 1, e * ln 2 added
 * as 0.693359375 (exact in a product with e) plus a small correction. */
DEVICE_FN float philox_log(float u) {
  const uint bits = AS_UINT(u);
  int e = (int)(bits >> 23) - 126;
  float x = AS_FLOAT((bits & 0x7fffffu) | 0x3f000000u); /* [0.5, 1) */
  if (x < 0.70710678f) {
    e -= 1;
    x = (x + x) - 1.0f; /* exact */
  } else {
    x = x - 1.0f; /* exact */
  }
  const float z = x * x;
  float p = 7.0376836292e-2f;
  p = mul_add_unfused(p, x, -1.1514610310e-1f);
  p = mul_add_unfused(p, x, 1.1676998740e-1f);
  p = mul_add_unfused(p, x, -1.2420140846e-1f);
  p = mul_add_unfused(p, x, 1.4249322787e-1f);
  p = mul_add_unfused(p, x, -1.6668057665e-1f);
  p = mul_add_unfused(p, x, 2.0000714765e-1f);
  p = mul_add_unfused(p, x, -2.4999993993e-1f);
  p = mul_add_unfused(p, x, 3.3333331174e-1f);
  const float fe = (float)e;
  float y = dot2_unfused(p * x, z, -2.12194440e-4f, fe);
  y = mul_add_unfused(-0.5f, z, y);
  return mul_add_unfused(0.693359375f, fe, x + y);
}

/* sqrt(v) for v = 0 or v normal and positive: three Newton steps on
 * 1/sqrt(v) from the bit-trick guess, then one on the root itself. */
DEVICE_FN float philox_sqrt(float v) {
  if (v == 0.0f) return 0.0f;
  float y = AS_FLOAT(0x5f3759dfu - (AS_UINT(v) >> 1));
  for (int i = 0; i < 3; ++i) y = y * mul_add_unfused(-(0.5f * v * y), y, 1.5f);
  const float s = v * y;
  return mul_add_unfused(0.5f * y, mul_add_unfused(-s, s, v), s);
}

/* sin(pi/2 r) and cos(pi/2 r) for r in [-1/2, 1/2]: Taylor series in r
 * (the first omitted terms are below 2^-28 there). */
DEVICE_FN float philox_sin_quarter(float r) {
  const float r2 = r * r;
  float p = 1.6044118478e-4f;
  p = mul_add_unfused(p, r2, -4.6817541354e-3f);
  p = mul_add_unfused(p, r2, 7.9692626246e-2f);
  p = mul_add_unfused(p, r2, -6.4596409750e-1f);
  p = mul_add_unfused(p, r2, 1.5707963268f);
  return p * r;
}

DEVICE_FN float philox_cos_quarter(float r) {
  const float r2 = r * r;
  float p = -2.5202042373e-5f;
  p = mul_add_unfused(p, r2, 9.1926027484e-4f);
  p = mul_add_unfused(p, r2, -2.0863480763e-2f);
  p = mul_add_unfused(p, r2, 2.5366950790e-1f);
  p = mul_add_unfused(p, r2, -1.2337005501f);
  return mul_add_unfused(p, r2, 1.0f);
}

/* sin(2 pi u) (cosine: want_cos) for u in [0, 1) a multiple of 2^-24, as
 * philox_uniform gives: u = (4 q + k) / 4 with k the nearest quarter turn,
 * reduced exactly on the integer 2^24 u, so the angle loses no digits to a
 * rounded 2 pi. */
DEVICE_FN float philox_sincos_turns(float u, int want_cos) {
  const int k = (int)(u * 16777216.0f); /* exact */
  const int quarter = (k + (1 << 21)) >> 22;
  const float r = (float)(k - (quarter << 22)) * (1.0f / 4194304.0f); /* [-1/2, 1/2], exact */
  const int q = (quarter + (want_cos ? 1 : 0)) & 3;                   /* cos(x) = sin(x + pi/2) */
  const float v = (q & 1) ? philox_cos_quarter(r) : philox_sin_quarter(r);
  return q & 2 ? -v : v;
}

/* The four elements a Philox block becomes (torsh::rt::RandomKind's values):
 * Uniform in [a, b); Normal with mean a and std b, Box-Muller on the lane
 * pairs (0, 1) and (2, 3), the even lane taking the cosine and the odd the
 * sine of one radius; Bernoulli: 1 with probability a. */
#define PHILOX_UNIFORM 0
#define PHILOX_NORMAL 1
#define PHILOX_BERNOULLI 2

typedef struct {
  float v[4];
} PhiloxFloat4;

DEVICE_FN PhiloxFloat4 philox_sample4(int kind, float a, float b, Philox4 blk) {
  PhiloxFloat4 out;
  for (int lane = 0; lane < 4; lane += 2) {
    if (kind == PHILOX_NORMAL) {
      /* u1 = 1 - u in (0, 1] keeps the log finite. */
      const float u1 = (float)(16777216u - (blk.v[lane] >> 8)) * (1.0f / 16777216.0f);
      const float rad = b * philox_sqrt(-2.0f * philox_log(u1));
      const float u2 = philox_uniform(blk.v[lane + 1]);
      out.v[lane] = mul_add_unfused(rad, philox_sincos_turns(u2, 1), a);
      out.v[lane + 1] = mul_add_unfused(rad, philox_sincos_turns(u2, 0), a);
    } else {
      for (int k = lane; k < lane + 2; ++k) {
        const float u = philox_uniform(blk.v[k]);
        out.v[k] = kind == PHILOX_UNIFORM ? mul_add_unfused(b - a, u, a) : (u < a ? 1.0f : 0.0f);
      }
    }
  }
  return out;
}

#endif
