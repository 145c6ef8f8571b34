#!/usr/bin/env python3
"""numpy.fft as the peer of `torsh bench`'s FFT cases: one JSON object per line, same case names.

fft_c2c_f32_<n>: numpy.fft.fft of n complex64 values;
rfft_f32_<n>: numpy.fft.rfft of n float32 values (-> n/2+1 complex64);
fft2_c2c_f32_<n>: numpy.fft.fft2 of an n x n complex64 array.
numpy 2 computes in the input's precision (complex64 out), with its bundled
pocketfft, single-threaded. The output array is preallocated and passed as
out= (numpy >= 2.0), so the call is out of place into a reused buffer, as the
FFTW peer's is. Timed as `torsh bench` times a case: random input filled
once, a warm-up call, then each call on its own (time.perf_counter), for at
least --min-seconds and at least 3 calls (at most 10000); the median.
"""
import argparse
import json
import math

import numpy as np

import timing

ap = argparse.ArgumentParser()
ap.add_argument("--min-seconds", type=float, default=0.3)
ap.add_argument("--filter", default="")
args = ap.parse_args()

SIZES_1D = [1 << k for k in (10, 12, 14, 16, 18, 20)]
SIZES_2D = [512, 2048]
NOTE = f"numpy {np.__version__} numpy.fft (pocketfft), 1 thread, out= preallocated"


def median_ms(fn):
    return timing.median_ms(fn, 10000, args.min_seconds)


def report(name, ms, flop):
    print(json.dumps({"name": name, "backend": "numpy", "dtype": "f32", "median_ms": round(ms, 6),
                      "gflops": round(flop / ms / 1e6, 3), "note": NOTE}), flush=True)


def complex64(rng, shape):
    return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(np.complex64)


def check(y, shape):
    assert y.dtype == np.complex64 and y.shape == shape, (y.dtype, y.shape)


rng = np.random.default_rng(7)
for n in SIZES_1D:
    name = f"fft_c2c_f32_{n}"
    if args.filter not in name:
        continue
    x = complex64(rng, n)
    out = np.empty(n, np.complex64)
    check(np.fft.fft(x, out=out), (n,))
    report(name, median_ms(lambda: np.fft.fft(x, out=out)), 5 * n * math.log2(n))
for n in SIZES_1D:
    name = f"rfft_f32_{n}"
    if args.filter not in name:
        continue
    x = rng.uniform(-1, 1, n).astype(np.float32)
    out = np.empty(n // 2 + 1, np.complex64)
    check(np.fft.rfft(x, out=out), (n // 2 + 1,))
    report(name, median_ms(lambda: np.fft.rfft(x, out=out)), 2.5 * n * math.log2(n))
for n in SIZES_2D:
    name = f"fft2_c2c_f32_{n}"
    if args.filter not in name:
        continue
    x = complex64(rng, (n, n))
    out = np.empty((n, n), np.complex64)
    check(np.fft.fft2(x, out=out), (n, n))
    report(name, median_ms(lambda: np.fft.fft2(x, out=out)), 5 * n * n * math.log2(n * n))
