"""torsh_backend: one API over the compute devices of a machine.

The C++ library torsh (a built-in CPU backend, OpenCL/CUDA/... as plugins)
from Python::

    import numpy as np
    import torsh_backend as tb

    tb.available()                      # ['opencl', 'cpu'] ...
    print(tb.info())                    # what `torsh info` prints
    a = tb.from_dlpack(np.ones((4, 4), np.float32))   # shares the array's memory
    b = tb.softmax(tb.matmul(a, a), axis=-1)
    b.numpy()                           # shares the tensor's memory (CPU)
    tb.fft.rfft(np.ones(8))             # numpy.fft's functions (torsh_backend.fft)
    cl = a.to("opencl")                 # explicit device copy
    tb.matmul(cl, cl).numpy()           # .numpy() copies device tensors to the host

Every op takes Tensors, NumPy arrays (or any DLPack producer, without a copy
on the CPU), nested lists and Python scalars; operands must share a device.
Errors raise :class:`TorshError` (a ``RuntimeError``) carrying the op, shapes,
dtypes, device and suggestions.
"""

from __future__ import annotations

import sys as _sys
from typing import Any

from ._errors import TorshError
# numpy.fft's functions (torsh_backend/fft.py); imported before the star import
# so that type checkers take tb.fft for this module, and rebound below.
from . import fft
from ._core import *  # type: ignore[no-redef]  # noqa: F401,F403  (the op layer, Tensor, Backend, ...)
from ._core import DType, Tensor, __version__, from_dlpack, full, zeros
from ._core import device as _to_device, dtype as _to_dtype

# The star import bound `fft` to _core's C++ submodule (tensors in the (re, im)
# layout only); tb.fft is the wrapper imported above, which also takes and gives
# NumPy complex arrays.
fft = _sys.modules[f"{__name__}.fft"]

float32 = DType.f32
float64 = DType.f64
float16 = DType.f16
bfloat16 = DType.bf16
int8 = DType.i8
uint8 = DType.u8
int32 = DType.i32
int64 = DType.i64
bool_ = DType.bool


def asarray(obj: Any, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor from a Tensor, a DLPack producer or a nested sequence.

    Arrays on the CPU are shared without a copy when neither ``dtype`` nor
    ``device`` asks for a conversion (``copy=True`` forces one, ``copy=False``
    forbids one). Nested lists become float32 when they hold floats, as in
    PyTorch, unless ``dtype`` says otherwise.
    """
    import numpy as np

    if isinstance(obj, Tensor):
        t = obj
    elif hasattr(obj, "__dlpack__") or isinstance(obj, (np.ndarray, np.generic)):
        t = from_dlpack(np.asarray(obj) if isinstance(obj, np.generic) else obj, copy=copy)
    else:
        arr = np.asarray(obj)
        if dtype is None and arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        t = from_dlpack(arr)
    if dtype is not None and t.dtype != _to_dtype(dtype):
        if copy is False:
            msg = "a dtype conversion needs a copy and copy=False forbids it"
            raise TorshError(msg, code="InvalidArgument", message=msg, op="asarray",
                             suggestions=["Pass copy=None to allow the copy"])
        t = t.cast(dtype)
    if device is not None and t.backend != _to_device(device):
        if copy is False:
            msg = "a device change needs a copy and copy=False forbids it"
            raise TorshError(msg, code="InvalidArgument", message=msg, op="asarray",
                             suggestions=["Pass copy=None to allow the copy"])
        t = t.to(device)
    return t


tensor = asarray


def ones(shape: Any, dtype: Any = "f32", device: Any = None) -> Tensor:
    """A tensor of ones."""
    return full(shape, 1, dtype=dtype, device=device)


def zeros_like(x: Tensor, dtype: Any = None) -> Tensor:
    """Zeros with x's shape, dtype (unless given) and device."""
    return zeros(x.shape, dtype=x.dtype if dtype is None else dtype, device=x.backend)


def ones_like(x: Tensor, dtype: Any = None) -> Tensor:
    """Ones with x's shape, dtype (unless given) and device."""
    return full(x.shape, 1, dtype=x.dtype if dtype is None else dtype, device=x.backend)
