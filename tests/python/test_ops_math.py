"""Math ops against NumPy: odd shapes, broadcasting, strided inputs, keywords."""

import numpy as np
import pytest

import torsh_backend as tb
from conftest import f32


def close(t, ref, rtol=1e-5, atol=1e-5):
    got = t.numpy() if isinstance(t, tb.Tensor) else np.asarray(t)
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (7, 13, 5), (64, 64, 64), (33, 1, 17), (3, 100, 2)])
def test_matmul_odd_shapes(rng, m, k, n):
    a, b = f32(rng, m, k), f32(rng, k, n)
    close(tb.matmul(tb.from_dlpack(a), tb.from_dlpack(b)), a @ b, rtol=1e-4, atol=1e-4)


def test_matmul_batched_broadcast_and_vectors(rng):
    a, b = f32(rng, 2, 1, 4, 6), f32(rng, 3, 6, 5)
    close(tb.matmul(a, b), a @ b, rtol=1e-4, atol=1e-4)
    v = f32(rng, 6)
    close(tb.matmul(a[0, 0], v), a[0, 0] @ v, rtol=1e-4, atol=1e-4)
    close(tb.matmul(v, b[0]), v @ b[0], rtol=1e-4, atol=1e-4)


def test_matmul_transposed_and_strided_inputs(rng):
    a, b = f32(rng, 9, 7), f32(rng, 11, 9)
    close(tb.matmul(tb.from_dlpack(a.T), tb.from_dlpack(b.T)), a.T @ b.T, rtol=1e-4, atol=1e-4)
    c = f32(rng, 10, 10)
    close(tb.matmul(c[::2, 1::2], c[1::2, ::2]), c[::2, 1::2] @ c[1::2, ::2], rtol=1e-4, atol=1e-4)
    t = tb.from_dlpack(a)
    close(t.T @ t, a.T @ a, rtol=1e-4, atol=1e-4)


def test_gemm_keywords(rng):
    a, b, c = f32(rng, 5, 4), f32(rng, 4, 6), f32(rng, 5, 6)
    close(tb.gemm(a, b), a @ b, rtol=1e-4, atol=1e-4)
    close(tb.gemm(a, b, alpha=2.0, beta=0.5, c=c), 2 * a @ b + 0.5 * c, rtol=1e-4, atol=1e-4)
    close(tb.gemm(a.T.copy(), b.T.copy(), trans_a=True, trans_b=True), a @ b, rtol=1e-4, atol=1e-4)
    ab, bb = f32(rng, 3, 5, 4), f32(rng, 3, 4, 2)
    close(tb.gemm(ab, bb, alpha=-1.0), -(ab @ bb), rtol=1e-4, atol=1e-4)


BINARY = [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply), ("divide", np.divide),
          ("maximum", np.maximum), ("minimum", np.minimum)]


@pytest.mark.parametrize("name,ref", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("sa,sb", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 5), (5,)), ((1,), (7, 1, 2)), ((), (4,))])
def test_binary_broadcasting(rng, name, ref, sa, sb):
    a, b = f32(rng, *sa), f32(rng, *sb)
    if name == "divide":
        b = np.where(np.abs(b) < 0.1, 1.0, b).astype(np.float32)
    close(getattr(tb, name)(a, b), ref(a, b))


def test_pow_and_aliases(rng):
    a = np.abs(f32(rng, 4, 3)) + 0.5
    b = f32(rng, 4, 3)
    close(tb.power(a, b), a ** b, rtol=1e-4)
    close(tb.pow(a, 2.0), a ** 2, rtol=1e-5)
    close(tb.sub(a, b), a - b)
    close(tb.mul(a, b), a * b)
    close(tb.div(a, 2), a / 2)


def test_operators_with_scalars_and_arrays(rng):
    a, b = f32(rng, 3, 4), f32(rng, 3, 4)
    t = tb.from_dlpack(a)
    close(t + b, a + b)
    close(2.0 - t, 2.0 - a)
    close(t * 3, a * 3)
    close(1.0 / (tb.abs(t) + 1.0), 1.0 / (np.abs(a) + 1.0))
    close(-t, -a)
    close(abs(t), np.abs(a))
    close((tb.abs(t) + 1.0) ** 0.5, (np.abs(a) + 1.0) ** 0.5)
    close(t @ b.T, a @ b.T, rtol=1e-4, atol=1e-4)
    close(b @ t.T, b @ a.T, rtol=1e-4, atol=1e-4)


def test_integer_ops_keep_integers():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = tb.from_dlpack(a) * 2 + 1
    assert t.dtype == tb.int32
    np.testing.assert_array_equal(t.numpy(), a * 2 + 1)
    np.testing.assert_array_equal((tb.from_dlpack(a) * 2.0).numpy(), a * 2)
    with pytest.raises(tb.TorshError) as e:
        tb.from_dlpack(a) * 2.5
    assert e.value.code == "DTypeMismatch"


