"""LSTM / GRU against PyTorch's nn.LSTM / nn.GRU with the same parameters."""

import numpy as np
import pytest

import torsh_backend as tb

torch = pytest.importorskip("torch")


def params(module):
    return [p.detach().numpy() for p in module.parameters()]


@pytest.mark.parametrize("layers,bidirectional,batch_first,bias", [(1, False, False, True), (2, True, True, True),
                                                                     (1, True, False, False)])
def test_lstm_matches_pytorch(layers, bidirectional, batch_first, bias):
    torch.manual_seed(0)
    m = torch.nn.LSTM(6, 5, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias)
    x = torch.randn(3, 7, 6) if batch_first else torch.randn(7, 3, 6)
    d = 2 if bidirectional else 1
    h0, c0 = torch.randn(layers * d, 3, 5), torch.randn(layers * d, 3, 5)
    with torch.no_grad():
        want, (wh, wc) = m(x, (h0, c0))
    out, (h, c) = tb.lstm(x.numpy(), params(m), h0.numpy(), c0.numpy(), num_layers=layers,
                          bidirectional=bidirectional, batch_first=batch_first)
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h.numpy(), wh.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(c.numpy(), wc.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("layers,bidirectional", [(1, False), (2, True)])
def test_gru_matches_pytorch(layers, bidirectional):
    torch.manual_seed(1)
    m = torch.nn.GRU(4, 6, num_layers=layers, bidirectional=bidirectional)
    x = torch.randn(9, 2, 4)
    with torch.no_grad():
        want, wh = m(x)
    out, h = tb.gru(x.numpy(), params(m), num_layers=layers, bidirectional=bidirectional)
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h.numpy(), wh.numpy(), rtol=1e-4, atol=1e-5)


def test_cells_match_pytorch():
    torch.manual_seed(2)
    lc, gc = torch.nn.LSTMCell(3, 4), torch.nn.GRUCell(3, 4)
    x, h, c = torch.randn(2, 3), torch.randn(2, 4), torch.randn(2, 4)
    with torch.no_grad():
        wh, wc = lc(x, (h, c))
        wg = gc(x, h)
    th, tc = tb.lstm_cell(x.numpy(), h.numpy(), c.numpy(), *params(lc))
    np.testing.assert_allclose(th.numpy(), wh.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tc.numpy(), wc.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tb.gru_cell(x.numpy(), h.numpy(), *params(gc)).numpy(), wg.numpy(), rtol=1e-5, atol=1e-6)


def test_bad_weights_are_refused():
    m = torch.nn.LSTM(4, 3)
    with pytest.raises(tb.TorshError, match="weight tensors"):
        tb.lstm(np.zeros((2, 1, 4), np.float32), params(m)[:3])
    for fn in (tb.lstm, tb.lstm_train):  # 0 layers: an error, not a crash
        with pytest.raises(tb.TorshError, match="0 layer"):
            fn(np.zeros((5, 2, 4), np.float32), params(m), num_layers=0)
    with pytest.raises(tb.TorshError, match="0 layer"):
        tb.gru(np.zeros((5, 2, 4), np.float32), params(torch.nn.GRU(4, 3)), num_layers=0)


def test_unbatched_cells_match_pytorch():
    torch.manual_seed(3)
    lc, gc = torch.nn.LSTMCell(3, 4), torch.nn.GRUCell(3, 4)
    x, h, c = torch.randn(3), torch.randn(4), torch.randn(4)
    with torch.no_grad():
        wh, wc = lc(x, (h, c))
        wg = gc(x, h)
    th, tc = tb.lstm_cell(x.numpy(), h.numpy(), c.numpy(), *params(lc))
    assert tuple(th.shape) == (4,)
    np.testing.assert_allclose(th.numpy(), wh.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tc.numpy(), wc.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tb.gru_cell(x.numpy(), h.numpy(), *params(gc)).numpy(), wg.numpy(), rtol=1e-5, atol=1e-6)


def test_training_keeps_copies_of_numpy_arguments():
    torch.manual_seed(4)
    m = torch.nn.LSTM(4, 3)
    P = params(m)
    x = np.random.default_rng(0).standard_normal((5, 2, 4)).astype(np.float32)
    go = np.ones((5, 2, 3), np.float32)
    _, _, tape = tb.lstm_train(x, P)
    g1 = [t.numpy().copy() for t in tb.rnn_backward(tape, go)[3]]
    x[:] = 0
    P[0][:] = 0
    g2 = [t.numpy() for t in tb.rnn_backward(tape, go)[3]]
    for a, b in zip(g1, g2):
        np.testing.assert_array_equal(a, b)


