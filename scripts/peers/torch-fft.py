#!/usr/bin/env python3
"""torch.fft as the peer of `torsh bench`'s FFT cases on a CUDA device (or the CPU):
one JSON object per line, same case names and GFLOP/s convention as tools/torsh/bench_fft.cpp.
Timed as torsh bench times a case: a warm-up, then each call on its own followed by a
synchronize, for at least --min-seconds and at least 3 calls; the median.
    python3 scripts/peers/torch-fft.py [--device cuda] [--min-seconds 0.2]
"""
import argparse
import json
import math

import torch

import timing

ap = argparse.ArgumentParser()
ap.add_argument("--device", default="cuda")
ap.add_argument("--min-seconds", type=float, default=0.2)
ap.add_argument("--filter", default="")
args = ap.parse_args()
dev = torch.device(args.device)
sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)


def median_ms(fn, max_reps=2000):
    return timing.median_ms(fn, max_reps, args.min_seconds, sync)


def emit(name, ms, flops):
    if args.filter in name:
        print(json.dumps({"name": name, "backend": f"torch-{dev.type}", "dtype": "f32", "median_ms": ms,
                          "gflops": flops / ms / 1e6, "note": f"torch {torch.__version__}"}), flush=True)


for lg in range(10, 21, 2):
    n = 1 << lg
    x = torch.randn(n, dtype=torch.complex64, device=dev)
    emit(f"fft_c2c_f32_{n}", median_ms(lambda: torch.fft.fft(x)), 5.0 * n * lg)
    r = torch.randn(n, dtype=torch.float32, device=dev)
    emit(f"rfft_f32_{n}", median_ms(lambda: torch.fft.rfft(r)), 2.5 * n * lg)
for n in (512, 2048):
    x = torch.randn(n, n, dtype=torch.complex64, device=dev)
    emit(f"fft2_c2c_f32_{n}", median_ms(lambda: torch.fft.fft2(x), 200), 5.0 * n * n * math.log2(n * n))
