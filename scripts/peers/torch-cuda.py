#!/usr/bin/env python3
"""PyTorch on CUDA as the peer of `torsh bench --backend cuda`: one JSON object per line, same case names.

Timed as `torsh bench` times a case: one warm-up call, then each call on its
own between device synchronisations (wall clock), for at least --min-seconds
and at least 3 calls; the median. TF32 stays off, as in the torsh CUDA
backend by default, so f32 products are f32.
"""
import argparse
import json

import torch
import torch.nn.functional as F

import timing

ap = argparse.ArgumentParser()
ap.add_argument("--min-seconds", type=float, default=0.3)
ap.add_argument("--filter", default="")
args = ap.parse_args()

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.manual_seed(0)
dev = torch.device("cuda")


def median_ms(fn, max_reps):
    return timing.median_ms(fn, max_reps, args.min_seconds, torch.cuda.synchronize)


def wanted(name):
    return args.filter in name


def emit(name, dtype, ms, unit, value, note=""):
    rec = {"name": name, "backend": "pytorch-cuda", "dtype": dtype, "median_ms": round(ms, 5), unit: round(value, 3)}
    if note:
        rec["note"] = note
    print(json.dumps(rec), flush=True)


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, device=dev, dtype=dtype)


with torch.no_grad():
    for n in (256, 1024, 2048, 4096):
        name = f"matmul_f32_{n}"
        if wanted(name):
            a, b = randn(n, n), randn(n, n)
            ms = median_ms(lambda: a @ b, 30 if n <= 1024 else 5)
            emit(name, "f32", ms, "gflops", 2 * n**3 / ms / 1e6)
    if wanted("matmul_bf16_2048"):
        n = 2048
        a, b = randn(n, n, dtype=torch.bfloat16), randn(n, n, dtype=torch.bfloat16)
        ms = median_ms(lambda: a @ b, 5)
        emit("matmul_bf16_2048", "bf16", ms, "gflops", 2 * n**3 / ms / 1e6)
    N = 1 << 24
    if wanted("add_f32_16M"):
        x, y, out = randn(N), randn(N), torch.empty(N, device=dev)
        ms = median_ms(lambda: torch.add(x, y, out=out), 20)
        emit("add_f32_16M", "f32", ms, "gbps", 12 * N / ms / 1e6)
    if wanted("gelu_f32_16M"):
        x, out = randn(N), torch.empty(N, device=dev)
        ms = median_ms(lambda: torch.ops.aten.gelu.out(x, out=out), 20)
        emit("gelu_f32_16M", "f32", ms, "gbps", 8 * N / ms / 1e6)
    s, w, bias = randn(4096, 4096), randn(4096), randn(4096)
    if wanted("softmax_f32_4096x4096"):
        ms = median_ms(lambda: torch.softmax(s, -1), 20)
        emit("softmax_f32_4096x4096", "f32", ms, "gbps", 8 * s.numel() / ms / 1e6)
    if wanted("layer_norm_f32_4096x4096"):
        ms = median_ms(lambda: F.layer_norm(s, (4096,), w, bias), 20)
        emit("layer_norm_f32_4096x4096", "f32", ms, "gbps", 8 * s.numel() / ms / 1e6)
    if wanted("rms_norm_f32_4096x4096"):
        ms = median_ms(lambda: F.rms_norm(s, (4096,), w, 1e-6), 20)
        emit("rms_norm_f32_4096x4096", "f32", ms, "gbps", 8 * s.numel() / ms / 1e6)
    for nb, c, h, k in ((1, 64, 56, 64), (8, 256, 14, 256)):
        name = f"conv2d_f32_n{nb}_c{c}_h{h}_k{k}_r3"
        if wanted(name):
            inp, wt = randn(nb, c, h, h), randn(k, c, 3, 3)
            ms = median_ms(lambda: F.conv2d(inp, wt, padding=1), 20)
            emit(name, "f32", ms, "gflops", 2 * nb * k * c * 9 * h * h / ms / 1e6)
    if wanted("attention_f32_causal_s2048_h8_d64"):
        S, H, D = 2048, 8, 64
        q, k_, v = randn(1, H, S, D), randn(1, H, S, D), randn(1, H, S, D)
        ms = median_ms(lambda: F.scaled_dot_product_attention(q, k_, v, is_causal=True), 5)
        emit("attention_f32_causal_s2048_h8_d64", "f32", ms, "gflops", 4 * H * S * S * D / 2 / ms / 1e6)

if wanted("adam_f32_16M"):
    p = randn(N).requires_grad_()
    p.grad = randn(N)
    opt = torch.optim.Adam([p], lr=1e-3, fused=True)
    ms = median_ms(opt.step, 10)
    emit("adam_f32_16M", "f32", ms, "gbps", 16 * N / ms / 1e6, "fused=True")

# int8 GEMM: torch._int_mm takes s8 x s8 without zero points, torsh's i8i8
# case; the u8i8 case (u8 x s8 with zero points) is compared with it too, as
# the same product plus torsh's zero-point work (u8i8_prepared: with the
# weight prepared once, ops::IntegerWeight). b is given both row-major
# (torsh's operand) and column-major (a weight stored transposed once, the
# layout the tensor cores take); the faster one is the peer.
for n in (1024, 4096):
    names = [x for x in (f"matmul_integer_i8i8_{n}", f"matmul_integer_u8i8_{n}", f"matmul_integer_u8i8_prepared_{n}")
             if wanted(x)]
    if names and hasattr(torch, "_int_mm"):
        a8 = torch.randint(-128, 128, (n, n), device=dev, dtype=torch.int8)
        b8 = torch.randint(-128, 128, (n, n), device=dev, dtype=torch.int8)
        b8_cols = b8.t().contiguous().t()
        reps = 30 if n <= 1024 else 5
        rows_ms = median_ms(lambda: torch._int_mm(a8, b8), reps)
        cols_ms = median_ms(lambda: torch._int_mm(a8, b8_cols), reps)
        ms, layout = min((rows_ms, "row-major"), (cols_ms, "column-major"))
        for name in names:
            emit(name, "i32", ms, "gops", 2 * n**3 / ms / 1e6,
                 f"torch._int_mm s8 x s8, b {layout} (row-major {rows_ms:.4f} ms, column-major {cols_ms:.4f} ms)")

if wanted("add_f32_4"):
    a4, b4 = randn(4), randn(4)
    reps = 10000

    def batch():
        for _ in range(reps):
            torch.add(a4, b4)

    ms = median_ms(batch, 21) / reps
    emit("add_f32_4", "f32", ms, "us_per_call", ms * 1e3, "from Python")
