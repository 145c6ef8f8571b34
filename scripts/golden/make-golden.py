#!/usr/bin/env python3
"""Generates the golden test data in tests/golden/ from PyTorch (Debian python3-torch).

Each case is one file: b"TGLD", u32 array count, then per array: u32 name length,
name (utf-8), u8 dtype code (0 f32, 1 i64), u32 ndim, i64 dims, raw little-endian
data. The C++ reader is tests/golden.hpp. Run: /usr/bin/python3 scripts/golden/make-golden.py
"""
import math
import os
import struct

import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "golden")
torch.manual_seed(1234)


def write(case, **arrays):
    with open(os.path.join(OUT, case + ".bin"), "wb") as f:
        f.write(b"TGLD" + struct.pack("<I", len(arrays)))
        for name, t in arrays.items():
            t = t.detach().contiguous()
            code = {torch.float32: 0, torch.int64: 1}[t.dtype]
            nb = name.encode()
            f.write(struct.pack("<I", len(nb)) + nb + struct.pack("<BI", code, t.dim()))
            f.write(struct.pack("<%dq" % t.dim(), *t.shape))
            f.write(t.numpy().tobytes())


def r(*shape, lo=-3.0, hi=3.0):
    return torch.rand(*shape) * (hi - lo) + lo


x = r(1023, lo=-6, hi=6)
xp = r(1023, lo=0.01, hi=6)
write("unary", x=x, xp=xp, neg=-x, abs=x.abs(), exp=x.exp(), tanh=x.tanh(), sigmoid=x.sigmoid(), relu=x.relu(),
      gelu=F.gelu(x), gelu_tanh=F.gelu(x, approximate="tanh"), silu=F.silu(x), log=xp.log(), sqrt=xp.sqrt(),
      rsqrt=xp.rsqrt())

a, b = r(7, 1, 33), r(1, 5, 33)
bp = r(1, 5, 33, lo=0.5, hi=2.0)
ap = r(7, 1, 33, lo=0.1, hi=3.0)
write("binary", a=a, b=b, ap=ap, bp=bp, add=a + b, sub=a - b, mul=a * b, div=a / bp, maximum=torch.maximum(a, b),
      minimum=torch.minimum(a, b), pow=ap.pow(bp))

m1, m2 = r(33, 17, lo=-1, hi=1), r(17, 65, lo=-1, hi=1)
b1, b2 = r(3, 7, 13, lo=-1, hi=1), r(13, 5, lo=-1, hi=1)
ga, gb, gc = r(19, 11, lo=-1, hi=1), r(23, 19, lo=-1, hi=1), r(11, 23, lo=-1, hi=1)
h1, h2 = r(16, 64, lo=-1, hi=1), r(64, 8, lo=-1, hi=1)
write("matmul", a=m1, b=m2, out=m1 @ m2, ba=b1, bb=b2, bout=b1 @ b2, ga=ga, gb=gb, gc=gc,
      gemm=2.0 * ga.t() @ gb.t() + 0.5 * gc,  # alpha * a^T b^T + beta * c
      ha=h1, hb=h2, bf16_out=(h1.bfloat16().float() @ h2.bfloat16().float()))

s = r(7, 33, lo=-5, hi=5)
s[0, 3] = 1e4
s[2, 0] = -1e4
write("softmax", x=s, sm0=torch.softmax(s, 0), sm1=torch.softmax(s, 1), lsm0=torch.log_softmax(s, 0),
      lsm1=torch.log_softmax(s, 1))

n = r(7, 33, lo=-4, hi=4)
w, bias = r(33), r(33)
bnx = r(4, 3, 5, 5)
rm, rv = r(3, lo=-0.5, hi=0.5), r(3, lo=0.5, hi=1.5)
rm_t, rv_t = rm.clone(), rv.clone()
bn_train = F.batch_norm(bnx, rm_t, rv_t, None, None, training=True, momentum=0.1, eps=1e-5)
bnw, bnb = r(3), r(3)
write("norm", x=n, w=w, b=bias, layer_norm=F.layer_norm(n, (33,), w, bias, 1e-5),
      rms_norm=n * torch.rsqrt(n.pow(2).mean(-1, keepdim=True) + 1e-6) * w,
      bnx=bnx, rm=rm, rv=rv, bnw=bnw, bnb=bnb, bn_eval=F.batch_norm(bnx, rm, rv, bnw, bnb, training=False, eps=1e-5),
      bn_train=bn_train, rm_after=rm_t, rv_after=rv_t)

red = r(3, 5, 7)
write("reduce", x=red, sum_02=red.sum((0, 2)), mean_1=red.mean(1, keepdim=True), var_2=red.var(2),
      max_all=red.max().reshape(1), min_0=red.amin(0), argmax_1=red.argmax(1))

cx, cw, cb = r(2, 4, 9, 7), r(6, 2, 3, 3), r(6)
px = r(1, 2, 7, 6)
write("conv", x=cx, w=cw, b=cb, out=F.conv2d(cx, cw, cb, stride=(2, 1), padding=1, dilation=(1, 2), groups=2),
      px=px, maxpool=F.max_pool2d(px, 3, 2, 1), avgpool=F.avg_pool2d(px, 3, 2, 1, count_include_pad=False),
      avgpool_incl=F.avg_pool2d(px, 2, 2))

B, Hq, Hkv, S, D = 1, 4, 2, 33, 16
q, k, v = r(B, Hq, S, D, lo=-1, hi=1), r(B, Hkv, S, D, lo=-1, hi=1), r(B, Hkv, S, D, lo=-1, hi=1)
kk, vv = k.repeat_interleave(Hq // Hkv, 1), v.repeat_interleave(Hq // Hkv, 1)
mask = torch.full((S, S), float("-inf")).triu(1)
att = torch.softmax(q @ kk.transpose(-1, -2) / math.sqrt(D) + mask, -1) @ vv
write("attention", q=q, k=k, v=v, out=att)

Bq, Sq, Hh, Dh, rot, base, pos0 = 2, 5, 3, 8, 6, 10000.0, 3
rx = r(Bq, Sq, Hh, Dh)
inv = base ** (-torch.arange(0, rot, 2, dtype=torch.float64) / rot)
ang = (torch.arange(pos0, pos0 + Sq, dtype=torch.float64)[:, None] * inv[None, :]).float()  # [Sq, rot/2]
c, sn = ang.cos()[None, :, None, :], ang.sin()[None, :, None, :]
half = rot // 2
neox = rx.clone()
x1, x2 = rx[..., :half], rx[..., half:rot]
neox[..., :half], neox[..., half:rot] = x1 * c - x2 * sn, x2 * c + x1 * sn
gptj = rx.clone()
e, o = rx[..., 0:rot:2], rx[..., 1:rot:2]
gptj[..., 0:rot:2], gptj[..., 1:rot:2] = e * c - o * sn, o * c + e * sn
write("rope", x=rx, neox=neox, gptj=gptj)

params = {}
for name, opt_cls in (("adam", torch.optim.Adam), ("adamw", torch.optim.AdamW)):
    p = torch.nn.Parameter(r(37))
    p0 = p.detach().clone()
    opt = opt_cls([p], lr=0.01, weight_decay=0.1)
    grads = [r(37) for _ in range(3)]
    for g in grads:
        p.grad = g.clone()
        opt.step()
    params[name + "_p0"] = p0
    for i, g in enumerate(grads):
        params[f"{name}_g{i}"] = g
    params[name + "_p3"] = p.detach().clone()
write("adam", **params)
print("wrote", sorted(os.listdir(OUT)))