def test_backward_of_an_empty_sequence():
    m = torch.nn.LSTM(4, 3)
    gh, gc = np.ones((1, 2, 3), np.float32), np.full((1, 2, 3), 2, np.float32)
    _, _, tape = tb.lstm_train(np.zeros((0, 2, 4), np.float32), params(m))
    dx, dh0, dc0, dw = tb.rnn_backward(tape, np.zeros((0, 2, 3), np.float32), gh, gc)
    assert tuple(dx.shape) == (0, 2, 4)
    np.testing.assert_array_equal(dh0.numpy(), gh)
    np.testing.assert_array_equal(dc0.numpy(), gc)
    assert all(not w.numpy().any() for w in dw)


def _torch_grads(m, x, states, loss_of):
    x = x.clone().requires_grad_()
    states = [s.clone().requires_grad_() for s in states]
    out = m(x, tuple(states) if len(states) == 2 else states[0])
    loss_of(out).backward()
    return x.grad, [s.grad for s in states], [p.grad for p in m.parameters()]


@pytest.mark.parametrize("layers,bidirectional,batch_first,bias", [(1, False, False, True), (2, True, True, True),
                                                                     (2, False, False, False)])
def test_lstm_backward_matches_pytorch_autograd(layers, bidirectional, batch_first, bias):
    torch.manual_seed(3)
    m = torch.nn.LSTM(4, 5, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias)
    x = torch.randn(2, 6, 4) if batch_first else torch.randn(6, 2, 4)
    d = 2 if bidirectional else 1
    h0, c0 = torch.randn(layers * d, 2, 5), torch.randn(layers * d, 2, 5)
    out, (h, c), tape = tb.lstm_train(x.numpy(), params(m), h0.numpy(), c0.numpy(), num_layers=layers,
                                      bidirectional=bidirectional, batch_first=batch_first)
    r_out, r_h, r_c = torch.randn(out.shape), torch.randn(h.shape), torch.randn(c.shape)
    gx, (gh0, gc0), gw = _torch_grads(
        m, x, [h0, c0], lambda o: (o[0] * r_out).sum() + (o[1][0] * r_h).sum() + (o[1][1] * r_c).sum())
    tx, th0, tc0, tw = tb.rnn_backward(tape, r_out.numpy(), r_h.numpy(), r_c.numpy())
    np.testing.assert_allclose(tx.numpy(), gx.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(th0.numpy(), gh0.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(tc0.numpy(), gc0.numpy(), rtol=1e-4, atol=1e-5)
    assert len(tw) == len(gw)
    for a, b in zip(tw, gw):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("layers,bidirectional", [(1, False), (2, True)])
def test_gru_backward_matches_pytorch_autograd(layers, bidirectional):
    torch.manual_seed(4)
    m = torch.nn.GRU(3, 4, num_layers=layers, bidirectional=bidirectional)
    x = torch.randn(7, 2, 3)
    h0 = torch.randn(layers * (2 if bidirectional else 1), 2, 4)
    out, h, tape = tb.gru_train(x.numpy(), params(m), h0.numpy(), num_layers=layers, bidirectional=bidirectional)
    r_out = torch.randn(out.shape)
    gx, (gh0,), gw = _torch_grads(m, x, [h0], lambda o: (o[0] * r_out).sum())
    tx, th0, tc0, tw = tb.rnn_backward(tape, r_out.numpy())
    assert tc0 is None
    np.testing.assert_allclose(tx.numpy(), gx.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(th0.numpy(), gh0.numpy(), rtol=1e-4, atol=1e-5)
    for a, b in zip(tw, gw):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


def test_rnn_backward_refuses_a_misshaped_gradient():
    m = torch.nn.GRU(3, 4)
    _, _, tape = tb.gru_train(np.zeros((5, 1, 3), np.float32), params(m))
    with pytest.raises(tb.TorshError, match="grad_output"):
        tb.rnn_backward(tape, np.zeros((5, 1, 5), np.float32))
