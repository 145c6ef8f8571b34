"""Neural-network ops against NumPy references written out in full."""

import numpy as np
import pytest

import torsh_backend as tb
from conftest import f32


def close(t, ref, rtol=1e-4, atol=1e-5):
    np.testing.assert_allclose(t.numpy(), ref, rtol=rtol, atol=atol)


def test_layer_norm(rng):
    x, w, b = f32(rng, 3, 5, 17), f32(rng, 17), f32(rng, 17)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    close(tb.layer_norm(x), (x - mu) / np.sqrt(var + 1e-5))
    close(tb.layer_norm(x, w, b, eps=1e-3), (x - mu) / np.sqrt(var + 1e-3) * w + b)
    close(tb.layer_norm(x, weight=w, bias=b), (x - mu) / np.sqrt(var + 1e-5) * w + b)


def test_rms_norm(rng):
    x, w = f32(rng, 4, 33), f32(rng, 33)
    ref = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w
    close(tb.rms_norm(x, weight=w), ref)
    close(tb.rms_norm(x, w, eps=0.5), x / np.sqrt((x * x).mean(-1, keepdims=True) + 0.5) * w)


def test_batch_norm_inference_and_training_updates_numpy_stats(rng):
    x = f32(rng, 4, 3, 5, 2)
    rm, rv = f32(rng, 3), np.abs(f32(rng, 3)) + 0.5
    w, b = f32(rng, 3), f32(rng, 3)
    c = (slice(None), None, None)
    close(tb.batch_norm(x, rm, rv, w, b), (x - rm[c]) / np.sqrt(rv[c] + 1e-5) * w[c] + b[c])

    rm0, rv0 = rm.copy(), rv.copy()
    out = tb.batch_norm(x, rm, rv, training=True, momentum=0.25)
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    close(out, (x - mean[c]) / np.sqrt(var[c] + 1e-5))
    n = x.size // 3
    np.testing.assert_allclose(rm, 0.75 * rm0 + 0.25 * mean, rtol=1e-5)
    np.testing.assert_allclose(rv, 0.75 * rv0 + 0.25 * var * n / (n - 1), rtol=1e-5)


