"""tb.fft against numpy.fft: the 1-D transforms (hfft and ihfft too) over many lengths (powers of two,
small and large primes, Bluestein's lengths), n's padding and truncation, other
axes, the three norms, the N-D and 2-D forms, NumPy's dtype rules, the Tensor
path in the (re, im) layout, the errors, and the index helpers NumPy supplies."""

import numpy as np
import pytest

import torsh_backend as tb

LENGTHS = [1, 2, 3, 5, 7, 8, 12, 17, 64, 97, 100, 1000, 1024, 1031, 4096]
REAL = {"f32": np.float32, "f64": np.float64}
COMPLEX = {"f32": np.complex64, "f64": np.complex128}
NORMS = [None, "backward", "ortho", "forward"]
ONE_AXIS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
REAL_IN = ("rfft", "ihfft")  # the 1-D transforms of real input
REAL_OUT = ("irfft", "hfft")  # and those with a real result


def tol(prec):
    return 1e-5 if prec == "f32" else 1e-12


def close(got, want, prec):
    """got matches want to within tol * max |want| (the error of an FFT spreads over all outputs)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = float(np.abs(want).max()) if want.size else 1.0
    err = float(np.abs(got.astype(want.dtype) - want).max()) if want.size else 0.0
    assert err <= tol(prec) * max(scale, 1e-30), f"max error {err:.3g} against max |want| {scale:.3g}"


def crandn(rng, shape, prec):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(COMPLEX[prec])


def rrandn(rng, shape, prec):
    return rng.standard_normal(shape).astype(REAL[prec])


def ref(fn, x, *args, **kw):
    """NumPy's result computed in double precision: the reference for both precisions.
    An entry -1 in s (NumPy 2's "the input's length") is resolved here, so NumPy 1 can
    be the reference too."""
    x = np.asarray(x)
    x = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    if kw.get("s") is not None and -1 in kw["s"]:
        axes = kw.get("axes") or range(-len(kw["s"]), 0)
        kw = dict(kw, s=[x.shape[a] if v == -1 else v for v, a in zip(kw["s"], axes)])
    return getattr(np.fft, fn)(x, *args, **kw)


def numpy2_dtype(fn, dtype):
    """The result dtype NumPy 2 gives (written out: NumPy 1 computes everything in
    float64): single precision in, single out; half precision is computed in single,
    and a 1-D irfft hands it back as half."""
    dtype = np.dtype(dtype)
    single = dtype in (np.float16, np.float32, np.complex64)
    if fn.startswith("irfft") or fn == "hfft":
        if dtype == np.float16 and fn in ("irfft", "hfft"):
            return np.dtype(np.float16)
        return np.dtype(np.float32 if single else np.float64)
    return np.dtype(np.complex64 if single else np.complex128)


def one_axis_input(rng, fn, length, prec, shape_rest=()):
    if fn in REAL_IN:
        return rrandn(rng, (length, *shape_rest), prec)
    if fn in REAL_OUT:  # the half spectrum (or half signal, for hfft) of `length` real points
        return crandn(rng, (length // 2 + 1, *shape_rest), prec)
    return crandn(rng, (length, *shape_rest), prec)


# -- 1-D -------------------------------------------------------------------------

@pytest.mark.parametrize("prec", ["f32", "f64"])
@pytest.mark.parametrize("fn", ONE_AXIS)
@pytest.mark.parametrize("length", LENGTHS)
def test_one_axis_matches_numpy(rng, fn, length, prec):
    x = one_axis_input(rng, fn, length, prec)
    n = length if fn in REAL_OUT else None
    got = getattr(tb.fft, fn)(x, n)
    want = ref(fn, x, n)
    assert isinstance(got, np.ndarray) and got.dtype == numpy2_dtype(fn, x.dtype)
    close(got, want, prec)


@pytest.mark.parametrize("prec", ["f32", "f64"])
@pytest.mark.parametrize("length", [2, 5, 8, 17, 100])
def test_irfft_default_length(rng, length, prec):
    x = crandn(rng, length, prec)
    close(tb.fft.irfft(x), ref("irfft", x), prec)
    assert tb.fft.irfft(x).shape == (2 * (length - 1),)
    close(tb.fft.hfft(x), ref("hfft", x), prec)
    assert tb.fft.hfft(x).shape == (2 * (length - 1),)


@pytest.mark.parametrize("prec", ["f32", "f64"])
@pytest.mark.parametrize("fn", ONE_AXIS)
@pytest.mark.parametrize("length,n", [(8, 5), (8, 13), (17, 1), (17, 32), (100, 64), (64, 100), (1000, 1031),
                                      (1031, 1000), (12, 4096)])
def test_n_pads_and_truncates(rng, fn, length, n, prec):
    x = one_axis_input(rng, "fft" if fn in REAL_OUT else fn, length, prec)
    got = getattr(tb.fft, fn)(x, n=n)
    want = ref(fn, x, n=n)
    assert got.shape == want.shape
    close(got, want, prec)


@pytest.mark.parametrize("prec", ["f32", "f64"])
@pytest.mark.parametrize("fn", ONE_AXIS)
@pytest.mark.parametrize("length", [1, 7, 12, 97, 1024])
@pytest.mark.parametrize("axis", [0, -2])
def test_axis_0_of_2d(rng, fn, length, axis, prec):
    x = one_axis_input(rng, fn, length, prec, (3,))
    n = length if fn in REAL_OUT else None
    close(getattr(tb.fft, fn)(x, n, axis=axis), ref(fn, x, n, axis=axis), prec)
    # with padding along the same axis
    close(getattr(tb.fft, fn)(x, length + 3, axis=axis), ref(fn, x, length + 3, axis=axis), prec)


@pytest.mark.parametrize("prec", ["f32", "f64"])
@pytest.mark.parametrize("fn", ONE_AXIS)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("length", [1, 12, 97, 1000])
def test_norms(rng, fn, norm, length, prec):
    x = one_axis_input(rng, fn, length, prec)
    n = length if fn in REAL_OUT else None
    close(getattr(tb.fft, fn)(x, n, norm=norm), ref(fn, x, n, norm=norm), prec)


@pytest.mark.parametrize("norm", NORMS)
def test_round_trips(rng, norm):
    x = crandn(rng, (4, 1031), "f64")
    close(tb.fft.ifft(tb.fft.fft(x, norm=norm), norm=norm), x, "f64")
    r = rrandn(rng, (4, 97), "f64")
    close(tb.fft.irfft(tb.fft.rfft(r, norm=norm), 97, norm=norm), r, "f64")
    close(tb.fft.hfft(tb.fft.ihfft(r, norm=norm), 97, norm=norm), r, "f64")


def test_strided_and_read_only_inputs_are_left_alone(rng):
    x = crandn(rng, (40, 30), "f64")
    before = x.copy()
    close(tb.fft.fft(x[::2, 1::3]), ref("fft", x[::2, 1::3]), "f64")
    close(tb.fft.fft(x.T, axis=0), ref("fft", x.T, axis=0), "f64")
    r = rrandn(rng, (40, 30), "f32")
    r.flags.writeable = False
    close(tb.fft.rfft(r[:, ::2]), ref("rfft", r[:, ::2]), "f32")
    np.testing.assert_array_equal(x, before)


def test_empty_batches_and_empty_axes(rng):
    assert tb.fft.fft(np.zeros((0, 8), np.complex64)).shape == (0, 8)
    assert tb.fft.rfft(np.zeros((3, 0, 8))).shape == (3, 0, 5)
    np.testing.assert_array_equal(tb.fft.fft(np.zeros(0), n=4), np.zeros(4, np.complex128))


# -- NumPy's dtype rules -------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128,
                                   np.int8, np.int32, np.int64, np.uint16, np.bool_])
@pytest.mark.parametrize("fn", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn", "irfftn",
                                "fft2", "ifft2", "rfft2", "irfft2"])
def test_result_dtypes_follow_numpy(rng, fn, dtype):
    if (fn.startswith("rfft") or fn == "ihfft") and np.dtype(dtype).kind == "c":
        pytest.skip("complex input to rfft* and ihfft is an error (test_errors)")
    x = (rng.standard_normal((6, 8)) * 4).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * (rng.standard_normal((6, 8)) * 4).astype(dtype)
    got, want = getattr(tb.fft, fn)(x), ref(fn, x)
    assert got.dtype == numpy2_dtype(fn, dtype) and got.shape == want.shape
    prec = "f32" if got.dtype in (np.complex64, np.float32) else "f64"
    if got.dtype == np.float16:
        np.testing.assert_allclose(got.astype(np.float64), want, atol=2e-3 * float(np.abs(want).max()))
    else:
        close(got, want, prec)


def test_real_input_to_complex_transforms_has_zero_imaginary_part(rng):
    r = rrandn(rng, (5, 17), "f64")
    for fn in ["fft", "ifft", "fftn", "ifftn", "fft2", "ifft2"]:
        close(getattr(tb.fft, fn)(r), getattr(np.fft, fn)(r), "f64")
    close(tb.fft.irfft(r), np.fft.irfft(r), "f64")
    close(tb.fft.fft([1.0, 2.0, 3.0]), np.fft.fft([1.0, 2.0, 3.0]), "f64")  # a list: NumPy's float64


def test_complex_input_is_viewed_not_copied():
    # the (re, im) view NumPy passes down shares memory with a contiguous complex array
    from torsh_backend.fft import _complex_in

    a = np.arange(6, dtype=np.complex64).reshape(2, 3)
    v, f = _complex_in(a, "fft")
    assert f is np.float32 and v.shape == (2, 3, 2) and np.shares_memory(v, a)


# -- N-D and 2-D -----------------------------------------------------------------

ND_CASES = [
    dict(),
    dict(axes=(0, 2)),
    dict(axes=(-1,)),
    dict(axes=(2, 0, 1)),
    dict(s=(4, 10), axes=(1, 2)),
    dict(s=(7, 3, 9), axes=(2, 0, 1)),
    dict(s=(5, -1), axes=(0, 2)),
    dict(s=(3, 12)),  # axes default to the last len(s) (NumPy's deprecated reading)
    dict(norm="ortho", axes=(0, 1)),
    dict(norm="forward", s=(8, 8), axes=(-3, -1)),
]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("prec", ["f32", "f64"])
@pytest.mark.parametrize("fn", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("case", range(len(ND_CASES)))
def test_nd_matches_numpy(rng, fn, case, prec):
    kw = ND_CASES[case]
    shape = (6, 5, 8)
    x = rrandn(rng, shape, prec) if fn == "rfftn" else crandn(rng, shape, prec)
    got = getattr(tb.fft, fn)(x, **kw)
    want = ref(fn, x, **kw)
    assert got.shape == want.shape
    close(got, want, prec)


@pytest.mark.parametrize("prec", ["f32", "f64"])
@pytest.mark.parametrize("norm", NORMS)
def test_2d_of_64x48(rng, norm, prec):
    c = crandn(rng, (64, 48), prec)
    r = rrandn(rng, (64, 48), prec)
    close(tb.fft.fft2(c, norm=norm), ref("fft2", c, norm=norm), prec)
    close(tb.fft.ifft2(c, norm=norm), ref("ifft2", c, norm=norm), prec)
    close(tb.fft.rfft2(r, norm=norm), ref("rfft2", r, norm=norm), prec)
    spec = np.fft.rfft2(r.astype(np.float64))
    close(tb.fft.irfft2(spec.astype(c.dtype), s=(64, 48), norm=norm), ref("irfft2", spec, s=(64, 48), norm=norm), prec)


def test_2d_axes_and_s(rng):
    c = crandn(rng, (3, 10, 12), "f64")
    close(tb.fft.fft2(c, axes=(0, 2)), ref("fft2", c, axes=(0, 2)), "f64")
    close(tb.fft.fft2(c, s=(16, 5)), ref("fft2", c, s=(16, 5)), "f64")
    close(tb.fft.fft2(c, axes=None), ref("fftn", c), "f64")
    close(tb.fft.irfft2(c, s=(9, 20)), ref("irfft2", c, s=(9, 20)), "f64")


# -- Tensors in the (re, im) layout --------------------------------------------

@pytest.mark.parametrize("prec", ["f32", "f64"])
@pytest.mark.parametrize("length", [1, 8, 97, 1000])
def test_tensor_input_gives_tensor_output(rng, length, prec):
    c = crandn(rng, (3, length), prec)
    pairs = np.ascontiguousarray(c).view(REAL[prec]).reshape(3, length, 2)
    t = tb.asarray(pairs)
    got = tb.fft.fft(t, axis=-1)
    assert isinstance(got, tb.Tensor) and got.shape == (3, length, 2) and got.dtype == tb.dtype(REAL[prec])
    close(got.numpy()[..., 0] + 1j * got.numpy()[..., 1], ref("fft", c), prec)
    back = tb.fft.ifft(got, norm="backward")
    close(back.numpy(), pairs, prec)

    r = rrandn(rng, (length, 2), prec)  # real: the trailing 2 is a plain axis
    got = tb.fft.rfft(tb.asarray(r), axis=0)
    assert isinstance(got, tb.Tensor) and got.shape == (length // 2 + 1, 2, 2)
    close(got.numpy()[..., 0] + 1j * got.numpy()[..., 1], ref("rfft", r, axis=0), prec)
    real = tb.fft.irfft(got, n=length, axis=0)
    assert isinstance(real, tb.Tensor) and real.shape == (length, 2)
    close(real.numpy(), r, prec)


@pytest.mark.parametrize("prec", ["f32", "f64"])
def test_tensor_hermitian_pair(rng, prec):
    c = crandn(rng, (3, 9), prec)
    t = tb.asarray(np.ascontiguousarray(c).view(REAL[prec]).reshape(3, 9, 2))
    h = tb.fft.hfft(t, n=17, norm="ortho")
    assert isinstance(h, tb.Tensor) and h.shape == (3, 17) and h.dtype == tb.dtype(REAL[prec])
    close(h.numpy(), ref("hfft", c, 17, norm="ortho"), prec)
    r = rrandn(rng, (17, 3), prec)
    out = tb.asarray(np.zeros((9, 3, 2), REAL[prec]))
    assert tb.fft.ihfft(tb.asarray(r), axis=0, out=out) is out
    got = out.numpy()
    close(got[..., 0] + 1j * got[..., 1], ref("ihfft", r, axis=0), prec)


def test_tensor_nd_with_placeholder_sizes(rng):
    c = crandn(rng, (6, 5), "f64")
    t = tb.asarray(np.ascontiguousarray(c).view(np.float64).reshape(6, 5, 2))
    got = tb.fft.fftn(t, s=(-1, 8), axes=(0, 1)).numpy()
    close(got[..., 0] + 1j * got[..., 1], ref("fftn", c, s=(6, 8), axes=(0, 1)), "f64")
    got = tb.fft.irfftn(t, axes=(0, 1)).numpy()
    close(got, ref("irfftn", c, axes=(0, 1)), "f64")


def test_core_submodule_takes_the_pair_layout(rng):
    c = crandn(rng, 12, "f32")
    got = tb._core.fft.fft(np.ascontiguousarray(c).view(np.float32).reshape(12, 2), norm="ortho")
    close(got.numpy().view(np.complex64)[..., 0], ref("fft", c, norm="ortho"), "f32")


# -- Errors --------------------------------------------------------------------

def raises(code, fn, *args, **kw):
    with pytest.raises(tb.TorshError) as e:
        fn(*args, **kw)
    assert e.value.code == code, str(e.value)
    return e.value


def test_errors():
    c = np.ones(8, np.complex64)
    for fn in [tb.fft.fft, tb.fft.ifft, tb.fft.rfft, tb.fft.irfft]:
        raises("InvalidArgument", fn, c.real if fn is tb.fft.rfft else c, n=0)
        raises("InvalidArgument", fn, c.real if fn is tb.fft.rfft else c, n=-3)
    raises("InvalidArgument", tb.fft.irfft, np.ones(1, np.complex64))  # default n = 0
    e = raises("InvalidArgument", tb.fft.fft, c, norm="unitary")
    assert "ortho" in " ".join(e.suggestions)
    raises("InvalidArgument", tb.fft.fftn, np.ones((4, 4), np.complex64), axes=(0, 0))
    raises("InvalidArgument", tb.fft.rfftn, np.ones((4, 4)), axes=(1, -1))
    raises("InvalidArgument", tb.fft.fftn, np.ones((4, 4)), s=(4, 4), axes=(0,))
    raises("InvalidArgument", tb.fft.fftn, np.ones((4, 4)), axes=())
    raises("OutOfRange", tb.fft.fft, c, axis=1)
    raises("OutOfRange", tb.fft.fftn, c, s=(-1,), axes=(3,))
    raises("DTypeMismatch", tb.fft.rfft, c)
    e = raises("DTypeMismatch", tb.fft.ihfft, c)
    assert e.op == "ihfft" and "ifft" in " ".join(e.suggestions)
    raises("InvalidArgument", tb.fft.hfft, np.ones(1, np.complex64))  # default n = 0
    raises("DTypeMismatch", tb.fft.rfft2, np.ones((2, 2), np.complex128))
    raises("ShapeMismatch", tb.fft.fft, np.complex64(1))
    raises("DTypeMismatch", tb.fft.fft, np.array(["a", "b"]))
    if np.dtype(np.longdouble).itemsize > 8:
        raises("DTypeMismatch", tb.fft.fft, np.ones(4, np.longdouble))
    raises("InvalidArgument", tb.fft.fft, c, norm="")  # as NumPy
    e = raises("InvalidArgument", tb.fft.rfft2, np.ones((2, 2)), norm="bogus")
    assert e.op == "rfft2"
    # A string is a dtype error, not "a scalar"; errors raised in Python read like the C++ ones.
    e = raises("DTypeMismatch", tb.fft.fft, "abc")
    assert str(e).startswith("DTypeMismatch in fft: ")
    e = raises("ShapeMismatch", tb.fft.rfft, np.float64(2.0))
    assert str(e).startswith("ShapeMismatch in rfft: ") and "shapes: []" in str(e)
    # Every length of s is checked before the first pass, against x's own shape.
    e = raises("InvalidArgument", tb.fft.rfftn, np.ones((4, 6)), s=(0, 4))
    assert "[4, 6]" in " ".join(e.shapes)


def test_tensor_errors():
    raises("DTypeMismatch", tb.fft.fft, tb.asarray(np.ones((4, 2), np.int32)))
    raises("DTypeMismatch", tb.fft.rfft, tb.asarray(np.ones(4, np.int64)))
    e = raises("DTypeMismatch", tb._core.fft.fft, np.ones((4, 2), np.int32))
    assert e.op == "fft"
    raises("ShapeMismatch", tb.fft.fft, tb.asarray(np.ones((4, 3), np.float32)))  # no (re, im) axis
    e = raises("ShapeMismatch", tb.fft.hfft, tb.asarray(np.ones((4, 3), np.float32)))
    assert e.op == "hfft"
    raises("InvalidArgument", tb.fft.fft2, tb.asarray(np.ones((4, 4, 2), np.float32)), axes=(1, 1))


# -- out= (1-D forms) ------------------------------------------------------------

@pytest.mark.parametrize("prec", ["f32", "f64"])
@pytest.mark.parametrize("fn", ONE_AXIS)
@pytest.mark.parametrize("length", [1, 12, 97, 1024])
def test_out_into_numpy_arrays(rng, fn, length, prec):
    x = one_axis_input(rng, fn, length, prec, (3,))
    kw = {"n": length, "axis": 0} if fn in REAL_OUT else {"axis": 0}
    want = getattr(tb.fft, fn)(x, **kw)
    # The computing precision, C-contiguous: written in place.
    out = np.full_like(want, 7)
    got = getattr(tb.fft, fn)(x, out=out, **kw)
    assert got is out
    np.testing.assert_array_equal(out, want)
    # Another precision and a strided view: filled from the result (same_kind casting).
    wide = np.zeros((2 * want.shape[0], 3), np.complex128 if want.dtype.kind == "c" else np.float64)
    view = wide[::2]
    assert getattr(tb.fft, fn)(x, out=view, **kw) is view
    close(view, ref(fn, x, **kw), prec)
    assert not wide[1::2].any()


@pytest.mark.parametrize("fn", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn", "irfftn",
                                "fft2", "ifft2", "rfft2", "irfft2"])
def test_out_of_the_computing_precision_is_written_without_a_copy(rng, fn, monkeypatch):
    x = rrandn(rng, (4, 6), "f32") if fn.startswith("rfft") or fn == "ihfft" else crandn(rng, (4, 6), "f32")
    want = getattr(tb.fft, fn)(x)
    out = np.zeros_like(want)

    def no_copy(*a, **k):
        raise AssertionError("out was filled from a temporary")
    monkeypatch.setattr(np, "copyto", no_copy)
    assert getattr(tb.fft, fn)(x, out=out) is out
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("prec", ["f32", "f64"])
@pytest.mark.parametrize("fn", ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "irfft2"])
def test_nd_out(rng, fn, prec):
    x = rrandn(rng, (5, 6, 4), prec) if fn.startswith("rfft") else crandn(rng, (5, 6, 4), prec)
    kw = {"axes": (0, 2)} if fn.endswith("n") else {}
    want = getattr(tb.fft, fn)(x, **kw)
    out = np.empty_like(want)
    assert getattr(tb.fft, fn)(x, out=out, **kw) is out
    np.testing.assert_array_equal(out, want)
    wide = np.zeros((2 * want.shape[0],) + want.shape[1:], np.complex128 if want.dtype.kind == "c" else np.float64)
    assert getattr(tb.fft, fn)(x, out=wide[::2], **kw) is not None
    close(wide[::2], ref(fn, x, **kw), prec)
    assert not wide[1::2].any()
    # Tensors: the (re, im) layout in and out.
    if not fn.startswith("rfft"):
        t = tb.asarray(np.ascontiguousarray(x).view(REAL[prec]).reshape(x.shape + (2,)))
        tw = getattr(tb.fft, fn)(t, **kw)
        o = tb.asarray(np.zeros(tuple(tw.shape), REAL[prec]))
        assert getattr(tb.fft, fn)(t, out=o, **kw) is o
        np.testing.assert_array_equal(o.numpy(), tw.numpy())


@pytest.mark.parametrize("prec", ["f32", "f64"])
def test_out_in_place_and_into_tensors(rng, prec):
    c = crandn(rng, 64, prec)
    want = ref("fft", c)
    d = c.copy()
    assert tb.fft.fft(d, out=d) is d  # the input itself
    close(d, want, prec)
    pairs = np.ascontiguousarray(c).view(REAL[prec]).reshape(64, 2)
    t, o = tb.asarray(pairs), tb.asarray(np.zeros((64, 2), REAL[prec]))
    assert tb.fft.fft(t, out=o) is o
    got = o.numpy()
    close(got[..., 0] + 1j * got[..., 1], want, prec)
    z = np.zeros(64, COMPLEX[prec])  # a Tensor's transform into a complex array: its (re, im) view
    assert tb.fft.fft(t, out=z) is z
    close(z, want, prec)


def test_out_errors_leave_out_alone():
    c = np.ones(8, np.complex64)
    out = np.zeros(9, np.complex64)
    e = raises("ShapeMismatch", tb.fft.fft, c, out=out)
    assert "[9]" in e.message and "[8]" in e.message
    assert not out.any()
    raises("InvalidArgument", tb.fft.fft, c, out=[0] * 8)
    with pytest.raises(TypeError):  # NumPy's same_kind rule: complex into float
        tb.fft.fft(c, out=np.zeros(8, np.float32))
    t = tb.asarray(np.ones((8, 2), np.float32))
    raises("ShapeMismatch", tb.fft.fft, t, out=tb.asarray(np.zeros((9, 2), np.float32)))
    raises("DTypeMismatch", tb.fft.fft, t, out=tb.asarray(np.zeros((8, 2), np.float64)))
    ro = np.zeros((8, 2), np.float32)
    ro.flags.writeable = False
    raises("InvalidArgument", tb.fft.fft, t, out=ro)
    e = raises("ShapeMismatch", tb.fft.fft2, np.ones((4, 4), np.complex64), out=np.zeros((4, 5), np.complex64))
    assert "[4, 5]" in e.message and "[4, 4]" in e.message


# -- Index helpers: NumPy's --------------------------------------------------

def test_index_helpers_are_numpys(rng):
    for n in [1, 8, 9]:
        np.testing.assert_array_equal(tb.fft.fftfreq(n), np.fft.fftfreq(n))
        np.testing.assert_array_equal(tb.fft.fftfreq(n, d=0.1), np.fft.fftfreq(n, d=0.1))
        np.testing.assert_array_equal(tb.fft.rfftfreq(n, 2.0), np.fft.rfftfreq(n, 2.0))
    x = rng.standard_normal((5, 6))
    np.testing.assert_array_equal(tb.fft.fftshift(x), np.fft.fftshift(x))
    np.testing.assert_array_equal(tb.fft.fftshift(x, axes=1), np.fft.fftshift(x, axes=1))
    np.testing.assert_array_equal(tb.fft.ifftshift(tb.fft.fftshift(x)), x)
    np.testing.assert_array_equal(tb.fft.ifftshift(x, axes=(0,)), np.fft.ifftshift(x, axes=(0,)))


def test_module_surface():
    assert tb.fft.__name__ == "torsh_backend.fft"
    for name in tb.fft.__all__:
        assert callable(getattr(tb.fft, name)) and (getattr(tb.fft, name).__doc__ or "").strip()
    # every transform of the C++ submodule has its NumPy-facing wrapper
    core = [n for n in dir(tb._core.fft) if not n.startswith("_")]
    assert core and set(core) <= set(tb.fft.__all__)
