"""int8 quantization with ONNX QuantizeLinear / DequantizeLinear semantics, against NumPy's formula."""

import numpy as np
import pytest

import torsh_backend as tb
from conftest import device_params


def quantize_ref(x, scale, zp, axis, dtype):
    info = np.iinfo(dtype)
    shape = [1] * x.ndim
    if np.ndim(scale) == 1 and np.size(scale) > 1:
        shape[axis] = -1
    s = np.asarray(scale, np.float32).reshape(shape)
    z = np.asarray(zp, np.float32).reshape(shape)
    q = np.rint(x.astype(np.float32) / s) + z
    q = np.where(np.isnan(q), z, q)
    return np.clip(q, info.min, info.max).astype(dtype)


def test_per_tensor_halves_to_even_and_saturation():
    x = np.array([0.25, 0.75, 1.25, -0.25, -0.75, -1.25, 1e30, -1e30, np.inf, -np.inf, np.nan, 63.75], np.float32)
    assert (tb.quantize_linear(x, 1, 10).numpy() == tb.quantize_linear(x, 1.0, 10).numpy()).all()  # an int scale
    q = tb.quantize_linear(x, 0.5, 10)
    assert q.dtype == tb.uint8
    np.testing.assert_array_equal(q.numpy(), [10, 12, 12, 10, 8, 8, 255, 0, 255, 0, 10, 138])
    s = tb.quantize_linear(x, 0.5, dtype="int8")
    np.testing.assert_array_equal(s.numpy(), [0, 2, 2, 0, -2, -2, 127, -128, 127, -128, 0, 127])


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_per_channel_matches_onnx_formula(rng, axis):
    x = rng.uniform(-4, 4, (3, 4, 5)).astype(np.float32)
    c = x.shape[axis]
    scale = rng.uniform(0.01, 0.1, c).astype(np.float32)
    zp = rng.integers(-30, 30, c).astype(np.int8)
    q = tb.quantize_linear(x, scale, zp, axis=axis)
    assert q.dtype == tb.int8
    want = quantize_ref(x, scale, zp, axis, np.int8)
    np.testing.assert_array_equal(q.numpy(), want)
    d = tb.dequantize_linear(q, scale, zp, axis=axis)
    shape = [1, 1, 1]
    shape[axis] = -1
    np.testing.assert_array_equal(d.numpy(), (want.astype(np.float32) - zp.reshape(shape).astype(np.float32))
                                  * scale.reshape(shape))


@pytest.mark.parametrize("device", device_params())
def test_on_every_device_equals_the_cpu(rng, device):
    x = rng.uniform(-3, 3, (6, 33)).astype(np.float32)
    scale = rng.uniform(0.01, 0.05, 6).astype(np.float32)
    zp = rng.integers(0, 255, 6).astype(np.uint8)
    want = tb.quantize_linear(x, scale, zp, axis=0).numpy()
    xd = tb.asarray(x, device=device)
    got = tb.quantize_linear(xd, scale, zp, axis=0)
    assert got.device.startswith(device)
    np.testing.assert_array_equal(got.to("cpu").numpy(), want)
    np.testing.assert_array_equal(tb.dequantize_linear(got, scale, zp, axis=0).to("cpu").numpy(),
                                  tb.dequantize_linear(want, scale, zp, axis=0).numpy())


def test_bad_input_is_a_clear_error():
    x = np.ones((2, 3), np.float32)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(tb.TorshError) as e:
            tb.quantize_linear(x, bad)
        assert e.value.code == "InvalidArgument" and "scale" in str(e.value)
    with pytest.raises(tb.TorshError) as e:
        tb.quantize_linear(x, 0.1, 300)
    assert e.value.code == "OutOfRange" and "300" in str(e.value)
    with pytest.raises(tb.TorshError) as e:
        tb.quantize_linear(x, 0.1, -1)
    assert e.value.code == "OutOfRange"
    with pytest.raises(tb.TorshError) as e:
        tb.quantize_linear(x, [0.1, 0.2], axis=1)
    assert e.value.code == "ShapeMismatch"
    with pytest.raises(tb.TorshError) as e:
        tb.quantize_linear(x, 0.1, np.array(3, np.int8), dtype="uint8")
    assert e.value.code == "DTypeMismatch"
    with pytest.raises(tb.TorshError) as e:
        tb.dequantize_linear(x, 0.1)
    assert e.value.code == "DTypeMismatch"
    with pytest.raises(tb.TorshError) as e:
        tb.dequantize_linear(np.zeros(3, np.uint8), 0.1, dtype="float64")
    assert e.value.code == "DTypeMismatch"
