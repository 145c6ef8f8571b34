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


# ---- empty tensors are contiguous (item 13)

def test_empty_shapes_ending_in_zero_are_valid_input():
    assert tb.matmul(tb.zeros((2, 3)), tb.zeros((3, 0))).shape == (2, 0)
    assert tb.zeros((5, 0, 0)).reshape(0, 3).shape == (0, 3)
    assert tb.zeros((3, 0)).is_contiguous