def np_attention(q, k, v, causal=False, scale=None, align="top_left", window=0, softcap=0.0):
    hq, hkv, d = q.shape[1], k.shape[1], q.shape[-1]
    k = np.repeat(k, hq // hkv, axis=1)
    v = np.repeat(v, hq // hkv, axis=1)
    s = q @ np.swapaxes(k, -1, -2) * (scale if scale is not None else 1 / np.sqrt(d))
    if softcap:
        s = softcap * np.tanh(s / softcap)
    if causal:
        sq, skv = q.shape[2], k.shape[2]
        shift = skv - sq if align == "bottom_right" else 0
        last = np.arange(sq)[:, None] + shift
        mask = np.arange(skv)[None, :] > last
        if window:
            mask |= np.arange(skv)[None, :] <= last - window
        s = np.where(mask, -np.inf, s)
    mx = s.max(-1, keepdims=True)
    seen = np.isfinite(mx)  # a query that sees no key gets zeros
    p = np.where(seen, np.exp(s - np.where(seen, mx, 0)), 0)
    den = p.sum(-1, keepdims=True)
    return (p / np.where(den > 0, den, 1)) @ v


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("align", ["top_left", "bottom_right"])
@pytest.mark.parametrize("hq,hkv,sq,skv", [(2, 2, 7, 7), (4, 2, 5, 9), (3, 1, 1, 6), (2, 1, 9, 4)])
def test_attention(rng, causal, align, hq, hkv, sq, skv):
    q, k, v = f32(rng, 2, hq, sq, 16), f32(rng, 2, hkv, skv, 16), f32(rng, 2, hkv, skv, 16)
    got = tb.attention(q, k, v, causal=causal, align=align)
    assert not np.isnan(got.numpy()).any()
    close(got, np_attention(q, k, v, causal, align=align), atol=1e-5)
    close(tb.attention(q, k, v, causal=causal, scale=0.3, align=align), np_attention(q, k, v, causal, 0.3, align),
          atol=1e-5)


@pytest.mark.parametrize("window,softcap", [(3, 0.0), (0, 2.0), (5, 1.5)])
@pytest.mark.parametrize("align", ["top_left", "bottom_right"])
def test_attention_sliding_window_and_softcap(rng, window, softcap, align):
    q, k, v = f32(rng, 1, 4, 9, 16) * 4, f32(rng, 1, 2, 12, 16), f32(rng, 1, 2, 12, 16)
    got = tb.attention(q, k, v, causal=True, align=align, window=window, softcap=softcap)
    close(got, np_attention(q, k, v, True, align=align, window=window, softcap=softcap), atol=1e-5)
    with pytest.raises(tb.TorshError, match="window"):
        tb.attention(q, k, v, causal=False, window=2)


def test_attention_causal_default_is_pytorchs_top_left():
    # PyTorch documents is_causal as the mask ones(L, S).tril(diagonal=0) (top-left aligned).
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal(s).astype("f4") for s in ((1, 2, 3, 8), (1, 2, 6, 8), (1, 2, 6, 8)))
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(8)
    s = np.where(np.tril(np.ones((3, 6), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v
    close(tb.attention(q, k, v, causal=True), want, atol=1e-5)
    with pytest.raises(tb.TorshError):
        tb.attention(q, k, v, causal=True, align="diagonal")


def np_rope(x, pos0, base, style):
    b, s, h, d = x.shape
    inv = base ** (-np.arange(0, d, 2) / d)
    ang = (np.arange(s) + pos0)[:, None] * inv[None, :]
    c, sn = np.cos(ang)[None, :, None, :], np.sin(ang)[None, :, None, :]
    out = np.empty_like(x)
    if style == "neox":
        x1, x2 = x[..., : d // 2], x[..., d // 2:]
        out[..., : d // 2], out[..., d // 2:] = x1 * c - x2 * sn, x2 * c + x1 * sn
    else:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        out[..., 0::2], out[..., 1::2] = x1 * c - x2 * sn, x2 * c + x1 * sn
    return out


@pytest.mark.parametrize("style", ["neox", "gptj"])
def test_rope(rng, style):
    x = f32(rng, 2, 6, 3, 8)
    cos, sin = tb.rope_cache(32, 8)
    assert cos.shape == (32, 4)
    close(tb.rope(x, cos, sin, style=style, pos0=3), np_rope(x.astype(np.float64), 3, 10000.0, style), atol=1e-5)


def np_conv2d(x, w, b, stride, pad, dil, groups):
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    p = (h + 2 * pad[0] - dil[0] * (r - 1) - 1) // stride[0] + 1
    q = (wd + 2 * pad[1] - dil[1] * (s - 1) - 1) // stride[1] + 1
    out = np.zeros((n, k, p, q), np.float64)
    kg = k // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(r):
            for j in range(s):
                patch = xs[:, :, i * dil[0]: i * dil[0] + stride[0] * (p - 1) + 1: stride[0],
                           j * dil[1]: j * dil[1] + stride[1] * (q - 1) + 1: stride[1]]
                out[:, g * kg:(g + 1) * kg] += np.einsum("nchw,kc->nkhw", patch, w[g * kg:(g + 1) * kg, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out


@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 0, 1, 1), (2, 1, 1, 1), ((1, 2), (2, 0), 1, 1), (1, 1, 2, 1), (1, 1, 1, 2), (2, 1, 1, 4)])
def test_conv2d(rng, stride, padding, dilation, groups):
    x = f32(rng, 2, 4, 9, 8)
    w = f32(rng, 8, 4 // groups, 3, 3)
    b = f32(rng, 8)
    pair = lambda v: v if isinstance(v, tuple) else (v, v)  # noqa: E731
    ref = np_conv2d(x, w, b, pair(stride), pair(padding), pair(dilation), groups)
    got = tb.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    close(got, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("algorithm", ["auto", "gemm", "winograd"])
@pytest.mark.parametrize("padding,groups", [(0, 1), (1, 1), (2, 2)])
def test_conv2d_algorithms(rng, algorithm, padding, groups):
    x = f32(rng, 2, 32, 13, 10)
    w = f32(rng, 24, 32 // groups, 3, 3)
    b = f32(rng, 24)
    ref = np_conv2d(x, w, b, (1, 1), (padding, padding), (1, 1), groups)
    got = tb.conv2d(x, w, b, padding=padding, groups=groups, algorithm=algorithm)
    close(got, ref, rtol=1e-4, atol=2e-4)


def test_conv2d_algorithm_errors(rng):
    x, w = f32(rng, 1, 4, 6, 6), f32(rng, 4, 4, 3, 3)
    with pytest.raises(tb.TorshError, match="Winograd"):
        tb.conv2d(x, w, stride=2, algorithm="winograd")
    with pytest.raises(tb.TorshError, match="unknown conv2d algorithm"):
        tb.conv2d(x, w, algorithm="fft")


def np_pool(x, k, s, pad, op, count_include_pad=True):
    n, c, h, w = x.shape
    fill = -np.inf if op == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=fill)
    ones = np.pad(np.ones((h, w)), pad)
    p, q = (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1
    out = np.empty((n, c, p, q))
    for i in range(p):
        for j in range(q):
            win = xp[:, :, i * s:i * s + k, j * s:j * s + k]
            if op == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                div = k * k if count_include_pad else ones[i * s:i * s + k, j * s:j * s + k].sum()
                out[:, :, i, j] = win.sum(axis=(2, 3)) / div
    return out


def test_pooling(rng):
    x = f32(rng, 2, 3, 7, 8)
    close(tb.max_pool2d(x, 2), np_pool(x, 2, 2, 0, "max"))
    close(tb.max_pool2d(x, kernel_size=3, stride=2, padding=1), np_pool(x, 3, 2, 1, "max"))
    close(tb.avg_pool2d(x, 2), np_pool(x, 2, 2, 0, "avg"))
    close(tb.avg_pool2d(x, 3, stride=1, padding=1), np_pool(x, 3, 1, 1, "avg"))
    close(tb.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False),
          np_pool(x, 3, 1, 1, "avg", count_include_pad=False))


@pytest.mark.parametrize("adamw", [False, True])
def test_adam_step_updates_numpy_arrays_in_place(rng, adamw):
    p, g = f32(rng, 10), f32(rng, 10)
    m, v = np.zeros(10, np.float32), np.zeros(10, np.float32)
    ref_p = p.astype(np.float64).copy()
    ref_m, ref_v = np.zeros(10), np.zeros(10)
    lr, b1, b2, eps, wd = 0.01, 0.9, 0.999, 1e-8, 0.1
    for step in (1, 2, 3):
        tb.adam_step([p], [g], [m], [v], step=step, lr=lr, weight_decay=wd, adamw=adamw)
        gg = g + (0 if adamw else wd * ref_p)
        ref_m = b1 * ref_m + (1 - b1) * gg
        ref_v = b2 * ref_v + (1 - b2) * gg * gg
        if adamw:
            ref_p *= 1 - lr * wd
        ref_p -= lr / (1 - b1 ** step) * ref_m / (np.sqrt(ref_v) / np.sqrt(1 - b2 ** step) + eps)
    np.testing.assert_allclose(p, ref_p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m, ref_m, rtol=1e-5, atol=1e-7)


def test_random_is_reproducible_and_distributed():
    a = tb.rand((1000,), seed=7)
    assert np.array_equal(a.numpy(), tb.rand((1000,), seed=7).numpy())
    assert not np.array_equal(a.numpy(), tb.rand((1000,), seed=8).numpy())
    assert 0.0 <= a.numpy().min() and a.numpy().max() < 1.0
    u = tb.rand((2, 500), seed=1, low=-2.0, high=3.0).numpy()
    assert -2.0 <= u.min() and u.max() < 3.0
    n = tb.randn((20000,), seed=3, mean=1.0, std=2.0).numpy()
    assert abs(n.mean() - 1.0) < 0.1 and abs(n.std() - 2.0) < 0.1
    bern = tb.bernoulli((10000,), p=0.3, seed=5).numpy()
    assert set(np.unique(bern)) <= {0.0, 1.0} and abs(bern.mean() - 0.3) < 0.03
    assert tb.randn((3, 3), dtype="f64").dtype == tb.float64
    assert tb.rand((4,)).shape == (4,)


def test_matmul_vec_and_weighted_sum_rows(rng):
    w, x = f32(rng, 6, 5), f32(rng, 5)
    close(tb.matmul_vec(w, x), w @ x)
    weights, mat = f32(rng, 6), f32(rng, 6, 4)
    close(tb.weighted_sum_rows(weights, mat), weights @ mat)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_index_select_matches_numpy_take(rng, dtype, axis):
    x = (rng.standard_normal((4, 6, 5)) * 50).astype(dtype)
    ids = rng.integers(0, x.shape[axis], size=7).astype(np.int32)
    ids[2] = ids[0]  # a repeated id
    got = tb.index_select(x, axis, ids).numpy()
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, np.take(x, ids, axis=axis))
    ids64 = rng.integers(0, x.shape[axis], size=(2, 3))
    np.testing.assert_array_equal(tb.index_select(x, axis, ids64).numpy(), np.take(x, ids64.ravel(), axis=axis))
    assert tb.index_select(x, axis, np.zeros(0, np.int64)).numpy().shape == np.take(x, np.zeros(0, np.int64), axis=axis).shape


def test_embedding_dense_table(rng):
    table = f32(rng, 11, 8)
    ids = np.array([[3, 0, 10], [3, 3, 1]], dtype=np.int64)
    np.testing.assert_array_equal(tb.embedding(table, ids).numpy(), table[ids])
    with pytest.raises(tb.TorshError, match="id 11 at position 1"):
        tb.embedding(table, np.array([0, 11], dtype=np.int32))
    with pytest.raises(tb.TorshError, match="i32 or i64"):
        tb.index_select(table, 0, np.array([0.0], dtype=np.float32))
