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
    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
  Philox4 out;
  out.v[0] = c0; out.v[1] = c1; out.v[2] = c2; out.v[3] = c3;
  return out;
}

/* The 128-bit counter is (counter, 0); the key is the 64-bit seed. */
DEVICE_FN Philox4 philox4x32_10(ulong counter, ulong seed) {
  return philox4x32_10_full((uint)counter, (uint)(counter >> 32), 0u, 0u, (uint)seed, (uint)(seed >> 32));
}

/* [0, 1) with 24 random bits. */
DEVICE_FN float philox_uniform(uint x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }

#endif
