"""Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS quantizers in numpy, for writing test
models (the PyPI ``gguf`` package dequantizes these types but cannot quantize
to them). One pass per block, written from the block layouts of ggml-common.h,
independently of torsh's C++ quantizer: per 32 elements (Q6_K: per 16) a
scale (and minimum) covering the range, 6-bit (int8) multiples of an f16
super-block scale, then levels rounded to nearest.
"""

import numpy as np

QK = 256


def _f16(x):
    return x.astype(np.float16)


def _div(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b != 0, a / np.where(b != 0, b, 1), 0.0)


def _pack_scales(sc, m):
    """12 bytes per block from 6-bit sc[8], m[8] (ggml's get_scale_min_k4 inverse)."""
    s = np.zeros((sc.shape[0], 12), np.uint8)
    s[:, 0:4] = sc[:, 0:4] | ((sc[:, 4:8] >> 4) << 6)
    s[:, 4:8] = m[:, 0:4] | ((m[:, 4:8] >> 4) << 6)
    s[:, 8:12] = (sc[:, 4:8] & 0x0F) | ((m[:, 4:8] & 0x0F) << 4)
    return s


def _q45_k(x, top):
    n = x.shape[0]
    x = x.reshape(n, 8, 32).astype(np.float32)
    lo = np.minimum(x.min(axis=-1), 0.0)
    hi = np.maximum(x.max(axis=-1), 0.0)
    scale = (hi - lo) / top
    d = _f16(scale.max(axis=-1) / 63)
    dmin = _f16((-lo).max(axis=-1) / 63)
    df, dminf = d.astype(np.float32)[:, None], dmin.astype(np.float32)[:, None]
    sc = np.clip(np.ceil(_div(scale, df)), 0, 63).astype(np.uint8)
    m = np.clip(np.rint(_div(-lo, dminf)), 0, 63).astype(np.uint8)
    dw = (df * sc.astype(np.float32))[:, :, None]
    mw = (dminf * m.astype(np.float32))[:, :, None]
    q = np.clip(np.rint(_div(x + mw, dw)), 0, top).astype(np.uint8)
    qs = (q[:, 0::2] & 0x0F) | ((q[:, 1::2] & 0x0F) << 4)  # [n, 4 groups, 32]
    parts = [d.view(np.uint8).reshape(n, 2), dmin.view(np.uint8).reshape(n, 2), _pack_scales(sc, m)]
    if top == 31:
        qh = np.zeros((n, 32), np.uint8)
        for j in range(8):
            qh |= ((q[:, j] >> 4) & 1) << j
        parts.append(qh)
    parts.append(qs.reshape(n, 128))
    return np.concatenate(parts, axis=1)


def _q6_k(x):
    n = x.shape[0]
    x = x.reshape(n, 16, 16).astype(np.float32)
    idx = np.abs(x).argmax(axis=-1)
    scale = np.take_along_axis(x, idx[..., None], axis=-1)[..., 0] / -32
    big = np.take_along_axis(scale, np.abs(scale).argmax(axis=-1)[:, None], axis=-1)
    d = _f16(big[:, 0] / -128)
    df = d.astype(np.float32)[:, None]
    r = _div(scale, df)
    sc = np.clip(np.sign(r) * np.ceil(np.abs(r)), -128, 127).astype(np.int8)
    dw = (df * sc.astype(np.float32))[:, :, None]
    q = (np.clip(np.rint(_div(x, dw)), -32, 31) + 32).astype(np.uint8).reshape(n, 8, 32)
    ql = np.zeros((n, 128), np.uint8)
    qh = np.zeros((n, 64), np.uint8)
    for j in range(8):
        h, s = divmod(j, 4)
        lo = 64 * h + 32 * (s % 2)
        ql[:, lo:lo + 32] |= (q[:, j] & 0x0F) << (4 * (s // 2))
        qh[:, 32 * h:32 * h + 32] |= (q[:, j] >> 4) << (2 * s)
    return np.concatenate([ql, qh, sc.view(np.uint8), d.view(np.uint8).reshape(n, 2)], axis=1)


IQ4_LEVELS = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113], np.float32)


def _iq4_nibbles(x, dw):
    """[n, 32] values under scales dw [n, 1] as 16 bytes each: the nearest level's
    index, element e < 16 in the low nibble of byte e, e >= 16 in the high one."""
    v = _div(x, dw)
    q = np.searchsorted((IQ4_LEVELS[1:] + IQ4_LEVELS[:-1]) / 2, v).astype(np.uint8)  # nearest (ascending levels)
    return q[:, :16] | (q[:, 16:] << 4)


def _signed_max(x):
    idx = np.abs(x).argmax(axis=-1)
    return np.take_along_axis(x, idx[..., None], axis=-1)[..., 0]


