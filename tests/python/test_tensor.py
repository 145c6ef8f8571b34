"""Tensor metadata, views, indexing and copies."""

import numpy as np
import pytest

import torsh_backend as tb
from conftest import f32


def test_creation_and_metadata():
    t = tb.zeros((2, 3, 4), dtype="f64")
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.size == 24 and len(t) == 2
    assert t.dtype == tb.float64 and t.itemsize == 8 and t.nbytes == 192
    assert t.strides == (12, 4, 1) and t.is_contiguous and t.offset == 0
    assert t.device == "cpu:0" and t.backend.type == "cpu"
    assert "f64[2, 3, 4]" in repr(t)
    assert tb.empty(5, dtype=np.int32).dtype == tb.int32
    assert tb.ones((2,)).tolist() == [1.0, 1.0]
    assert tb.full((2, 2), 7, dtype="i64").tolist() == [[7, 7], [7, 7]]
    assert tb.zeros_like(t).dtype == tb.float64


@pytest.mark.parametrize("spelling", ["f32", "float32", np.float32, np.dtype("f4"), tb.float32, tb.DType.f32])
def test_dtype_spellings(spelling):
    assert tb.dtype(spelling) == tb.float32


def test_views_share_memory(rng):
    a = f32(rng, 2, 3, 4)
    t = tb.from_dlpack(a)
    np.testing.assert_array_equal(t.reshape(6, 4).numpy(), a.reshape(6, 4))
    np.testing.assert_array_equal(t.reshape((4, -1)).numpy(), a.reshape(4, -1))
    np.testing.assert_array_equal(t.transpose().numpy(), a.transpose())
    np.testing.assert_array_equal(t.transpose(1, 0, 2).numpy(), a.transpose(1, 0, 2))
    np.testing.assert_array_equal(t.permute(2, 0, 1).numpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(t.swapaxes(0, 2).numpy(), a.swapaxes(0, 2))
    np.testing.assert_array_equal(t.T.numpy(), a.T)
    np.testing.assert_array_equal(t.mT.numpy(), np.swapaxes(a, -1, -2))
    np.testing.assert_array_equal(t.unsqueeze(1).numpy(), a[:, None])
    np.testing.assert_array_equal(t[0].broadcast_to((5, 3, 4)).numpy(), np.broadcast_to(a[0], (5, 3, 4)))
    t.T[0, 0, 0] = 99.0
    assert a[0, 0, 0] == 99.0


@pytest.mark.parametrize("key", [
    0, -1, (1, 2), slice(1, None), (slice(None), 1), (Ellipsis, slice(None, None, -2)), (None, 0),
    (0, None, slice(1, 3)), (slice(None, None, -1), Ellipsis, 3), (1, 2, 3),
])
def test_getitem_matches_numpy(rng, key):
    a = f32(rng, 3, 4, 5)
    np.testing.assert_array_equal(tb.from_dlpack(a)[key].numpy(), a[key])


def test_setitem_broadcasts_and_casts():
    a = np.zeros((3, 4), np.float32)
    t = tb.from_dlpack(a)
    t[1] = 5
    t[:, 2] = np.arange(3, dtype=np.float64)
    t[0, 0] = tb.full((), 9.0)
    ref = np.zeros((3, 4), np.float32)
    ref[1] = 5
    ref[:, 2] = np.arange(3)
    ref[0, 0] = 9
    np.testing.assert_array_equal(a, ref)


def test_iteration_over_the_first_axis():
    t = tb.asarray([[1.0, 2.0], [3.0, 4.0]])
    assert [row.tolist() for row in t] == [[1.0, 2.0], [3.0, 4.0]]


def test_copies_are_independent(rng):
    a = f32(rng, 3, 3)
    t = tb.from_dlpack(a)
    c = t.clone()
    c[0, 0] = 123.0
    assert a[0, 0] != 123.0
    tt = t.T.contiguous()
    assert tt.is_contiguous
    np.testing.assert_array_equal(tt.numpy(), a.T)
    z = tb.zeros((3, 3))
    z.copy_(t)
    np.testing.assert_array_equal(z.numpy(), a)
    z.fill_(2.5)
    assert z.numpy().min() == 2.5 == z.numpy().max()


def test_cast_and_scalars():
    t = tb.asarray([1.7, -2.2])
    assert t.astype("i32").tolist() == [1, -2]
    assert tb.asarray([3]).item() == 3 and isinstance(tb.asarray([3]).item(), int)
    assert tb.full((), True, dtype="bool").item() is True
    with pytest.raises(tb.TorshError):
        t.item()


def test_in_place_operators_keep_the_object():
    t = tb.ones((2,))
    before = id(t)
    t += 1
    t *= 3
    t -= 1
    t /= 5
    assert id(t) == before and t.tolist() == [1.0, 1.0]


def test_to_cpu_is_identity_on_cpu():
    t = tb.ones((2,))
    assert t.to("cpu").numpy().__array_interface__["data"][0] == t.numpy().__array_interface__["data"][0]
