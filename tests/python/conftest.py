"""Shared fixtures: a seeded NumPy generator and the non-CPU devices to test on."""

import numpy as np
import pytest

import torsh_backend as tb


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def device_params():
    """One pytest param per usable non-CPU backend; a single visible skip when there is none."""
    params, missing = [], []
    for st in tb.statuses():
        if st.type == "cpu":
            continue
        if st.available:
            params.append(pytest.param(st.type, id=st.type))
        else:
            missing.append(f"{st.type}: {st.reason}")
    if not params:
        params.append(pytest.param(None, id="no-device",
                                   marks=pytest.mark.skip(reason="no device besides the CPU; " + "; ".join(missing))))
    return params


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _numpy_dlpack_features():
    """What this NumPy's DLPack import can do: NumPy 1.x imports read-only, without
    bool, and without the copy=/device= keywords that NumPy 2.1 added."""
    src = np.zeros(2, np.float32)
    writable = np.from_dlpack(src).flags.writeable
    try:
        np.from_dlpack(np.zeros(2, bool))
        bools = True
    except (RuntimeError, TypeError, BufferError):
        bools = False
    try:
        np.from_dlpack(src, copy=True)
        keywords = True
    except TypeError:
        keywords = False
    return writable, bools, keywords


NUMPY_DLPACK_WRITABLE, NUMPY_DLPACK_BOOL, NUMPY_DLPACK_KEYWORDS = _numpy_dlpack_features()
