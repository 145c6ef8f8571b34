#!/usr/bin/env python3
"""SpMV / SpMM of torsh's CPU backend against SciPy (one thread), in interleaved rounds.

Matrices: square, density 1% and 0.1%, rows of power-law length (row r holds a share
proportional to 1 / (r + 1)^0.8 of the nonzeros, shuffled), f32 values, i32 indices.
SpMV is also given as GB/s of the bytes it must move at least (values and indices once,
indptr, x and y once) and as a fraction of the machine's STREAM triad: with --stream,
scripts/peers/stream-bw.cpp is built and run once per round (all cores) and the best
triad of the run is the bound; or a figure given as --stream-gbps. The "cached" matrix
(5 MB, in the last-level cache) measures what the cores can issue; the others are also
given as a fraction of its GB/s. Times are the best of --rounds medians.
    PYTHONPATH=build/release/python python3 scripts/bench/sparse-scipy.py [--rounds 5] [--stream | --stream-gbps G]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import scipy.sparse as sp

import torsh_backend as tb

PEERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers")
# The peers' timing rule (scripts/peers/timing.py).
sys.path.insert(0, PEERS)
from timing import median_ms  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--stream-gbps", type=float, default=0.0)
ap.add_argument("--stream", action="store_true", help="measure STREAM triad in each round")
ap.add_argument("--spmm-n", type=int, default=16)
args = ap.parse_args()

stream_bin = None
if args.stream:
    src = os.path.join(PEERS, "stream-bw.cpp")
    stream_bin = os.path.join(tempfile.mkdtemp(), "stream-bw")
    subprocess.run(["g++", "-O3", "-march=native", "-fopenmp", src, "-o", stream_bin], check=True)


def stream_triad():
    """The STREAM triad GB/s at the largest thread count stream-bw runs."""
    out = subprocess.run([stream_bin], check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    triads = [r for r in rows if r["name"] == "stream_triad"]
    return max(triads, key=lambda r: r["threads"])["gbps"]


def power_law(n, density, rng):
    nnz = int(n * n * density)
    w = 1.0 / np.arange(1, n + 1) ** 0.8
    counts = np.minimum(np.floor(w / w.sum() * nnz).astype(np.int64) + 1, n)
    rng.shuffle(counts)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    indices = np.empty(indptr[-1], np.int32)
    for r in range(n):  # distinct sorted columns per row
        c = counts[r]
        indices[indptr[r]:indptr[r + 1]] = np.sort(rng.choice(n, c, replace=False)) if c < n / 4 else \
            np.sort(rng.permutation(n)[:c])
    data = rng.standard_normal(indptr[-1]).astype(np.float32)
    return sp.csr_matrix((data, indices, indptr), shape=(n, n))


rng = np.random.default_rng(0)
# "cached": 5 MB of matrix, held in the last-level cache, so its SpMV GB/s is
# what the cores can issue, not what memory delivers: the other cases are
# also given as a fraction of it (of_cached).
cases = [("1pct", 20000, 0.01), ("0.1pct", 100000, 0.001), ("cached", 8000, 0.01)]
best = {}
mats = {name: power_law(n, d, rng) for name, n, d in cases}
stream_gbps = args.stream_gbps
for _ in range(args.rounds):
    if stream_bin:
        stream_gbps = max(stream_gbps, stream_triad())
    for name, n, _d in cases:
        m = mats[name]
        a = tb.CsrMatrix.from_scipy(m)
        x = rng.standard_normal(n).astype(np.float32)
        xm = rng.standard_normal((n, args.spmm_n)).astype(np.float32)
        for op, fa, fb in (("spmv", lambda: tb.spmm(a, x), lambda: m @ x),
                           (f"spmm{args.spmm_n}", lambda: tb.spmm(a, xm), lambda: m @ xm)):
            for who, f in (("torsh", fa), ("scipy", fb)):
                k = (f"{op}_f32_{name}", who)
                best[k] = min(best.get(k, float("inf")), median_ms(f, 7))


def spmv_bytes(m):
    """The bytes SpMV moves at least: values and indices once, indptr, x and y once."""
    return m.nnz * 8 + (m.shape[0] + 1) * 4 + 2 * m.shape[0] * 4


cached_gbps = spmv_bytes(mats["cached"]) / best[("spmv_f32_cached", "torsh")] / 1e6
for name, _n, _d in cases:
    m = mats[name]
    for op in ("spmv", f"spmm{args.spmm_n}"):
        key = f"{op}_f32_{name}"
        t, s = best[(key, "torsh")], best[(key, "scipy")]
        row = {"name": key, "nnz": m.nnz, "torsh_ms": round(t, 3), "scipy_ms": round(s, 3), "speedup": round(s / t, 2)}
        if op == "spmv":
            gbps = spmv_bytes(m) / t / 1e6
            row["torsh_gbps"] = round(gbps, 1)
            if stream_gbps:
                row["stream_gbps"] = stream_gbps
                row["of_stream"] = round(gbps / stream_gbps, 2)
            if name != "cached":
                row["of_cached"] = round(gbps / cached_gbps, 2)
        print(json.dumps(row))
