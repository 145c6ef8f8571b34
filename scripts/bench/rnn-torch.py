#!/usr/bin/env python3
"""LSTM / GRU forward of torsh's CPU backend against PyTorch's nn.LSTM / nn.GRU (CPU) with the same
weights, seq 128, batch 1 and 32, hidden 256 and 1024 (input size = hidden), in interleaved rounds;
the best median of each. Both on --threads threads. Needs python3 with torch (Debian's python3-torch):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=build/release/python /usr/bin/python3 scripts/bench/rnn-torch.py
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

import torsh_backend as tb

# The peers' timing rule (scripts/peers/timing.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from timing import median_ms  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--threads", type=int, default=2)
args = ap.parse_args()
torch.set_num_threads(args.threads)
SETTLE_S = 0.3


best = {}
cases = [(kind, b, h) for kind in ("lstm", "gru") for h in (256, 1024) for b in (1, 32)]
models = {}
for kind, b, h in cases:
    torch.manual_seed(0)
    m = (torch.nn.LSTM if kind == "lstm" else torch.nn.GRU)(h, h)
    x = torch.randn(128, b, h)
    w = [p.detach().numpy() for p in m.parameters()]
    tw = [tb.from_dlpack(np.ascontiguousarray(a)) for a in w]
    tx = tb.from_dlpack(x.numpy())
    models[(kind, b, h)] = (m, x, tw, tx)
for _ in range(args.rounds):
    for key, (m, x, tw, tx) in models.items():
        kind, b, h = key
        reps = 5 if h == 1024 else 9
        f = tb.lstm if kind == "lstm" else tb.gru
        # Each side starts on idle cores: PyTorch's OpenBLAS threads spin for
        # tens of milliseconds after a call, and on 2 cores they took them
        # from whatever ran next (torsh's batch-1 LSTM measured 7.9 ms right
        # after nn.LSTM and 2.2 ms on its own).
        time.sleep(SETTLE_S)
        with torch.no_grad():
            t_pt = median_ms(lambda: m(x), reps)
        time.sleep(SETTLE_S)
        t_tb = median_ms(lambda: f(tx, tw), reps)
        for who, t in (("pytorch", t_pt), ("torsh", t_tb)):
            best[(key, who)] = min(best.get((key, who), float("inf")), t)
for key in models:
    kind, b, h = key
    t, p = best[(key, "torsh")], best[(key, "pytorch")]
    print(json.dumps({"name": f"{kind}_f32_s128_b{b}_h{h}", "torsh_ms": round(t, 3), "pytorch_ms": round(p, 3),
                      "pytorch_over_torsh": round(p / t, 2), "torch": torch.__version__}))