def _iq4_nl(x):
    x = x.reshape(-1, 32).astype(np.float32)
    d = _f16(_signed_max(x) / -127)
    return np.concatenate([d.view(np.uint8).reshape(-1, 2), _iq4_nibbles(x, d.astype(np.float32)[:, None])], axis=1)


def _iq4_xs(x):
    n = x.shape[0]
    x = x.reshape(n, 8, 32).astype(np.float32)
    scale = _signed_max(x) / -127
    big = np.take_along_axis(scale, np.abs(scale).argmax(axis=-1)[:, None], axis=-1)
    d = _f16(big[:, 0] / -32)
    df = d.astype(np.float32)[:, None]
    r = _div(scale, df)
    ls = (np.clip(np.sign(r) * np.ceil(np.abs(r)), -32, 31) + 32).astype(np.uint16)
    low = (ls & 0x0F).astype(np.uint8)
    scales_l = low[:, 0::2] | (low[:, 1::2] << 4)
    scales_h = np.zeros(n, np.uint16)
    for j in range(8):
        scales_h |= (ls[:, j] >> 4) << (2 * j)
    dw = (df * (ls.astype(np.float32) - 32)).reshape(-1, 1)
    qs = _iq4_nibbles(x.reshape(-1, 32), dw).reshape(n, 128)
    return np.concatenate([d.view(np.uint8).reshape(n, 2), scales_h.view(np.uint8).reshape(n, 2), scales_l, qs],
                          axis=1)


def _pack2(q):
    """[n, 8, 32] 2-bit levels: element l of sub-block j at bits 2 (j % 4) of byte 32 (j // 4) + l."""
    out = np.zeros((q.shape[0], 64), np.uint8)
    for j in range(8):
        out[:, 32 * (j // 4):32 * (j // 4) + 32] |= (q[:, j] & 3) << (2 * (j % 4))
    return out


def _q2_k(x):
    n = x.shape[0]
    x = x.reshape(n, 16, 16).astype(np.float32)
    lo = np.minimum(x.min(axis=-1), 0.0)
    hi = np.maximum(x.max(axis=-1), 0.0)
    step = (hi - lo) / 3
    d = _f16(step.max(axis=-1) / 15)
    dmin = _f16((-lo).max(axis=-1) / 15)
    df, dminf = d.astype(np.float32)[:, None], dmin.astype(np.float32)[:, None]
    sc = np.clip(np.ceil(_div(step, df)), 0, 15).astype(np.uint8)
    m = np.clip(np.rint(_div(-lo, dminf)), 0, 15).astype(np.uint8)
    dl = (df * sc.astype(np.float32))[:, :, None]
    ml = (dminf * m.astype(np.float32))[:, :, None]
    q = np.clip(np.rint(_div(x + ml, dl)), 0, 3).astype(np.uint8).reshape(n, 8, 32)
    return np.concatenate([sc | (m << 4), _pack2(q), d.view(np.uint8).reshape(n, 2), dmin.view(np.uint8).reshape(n, 2)],
                          axis=1)


def _q3_k(x):
    n = x.shape[0]
    x = x.reshape(n, 16, 16).astype(np.float32)
    scale = _signed_max(x) / -4
    big = np.take_along_axis(scale, np.abs(scale).argmax(axis=-1)[:, None], axis=-1)
    d = _f16(big[:, 0] / -32)
    df = d.astype(np.float32)[:, None]
    r = _div(scale, df)
    sc = np.clip(np.sign(r) * np.ceil(np.abs(r)), -32, 31).astype(np.int32)
    dl = (df * sc.astype(np.float32))[:, :, None]
    q = (np.clip(np.rint(_div(x, dl)), -4, 3) + 4).astype(np.uint8).reshape(n, 8, 32)
    hmask = np.zeros((n, 32), np.uint8)
    for j in range(8):
        hmask |= (q[:, j] >> 2) << j
    u = (sc + 32).astype(np.uint8)
    scales = np.zeros((n, 12), np.uint8)
    for i in range(16):
        scales[:, i % 8] |= (u[:, i] & 0x0F) << (4 * (i // 8))
        scales[:, 8 + i % 4] |= (u[:, i] >> 4) << (2 * (i // 4))
    return np.concatenate([hmask, _pack2(q), scales, d.view(np.uint8).reshape(n, 2)], axis=1)


QUANTIZERS = {"q2_k": _q2_k, "q3_k": _q3_k, "q4_k": lambda b: _q45_k(b, 15), "q5_k": lambda b: _q45_k(b, 31), "q6_k": _q6_k,
              "iq4_nl": _iq4_nl, "iq4_xs": _iq4_xs}


def quantize(x, type_name):
    """Rows of x as ggml blocks of `type_name` (rows a multiple of 256 long, of 32
    for iq4_nl), uint8 [rows, bytes]."""
    rows, cols = x.shape
    out = QUANTIZERS[type_name](x.reshape(-1, 32 if type_name == "iq4_nl" else QK))
    return out.reshape(rows, -1)
