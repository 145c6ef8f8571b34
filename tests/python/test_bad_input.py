"""Input a hostile user can type (issue 16): each case is a TorshError naming the op and
the limit (or an exact answer), never a crash, a C++ exception's bare name, a
UnicodeDecodeError or an update that silently lands in a hidden copy."""

import os
import subprocess
import sys

import numpy as np
import pytest

import torsh_backend as tb


def i64_scalar(v):
    return tb.from_dlpack(np.array([v], dtype=np.int64)).reshape(())


# ---- reshape's -1 (item 2)

def test_reshape_minus_one_beside_zero_is_a_clear_error():
    huge = tb.zeros((1,)).broadcast_to((2**40,))
    with pytest.raises(tb.TorshError) as e:
        huge.reshape(-1, 0)
    assert e.value.op == "reshape" and e.value.code == "ShapeMismatch"
    assert "cannot infer the -1 in [-1, 0]: 1099511627776 elements" in e.value.message
    with pytest.raises(tb.TorshError, match="not a multiple of 3"):
        tb.zeros(7).reshape(-1, 3)


# ---- plugin and driver text (item 4)

def test_statuses_never_raise_unicode_errors():
    # A search path that is not UTF-8 ends up in the reason of every missing plugin.
    env = dict(os.environb)
    env[b"TORSH_BACKEND_PATH"] = b"/nonexistent-\xff\xfe-dir"
    code = ("import torsh_backend as tb\n"
            "rows = [(s.type, s.reason, s.source, s.version) for s in tb.statuses()]\n"
            "assert any('\\ufffd' in r for _, r, _, _ in rows), rows\n"
            "tb.info(); tb.explain_selection(); repr(tb.statuses())\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "UnicodeDecodeError" not in r.stderr and r.stdout.strip() == "ok"


# ---- exact integers (item 9)

@pytest.mark.parametrize("v", [2**63 - 1, -2**63, 2**53 + 1, -(2**53 + 1), 0, 7])
def test_int64_item_and_int_are_exact(v):
    t = i64_scalar(v)
    assert t.item() == v and type(t.item()) is int
    assert int(t) == v


def test_int_of_float_tensors_follows_python():
    assert int(tb.from_dlpack(np.array([1e30]))) == int(1e30)
    assert int(tb.from_dlpack(np.array([-2.5], np.float32))) == -2
    with pytest.raises(ValueError):
        int(tb.from_dlpack(np.array([np.nan])))


# ---- in-place operands must be shared (item 10)

def read_only(a):
    a = np.array(a, np.float32)
    a.flags.writeable = False
    return a


def test_adam_step_refuses_read_only_and_temporary_operands():
    p, g = read_only([1.0, 2.0, 3.0]), np.ones(3, np.float32)
    m, v = np.zeros(3, np.float32), np.zeros(3, np.float32)
    with pytest.raises(tb.TorshError) as e:
        tb.adam_step([p], [g], [m], [v], step=1)
    assert e.value.op == "adam_step" and e.value.code == "InvalidArgument"
    assert "params[0]" in e.value.message and "read-only" in e.value.message
    assert list(p) == [1.0, 2.0, 3.0] and not m.any()
    with pytest.raises(tb.TorshError, match=r"exp_avg_sq\[0\]"):
        tb.adam_step([np.ones(3, np.float32)], [g], [m], [read_only(np.zeros(3))], step=1)
    with pytest.raises(tb.TorshError, match=r"params\[0\] is a list"):
        tb.adam_step([[1.0, 2.0, 3.0]], [g], [m], [v], step=1)
    # Read-only gradients are only read.
    w = np.ones(3, np.float32)
    tb.adam_step([w], [read_only([1.0, 1.0, 1.0])], [m], [v], step=1, lr=0.5)
    assert (w < 1).all()


def test_batch_norm_refuses_read_only_running_stats_when_training():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    rm, rv = read_only(np.zeros(3)), np.ones(3, np.float32)
    with pytest.raises(tb.TorshError) as e:
        tb.batch_norm(x, running_mean=rm, running_var=rv, training=True)
    assert e.value.op == "batch_norm" and "running_mean" in e.value.message
    assert not rm.any() and (rv == 1).all()
    # Evaluation only reads them.
    tb.batch_norm(x, running_mean=rm, running_var=read_only(np.ones(3)), training=False)
    rm_w = np.zeros(3, np.float32)
    tb.batch_norm(x, running_mean=rm_w, running_var=rv, training=True)
    assert rm_w.any()


# ---- empty tensors are contiguous (item 13)

def test_empty_shapes_ending_in_zero_are_valid_input():
    assert tb.matmul(tb.zeros((2, 3)), tb.zeros((3, 0))).shape == (2, 0)
    assert tb.zeros((5, 0, 0)).reshape(0, 3).shape == (0, 3)
    assert tb.zeros((3, 0)).is_contiguous


# ---- limits are TorshErrors (item 14)

@pytest.mark.parametrize("shape", [2**63, (2**64,), (3, 2**63 + 5)])
def test_ints_beyond_int64_in_shapes(shape):
    with pytest.raises(tb.TorshError) as e:
        tb.zeros(shape)
    assert e.value.code == "OutOfRange" and e.value.op == "shape"
    assert "64-bit" in e.value.message


def test_ints_beyond_int64_as_operands_and_indices():
    x = tb.zeros(3, dtype="i64")
    with pytest.raises(tb.TorshError, match="does not fit in a 64-bit signed integer"):
        x + 2**63
    with pytest.raises(IndexError, match="out of bounds"):
        x[2**63]
    with pytest.raises(IndexError, match="out of bounds"):
        x[-2**64]


def test_more_than_eight_dimensions():
    with pytest.raises(tb.TorshError, match="at most 8") as e:
        tb.zeros((1,) * 9)
    assert e.value.code == "InvalidArgument"
    with pytest.raises(tb.TorshError, match="at most 8") as e:
        tb.zeros((1,) * 8).unsqueeze(0)
    assert e.value.op == "unsqueeze"
    with pytest.raises(tb.TorshError, match="at most 8") as e:
        tb.zeros(1).reshape(*([1] * 9))
    assert e.value.op == "reshape"


def test_rope_cache_too_large_is_out_of_memory_of_the_op():
    with pytest.raises(tb.TorshError) as e:
        tb.rope_cache(2**40, 8)
    assert e.value.code == "OutOfMemory" and e.value.op == "rope_cache"
    assert "the device has" in e.value.message and "in total" in e.value.message


# ---- create's index, pooling's stride (item 18)

def test_create_refuses_an_index_that_contradicts_the_name():
    with pytest.raises(tb.TorshError) as e:
        tb.create("cpu:0", 3)
    assert e.value.op == "create" and e.value.code == "InvalidArgument"
    assert "name different devices" in e.value.message
    assert tb.create("cpu:0", 0).device == "cpu:0"
    assert tb.create("cpu", 0).device == "cpu:0"
    with pytest.raises(tb.TorshError, match="out of range"):
        tb.create("cpu", 3)


@pytest.mark.parametrize("pool", [tb.max_pool2d, tb.avg_pool2d])
def test_pooling_stride_zero_is_an_error(pool):
    x = tb.zeros((1, 1, 4, 4))
    with pytest.raises(tb.TorshError) as e:
        pool(x, 2, stride=0)
    assert e.value.code == "InvalidArgument" and e.value.op == pool.__name__
    assert "stride (0, 0) must be >= 1" in e.value.message
    assert pool(x, 2).shape == (1, 1, 2, 2)
