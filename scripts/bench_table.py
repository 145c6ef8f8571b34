#!/usr/bin/env python3
"""Joins peer and torsh benchmark JSON lines by case name into a markdown table of ratios."""
import json
import sys


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


peers, ours = load(sys.argv[1]), load(sys.argv[2])
fma = [p for p in peers if "fma" in p.get("name", "")]
bw = [p for p in peers if "triad" in p.get("name", "") or "copy" in p.get("name", "")]
for p in fma + bw:
    print("peer:", json.dumps(p))
by_name = {}
for p in peers:
    by_name.setdefault(p["name"], []).append(p)
print()
print("| case | torsh | OpenBLAS | PyTorch | torsh / best peer |")
print("|---|---|---|---|---|")
for o in ours:
    units = ("gflops", "gbps", "us_per_call", "us_per_op", "mpairs_per_s")
    unit = next((k for k in units if k in o), None)
    if unit is None:
        continue
    val = o[unit]
    cols, best = [], None
    for backend in ("openblas", "pytorch-cpu"):
        match = [p for p in by_name.get(o["name"], []) if p.get("backend", "").startswith(backend)]
        if match and unit in match[0]:
            pv = match[0][unit]
            cols.append(f"{pv:g} {unit}")
            if unit.startswith("us_"):
                best = pv if best is None else min(best, pv)
            else:
                best = pv if best is None else max(best, pv)
        else:
            cols.append("-")
    if best:
        ratio = best / val if unit.startswith("us_") else val / best
        r = f"{ratio:.2f}x"
    else:
        r = "-"
    print(f"| {o['name']} | {val:g} {unit} | {cols[0]} | {cols[1]} | {r} |")
