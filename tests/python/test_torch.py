"""Zero-copy exchange with PyTorch CPU tensors (skipped when torch is not installed)."""

import numpy as np
import pytest

import torsh_backend as tb

torch = pytest.importorskip("torch")


def test_torch_tensor_to_torsh_shares_memory():
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    t = tb.from_dlpack(x)
    assert t.shape == (3, 4) and t.dtype == tb.float32
    t[0, 1] = -5.0
    assert x[0, 1].item() == -5.0
    x[2, 2] = 8.0
    assert t.numpy()[2, 2] == 8.0


def test_torsh_tensor_to_torch_shares_memory():
    t = tb.zeros((2, 5))
    x = torch.from_dlpack(t)
    x[1, 3] = 4.0
    assert t.numpy()[1, 3] == 4.0
    t[0, 0] = 1.5
    assert x[0, 0].item() == 1.5


def test_ops_on_torch_tensors_match_torch():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(6, 5, generator=g), torch.randn(5, 4, generator=g)
    np.testing.assert_allclose(tb.matmul(a, b).numpy(), (a @ b).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tb.softmax(a, axis=0).numpy(), torch.softmax(a, 0).numpy(), atol=1e-6)
    np.testing.assert_allclose(tb.gelu(a).numpy(), torch.nn.functional.gelu(a).numpy(), atol=1e-6)
    np.testing.assert_allclose(tb.var(a, axis=1, ddof=1).numpy(), a.var(1).numpy(), rtol=1e-5)


def test_non_contiguous_torch_views():
    x = torch.randn(4, 6)[:, ::2].t()
    np.testing.assert_array_equal(tb.from_dlpack(x).numpy(), x.numpy())


def test_bfloat16_round_trip():
    x = torch.randn(8).to(torch.bfloat16)
    t = tb.from_dlpack(x)
    assert t.dtype == tb.bfloat16
    assert torch.equal(torch.from_dlpack(t), x)
