"""Copies between the CPU and the other devices, and ops run there (OpenCL on PoCL in CI)."""

import numpy as np
import pytest

import torsh_backend as tb
from conftest import NUMPY_DLPACK_KEYWORDS, device_params, f32

pytestmark = pytest.mark.parametrize("dev", device_params())


def test_round_trip_copy(dev, rng):
    a = f32(rng, 5, 7)
    t = tb.from_dlpack(a).to(dev)
    assert t.device.startswith(dev) and t.backend.type == dev
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(t.to("cpu").numpy(), a)
    s = tb.from_dlpack(a).T.to(dev)
    np.testing.assert_array_equal(s.numpy(), a.T)


def test_ops_on_the_device_match_numpy(dev, rng):
    a, b = f32(rng, 33, 17), f32(rng, 17, 9)
    ta, tb_ = tb.asarray(a, device=dev), tb.asarray(b, device=dev)
    m = tb.matmul(ta, tb_)
    assert m.device == ta.device
    np.testing.assert_allclose(m.numpy(), a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose((ta + 1.0).numpy(), a + 1.0, rtol=1e-6)
    e = np.exp(a - a.max(-1, keepdims=True))
    np.testing.assert_allclose(tb.softmax(ta, axis=-1).numpy(), e / e.sum(-1, keepdims=True), atol=1e-6)
    # Ops the device lacks fall back to the CPU; the result stays on the device.
    ln = tb.layer_norm(ta)
    assert ln.device == ta.device
    ref = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln.numpy(), ref, rtol=1e-4, atol=1e-4)


def test_creation_on_the_device(dev):
    z = tb.zeros((3, 4), device=dev)
    assert z.device.startswith(dev) and not z.numpy().any()
    r = tb.rand((64,), seed=3, device=dev)
    np.testing.assert_allclose(r.numpy(), tb.rand((64,), seed=3).numpy(), rtol=1e-6)
    z[1] = 2.0
    assert z.numpy()[1].tolist() == [2.0] * 4


def test_dlpack_export_of_device_memory_is_explicit(dev):
    t = tb.ones((4,), device=dev)
    assert t.__dlpack_device__()[0] != 1
    with pytest.raises(tb.TorshError) as e:
        t.__dlpack__()
    assert "to('cpu')" in str(e.value)
    with pytest.raises(Exception):
        np.from_dlpack(t)
    # Asking for the host (dl_device=CPU) is the explicit request for a copy.
    assert "dltensor" in repr(t.__dlpack__(dl_device=(1, 0), copy=True))
    if NUMPY_DLPACK_KEYWORDS:
        host = np.from_dlpack(t, device="cpu")
        np.testing.assert_array_equal(host, np.ones(4, np.float32))
    with pytest.raises(tb.TorshError):
        np.asarray(t.__array__(copy=False))


def test_mixing_devices_is_an_error(dev):
    with pytest.raises(tb.TorshError) as e:
        tb.add(tb.ones((2,), device=dev), tb.ones((2,)))
    assert e.value.code == "DeviceMismatch"


def test_from_dlpack_to_a_device(dev, rng):
    a = f32(rng, 3)
    t = tb.from_dlpack(a, device=dev)
    assert t.device.startswith(dev)
    np.testing.assert_array_equal(t.numpy(), a)
    with pytest.raises(tb.TorshError):
        tb.from_dlpack(a, device=dev, copy=False)
