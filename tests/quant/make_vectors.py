#!/usr/bin/env python3
"""Writes vectors.bin: f32 inputs and what the gguf package's reference
quantizers (gguf.quants, which reproduce ggml's C reference bit for bit) make
of them, for tests/test_quant.cpp.

Layout (little-endian): b"TQV1", u32 n, f32 x[n]; then for q4_0, q4_1, q8_0,
q5_0, q5_1 in that order (torsh::kAllQuantFormats): u32 nbytes, the blocks,
f32 dequantized[n]. Then b"TQK1" and, for q4_k, q5_k, q6_k, iq4_nl, iq4_xs, q2_k, q3_k: u32 nbytes,
super-blocks of random bytes (the f16 scales set to finite values, plus edge
blocks: zero scales, every 6-bit scale and minimum 63, subnormal scales),
u32 n, f32 gguf-dequantized[n]. gguf has no quantizer for these; they check
the dequantizers (and the kernels reading the same blocks).

Run: build/pyenv/bin/python tests/quant/make_vectors.py (needs numpy and gguf).
"""
import pathlib
import struct

import numpy as np
from gguf import GGMLQuantizationType
from gguf.quants import dequantize, quantize


def blocks() -> np.ndarray:
    rng = np.random.default_rng(20261124)
    b = [
        rng.standard_normal(32),                        # ordinary weights
        np.zeros(32),                                   # all-zero block: scale 0
        rng.uniform(-1e4, 1e4, 32),                     # large magnitudes
        rng.standard_normal(32) * 1e-6,                 # scales in f16's subnormal range
        np.where(np.arange(32) == 5, -3.0, 0.0),        # one negative value
        np.full(32, 3.0),                               # constant: Q4_1's range is 0
        np.concatenate([[127.0, -127.0], np.arange(30) - 14.5]),  # Q8_0 ties (scale 1)
        np.linspace(-1.0, 1.0, 32),                     # a ramp
        rng.uniform(0.5, 2.0, 32),                      # all positive
        rng.standard_normal(32) * 100.0,
        np.concatenate([[-16.0], np.arange(31) * 0.5 - 7.25]),  # Q4_0 levels and ties (scale 2)
        np.concatenate([[-32.0], np.arange(31) - 15.5]),  # Q5_0 levels and ties (scale 2)
        rng.uniform(-3.0, 5.0, 32),                     # off-centre: Q5_1's minimum and 31 steps
        rng.standard_normal(32) * 1e-3,
    ]
    return np.concatenate(b).astype(np.float32).reshape(2, -1)  # two rows of 7 blocks


def k_blocks(t: GGMLQuantizationType, rng: np.random.Generator) -> np.ndarray:
    size = {GGMLQuantizationType.Q4_K: 144, GGMLQuantizationType.Q5_K: 176, GGMLQuantizationType.Q6_K: 210,
            GGMLQuantizationType.IQ4_NL: 18, GGMLQuantizationType.IQ4_XS: 136,
            GGMLQuantizationType.Q2_K: 84, GGMLQuantizationType.Q3_K: 110}[t]
    n = 48 if t == GGMLQuantizationType.IQ4_NL else 6  # 1536 elements either way
    b = rng.integers(0, 256, size=(n, size), dtype=np.uint8)
    scales = [0.01, 0.5, 0.0, 3e-7, 1e-3, 40.0]  # 0: a zero scale; 3e-7: f16 subnormal
    for i in range(n):
        d = np.array([scales[i % 6] * rng.uniform(0.5, 1.5), scales[(i + 1) % 6] * rng.uniform(0.5, 1.5)],
                     np.float16)
        if t == GGMLQuantizationType.Q6_K:
            b[i, 208:210] = d[:1].view(np.uint8)
        elif t == GGMLQuantizationType.Q2_K:
            b[i, 80:84] = d.view(np.uint8)
        elif t == GGMLQuantizationType.Q3_K:
            b[i, 108:110] = d[:1].view(np.uint8)
        elif t in (GGMLQuantizationType.IQ4_NL, GGMLQuantizationType.IQ4_XS):
            b[i, 0:2] = d[:1].view(np.uint8)
        else:
            b[i, 0:4] = d.view(np.uint8)
    if t == GGMLQuantizationType.Q6_K:
        b[4, 192:208] = 0x80  # every scale -128
    elif t == GGMLQuantizationType.Q2_K:
        b[4, 0:16] = 0xFF  # every scale and minimum 15
    elif t == GGMLQuantizationType.Q3_K:
        b[4, 96:108] = 0xFF  # every scale 63 - 32
    elif t == GGMLQuantizationType.IQ4_XS:
        b[4, 2:8] = 0xFF  # every scale 63 - 32
    elif t != GGMLQuantizationType.IQ4_NL:
        b[4, 4:16] = 0xFF  # every scale and minimum 63
    return b


def main() -> None:
    x = blocks()
    out = bytearray(b"TQV1")
    out += struct.pack("<I", x.size) + x.tobytes()
    for t in (GGMLQuantizationType.Q4_0, GGMLQuantizationType.Q4_1, GGMLQuantizationType.Q8_0,
              GGMLQuantizationType.Q5_0, GGMLQuantizationType.Q5_1):
        q = quantize(x, t)
        y = dequantize(q, t).astype(np.float32)
        out += struct.pack("<I", q.size) + q.tobytes() + y.tobytes()
    out += b"TQK1"
    rng = np.random.default_rng(20261207)
    for t in (GGMLQuantizationType.Q4_K, GGMLQuantizationType.Q5_K, GGMLQuantizationType.Q6_K,
              GGMLQuantizationType.IQ4_NL, GGMLQuantizationType.IQ4_XS, GGMLQuantizationType.Q2_K,
              GGMLQuantizationType.Q3_K):
        q = k_blocks(t, rng)
        y = dequantize(q, t).astype(np.float32).reshape(-1)
        assert np.isfinite(y).all()
        out += struct.pack("<I", q.size) + q.tobytes() + struct.pack("<I", y.size) + y.tobytes()
    path = pathlib.Path(__file__).with_name("vectors.bin")
    path.write_bytes(bytes(out))
    print(f"wrote {path} ({len(out)} bytes)")


if __name__ == "__main__":
    main()