UNARY = [("negative", np.negative), ("abs", np.abs), ("exp", np.exp), ("tanh", np.tanh),
         ("sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("relu", lambda x: np.maximum(x, 0)),
         ("silu", lambda x: x / (1 + np.exp(-x)))]


@pytest.mark.parametrize("name,ref", UNARY, ids=[u[0] for u in UNARY])
def test_unary(rng, name, ref):
    a = f32(rng, 5, 7)
    close(getattr(tb, name)(a), ref(a), rtol=1e-5, atol=1e-6)


def test_unary_positive_domain(rng):
    a = np.abs(f32(rng, 6, 3)) + 0.1
    close(tb.log(a), np.log(a))
    close(tb.sqrt(a), np.sqrt(a))
    close(tb.rsqrt(a), 1 / np.sqrt(a), rtol=1e-4)


def test_gelu_exact_and_tanh(rng):
    from math import erf, pi, sqrt

    a = f32(rng, 50)
    exact = np.array([x * 0.5 * (1 + erf(x / sqrt(2))) for x in a.astype(np.float64)])
    approx = 0.5 * a * (1 + np.tanh(sqrt(2 / pi) * (a + 0.044715 * a ** 3)))
    close(tb.gelu(a), exact, atol=1e-5)
    close(tb.gelu(a, approximate="tanh"), approx, atol=1e-5)
    with pytest.raises(tb.TorshError):
        tb.gelu(a, approximate="bogus")


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("shape,axis", [((5, 7), -1), ((5, 7), 0), ((2, 3, 9), 1), ((1, 1000), -1)])
def test_softmax_and_log_softmax(rng, shape, axis):
    a = f32(rng, *shape) * 5
    close(tb.softmax(a, axis=axis), np_softmax(a, axis), atol=1e-6)
    close(tb.log_softmax(a, axis=axis), np.log(np_softmax(a.astype(np.float64), axis)), atol=1e-4)


def test_softmax_of_a_transposed_view(rng):
    a = f32(rng, 6, 4)
    close(tb.softmax(tb.from_dlpack(a).T, axis=-1), np_softmax(a.T, -1), atol=1e-6)


@pytest.mark.parametrize("name,ref", [("sum", np.sum), ("mean", np.mean), ("max", np.max), ("min", np.min)])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (1,)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(rng, name, ref, axis, keepdims):
    a = f32(rng, 4, 5, 3)
    close(getattr(tb, name)(a, axis=axis, keepdims=keepdims), ref(a, axis=axis, keepdims=keepdims),
          rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ddof", [0, 1])
def test_var_ddof(rng, ddof):
    a = f32(rng, 6, 9)
    close(tb.var(a, axis=1, ddof=ddof), np.var(a, axis=1, ddof=ddof), rtol=1e-4)
    close(tb.var(a, ddof=ddof), np.var(a, ddof=ddof), rtol=1e-4)


def test_argmax(rng):
    a = f32(rng, 4, 7)
    am = tb.argmax(a, axis=1)
    assert am.dtype == tb.int64
    np.testing.assert_array_equal(am.numpy(), np.argmax(a, axis=1))
    np.testing.assert_array_equal(tb.argmax(a, axis=0, keepdims=True).numpy(), np.argmax(a, axis=0, keepdims=True))
    assert tb.argmax(a).item() == np.argmax(a)


def test_reduction_of_strided_view(rng):
    a = f32(rng, 8, 6)
    close(tb.sum(tb.from_dlpack(a)[::2, ::-1], axis=0), a[::2, ::-1].sum(axis=0), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["f64", "f16", "bf16", "i32", "i8"])
def test_cast_round_trip(rng, dtype):
    a = (f32(rng, 5, 4) * 20).round()
    t = tb.cast(a, dtype)
    assert t.dtype == tb.dtype(dtype)
    np.testing.assert_allclose(t.cast("f32").numpy(), np.clip(a, -128, 127) if dtype == "i8" else a, rtol=1e-2)


def test_ops_run_concurrently_from_threads(rng):
    from concurrent.futures import ThreadPoolExecutor

    a = f32(rng, 96, 96)
    ref = a @ a

    def work(_):
        t = tb.from_dlpack(a)
        return float(np.abs(tb.matmul(t, t).numpy() - ref).max())

    with ThreadPoolExecutor(4) as pool:
        assert max(pool.map(work, range(16))) < 1e-3


def test_integers_follow_numpy():
    u8 = np.array([200, 100], dtype=np.uint8)
    s = tb.sum(u8)
    assert s.dtype == tb.int64 and s.item() == 300  # widened, not wrapped in u8
    assert tb.mean(u8).dtype == tb.float64
    q = tb.divide(np.array([7, -7], dtype="i4"), np.array([2, 2], dtype="i4"))
    assert q.dtype == tb.float64 and q.numpy().tolist() == [3.5, -3.5]  # true division
    with pytest.raises(tb.TorshError):
        tb.power(np.array([2], dtype="i8"), np.array([-1], dtype="i8"))
    assert tb.power(np.array([3], dtype="i8"), np.array([39], dtype="i8")).item() == 3**39  # exact


def test_python_scalars_out_of_the_dtype_range_are_refused():
    x = tb.from_dlpack(np.array([1, 2], dtype=np.uint8))
    for bad in (300, -1, 1e20):
        with pytest.raises(tb.TorshError, match="out of bounds"):
            tb.add(x, bad)
    assert tb.add(x, 255).numpy().tolist() == [0, 1]  # in range: the sum wraps, as in NumPy
    big = tb.from_dlpack(np.array([2**62], dtype=np.int64))
    assert tb.add(big, 2**53 + 1).item() == 2**62 + 2**53 + 1  # exact, no double in between
