#!/usr/bin/env python3
"""Joins peer and torsh benchmark JSON lines by case name into a markdown table of ratios.

Both files may hold several rounds of the same cases (scripts/bench/suite.sh
interleaves them); each side keeps its best figure per case, so a burst of
load from a neighbour on a shared machine does not decide a ratio.
"""
import json
import sys

UNITS = ("gflops", "gbps", "us_per_call", "us_per_op", "mpairs_per_s")


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def unit_of(row):
    return next((k for k in UNITS if k in row), None)


def better(unit, a, b):
    """The better of two figures in `unit` (times: lower; rates: higher)."""
    if a is None:
        return b
    return min(a, b) if unit.startswith("us_") else max(a, b)


def best_by_case(rows, key):
    """{(name, key(row)): best figure}, and the case order of first appearance."""
    best, order = {}, []
    for r in rows:
        unit = unit_of(r)
        if unit is None:
            continue
        k = (r["name"], key(r))
        if k not in best:
            order.append(k)
        best[k] = (unit, better(unit, best.get(k, (unit, None))[1], r[unit]))
    return best, order


peers, ours = load(sys.argv[1]), load(sys.argv[2])
limits, _ = best_by_case([p for p in peers if "fma" in p["name"] or "stream" in p["name"]], lambda r: r.get("threads"))
for (name, threads), (unit, v) in limits.items():
    print(f"limit: {name} threads={threads} {v:g} {unit}")
peer_best, _ = best_by_case([p for p in peers if "backend" in p], lambda r: r["backend"])
our_best, order = best_by_case(ours, lambda r: "torsh")
print()
print("| case | torsh | OpenBLAS | PyTorch | torsh / best peer |")
print("|---|---|---|---|---|")
for name, _ in order:
    unit, val = our_best[(name, "torsh")]
    cols, best = [], None
    for backend in ("openblas", "pytorch-cpu"):
        hit = peer_best.get((name, backend))
        if hit and hit[0] == unit:
            cols.append(f"{hit[1]:g} {unit}")
            best = better(unit, best, hit[1])
        else:
            cols.append("-")
    if best:
        ratio = best / val if unit.startswith("us_") else val / best
        r = f"{ratio:.2f}x"
    else:
        r = "-"
    print(f"| {name} | {val:g} {unit} | {cols[0]} | {cols[1]} | {r} |")
