"""Zero-copy exchange with NumPy through DLPack, both ways, and its lifetimes."""

import gc

import numpy as np
import pytest

import torsh_backend as tb
from conftest import NUMPY_DLPACK_BOOL, NUMPY_DLPACK_KEYWORDS, NUMPY_DLPACK_WRITABLE

DTYPES = ["float32", "float64", "float16", "int8", "uint8", "int32", "int64", "bool"]


def address(a):
    return a.__array_interface__["data"][0]


def test_numpy_view_of_a_tensor_shares_memory_both_ways():
    t = tb.zeros((3, 4))
    a = np.from_dlpack(t)
    assert address(a) == address(t.numpy())
    t[0, 0] = 7.0
    assert a[0, 0] == 7.0
    # NumPy 1.x marks DLPack imports read-only; t.numpy() is the writable view there.
    w = a if NUMPY_DLPACK_WRITABLE else t.numpy()
    w[1, 2] = 5.0
    assert t.numpy()[1, 2] == 5.0 and a[1, 2] == 5.0


def test_tensor_from_numpy_shares_memory_both_ways():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = tb.from_dlpack(a)
    assert t.shape == (3, 4) and t.dtype == tb.float32 and t.device == "cpu:0"
    t[1, 1] = 100.0
    assert a[1, 1] == 100.0
    a[2, 3] = -1.0
    assert t.numpy()[2, 3] == -1.0
    assert address(t.numpy()) == address(a)


def test_ops_write_through_to_numpy_in_place():
    a = np.ones((4, 5), np.float32)
    t = tb.from_dlpack(a)
    t += 2.0
    np.testing.assert_array_equal(a, np.full((4, 5), 3.0, np.float32))


def test_imported_array_outlives_its_python_owner():
    a = np.arange(6, dtype=np.float64)
    t = tb.from_dlpack(a)
    del a
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), np.arange(6, dtype=np.float64))


def test_exported_view_outlives_the_tensor():
    t = tb.full((2, 3), 4.0)
    a = np.from_dlpack(t)
    del t
    gc.collect()
    np.testing.assert_array_equal(a, np.full((2, 3), 4.0, np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_round_trips(dtype, rng):
    if dtype == "bool" and not NUMPY_DLPACK_BOOL:
        pytest.skip(f"NumPy {np.__version__} has no bool in DLPack")
    a = (rng.standard_normal((3, 5)) * 10).astype(dtype)
    t = tb.from_dlpack(a)
    b = np.from_dlpack(t)
    assert b.dtype == a.dtype
    np.testing.assert_array_equal(a, b)
    assert address(a) == address(b)


@pytest.mark.parametrize("index", [
    (slice(None, None, 2), slice(None)),
    (slice(None), slice(None, None, -1)),
    (slice(1, 4), slice(2, None, 3)),
    (Ellipsis, 0),
])
def test_strided_views_import_without_a_copy(index, rng):
    base = rng.standard_normal((6, 7)).astype(np.float32)
    a = base[index]
    t = tb.from_dlpack(a)
    assert t.shape == a.shape
    assert t.strides == tuple(s // a.itemsize for s in a.strides)
    np.testing.assert_array_equal(t.numpy(), a)
    a[...] = 42.0
    np.testing.assert_array_equal(t.numpy(), a)


def test_transposed_import_and_export(rng):
    a = rng.standard_normal((3, 5)).astype(np.float32)
    t = tb.from_dlpack(a.T)
    assert not t.is_contiguous
    np.testing.assert_array_equal(np.from_dlpack(t), a.T)
    np.testing.assert_array_equal(np.from_dlpack(t.T), a)


def test_scalars_and_empty_arrays():
    t = tb.from_dlpack(np.array(3.5, np.float32))
    assert t.shape == () and t.item() == 3.5
    e = tb.from_dlpack(np.zeros((0, 4), np.float32))
    assert e.shape == (0, 4) and e.size == 0
    assert np.from_dlpack(e).shape == (0, 4)


def test_read_only_arrays_are_copied_unless_copy_false():
    a = np.arange(4, dtype=np.float32)
    a.flags.writeable = False
    t = tb.from_dlpack(a)
    t[0] = 9.0
    assert a[0] == 0.0
    with pytest.raises(tb.TorshError):
        tb.from_dlpack(a, copy=False)


def test_copy_true_makes_an_independent_tensor():
    a = np.zeros(3, np.float32)
    t = tb.from_dlpack(a, copy=True)
    t[0] = 1.0
    assert a[0] == 0.0


def test_dlpack_device_and_protocol_keywords():
    t = tb.zeros((2,))
    assert t.__dlpack_device__() == (1, 0)
    capsule = t.__dlpack__(max_version=(1, 0))
    assert "dltensor" in repr(capsule)
    if NUMPY_DLPACK_KEYWORDS:
        c = np.from_dlpack(t, copy=True)
        c[0] = 1.0
        assert t.numpy()[0] == 0.0
    # The protocol keyword itself, whatever the consumer's version.
    assert "dltensor" in repr(t.__dlpack__(copy=True))
    copied = tb.from_dlpack(t, copy=True)
    copied[0] = 3.0
    assert t.numpy()[0] == 0.0


def test_unsupported_dtype_raises_torsh_error():
    with pytest.raises(tb.TorshError) as e:
        tb.from_dlpack(np.zeros(3, np.complex64))
    assert e.value.op == "from_dlpack"


def test_too_many_dimensions():
    with pytest.raises(tb.TorshError) as e:
        tb.from_dlpack(np.zeros((1,) * 9, np.float32))
    assert e.value.code == "InvalidArgument"


def test_a_refusing_producer_gives_its_reason():
    class Refuses:
        def __dlpack__(self, **kw):
            raise BufferError("not today")

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(tb.TorshError, match="not today"):
        tb.from_dlpack(Refuses())


def test_non_arrays_are_refused_clearly():
    with pytest.raises(tb.TorshError) as e:
        tb.from_dlpack(object())
    assert "__dlpack__" in str(e.value)


def test_asarray_from_lists_and_numpy():
    t = tb.asarray([[1.0, 2.0], [3.0, 4.0]])
    assert t.dtype == tb.float32
    np.testing.assert_array_equal(t.numpy(), [[1, 2], [3, 4]])
    i = tb.asarray([1, 2, 3])
    assert i.dtype == tb.int64
    a = np.ones(3, np.float32)
    assert address(tb.asarray(a).numpy()) == address(a)
    assert tb.asarray(a, dtype="f64").dtype == tb.float64


def test_numpy_protocol_and_host_helpers():
    t = tb.full((2, 2), 1.5)
    assert np.asarray(t).sum() == 6.0
    assert t.tolist() == [[1.5, 1.5], [1.5, 1.5]]
    assert float(tb.sum(t)) == 6.0
