"""Discrete Fourier transforms with numpy.fft's names, arguments and norms.

::

    import numpy as np
    import torsh_backend as tb

    a = np.random.default_rng(0).standard_normal(1000)
    tb.fft.rfft(a)                      # complex128, as np.fft.rfft(a)
    tb.fft.irfft(tb.fft.rfft(a), n=1000)
    tb.fft.fft2(img.astype(np.complex64), norm="ortho")

Two kinds of input, two kinds of output:

- a NumPy array (or anything ``numpy.asarray`` takes): a complex array goes in
  as complex, a real one as complex with a zero imaginary part (fft, ifft,
  hfft and the N-D forms) or as real (rfft, ihfft, rfftn, rfft2); the result
  is a NumPy complex array (real for irfft, hfft, irfftn, irfft2). As in NumPy 2, float32,
  float16 and complex64 compute in single precision, everything else (float64,
  complex128, integers, bool) in double; irfft of a float16 array comes back
  float16 (irfftn / irfft2 over more than one axis: float32), as NumPy's does.
  long double is refused (torsh has no such type).
- a torsh :class:`Tensor`: complex values are f32 / f64 tensors with a trailing
  axis of 2 holding (re, im), as ``torch.view_as_real``; axes, ``n`` and ``s``
  name the complex dimensions (the trailing 2 is not one). The result is a
  Tensor in the same layout on the same device. Other dtypes raise TorshError.

``norm`` is ``None`` (= ``"backward"``: the inverse divides by n), ``"ortho"``
(both by sqrt(n)) or ``"forward"`` (the forward divides by n). ``n`` / ``s``
zero-pad or truncate the input first; an entry -1 in ``s`` keeps the input's
length along that axis (NumPy 2). Unlike NumPy, an axis named twice in
``axes``, or an empty ``axes``, raises TorshError.

Every transform takes ``out`` (as NumPy 2's and PyTorch's do): the result is
written into it and ``out`` is returned. For NumPy input ``out`` is a NumPy
array of the result's shape; one of the computing precision (complex64 or
complex128, float32 or float64 for irfft), C-contiguous and writable is
written in place with no allocation, any other is filled from the result with
``same_kind`` casting. For a Tensor ``out`` is a Tensor of the result's shape
and x's dtype (or a writable array of that layout, which is shared). The N-D
forms write their last pass into ``out``.

:func:`fftfreq`, :func:`rfftfreq`, :func:`fftshift` and :func:`ifftshift` are
index helpers that delegate to numpy.fft and return NumPy arrays.

The transforms themselves are ``torsh_backend._core.fft``, which takes and
returns tensors in the (re, im) layout only.
"""

from __future__ import annotations

import operator
from typing import Any, Literal, Optional, Sequence, Union, overload

import numpy as np
import numpy.typing as npt

from . import _core
from ._core import Tensor
from ._errors import TorshError

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft",
    "fftn", "ifftn", "rfftn", "irfftn",
    "fft2", "ifft2", "rfft2", "irfft2",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

NormName = Optional[Literal["backward", "ortho", "forward"]]
SizeSeq = Optional[Sequence[Optional[int]]]
AxesSeq = Optional[Sequence[int]]
ComplexArray = npt.NDArray[np.complexfloating[Any, Any]]
RealArray = npt.NDArray[np.floating[Any]]

_c = _core.fft

# The transforms that take real input, and those that give a real result.
_REAL_IN = frozenset({"rfft", "ihfft", "rfftn", "rfft2"})
_REAL_OUT = frozenset({"irfft", "hfft", "irfftn", "irfft2"})


# -- NumPy input and output ----------------------------------------------------

def _compute_dtype(dt: np.dtype[Any], op: str) -> type[np.floating[Any]]:
    """The real dtype a transform of `dt` computes in, by NumPy 2's rule."""
    if dt.kind in "biu":
        return np.float64
    if dt.kind == "f":
        size = dt.itemsize
    elif dt.kind == "c":
        size = dt.itemsize // 2
    else:
        size = 0
    if 0 < size <= 4:
        return np.float32
    if size == 8:
        return np.float64
    raise TorshError(f"FFTs compute in float32 or float64; x is {dt}", code="DTypeMismatch",
                     message=f"FFTs compute in float32 or float64; x is {dt}", op=op, dtypes=[str(dt)],
                     suggestions=["Cast x to float64 / complex128 (or float32 / complex64) first"])


def _check_not_scalar(a: np.ndarray[Any, Any], op: str) -> None:
    if a.ndim == 0:
        msg = "x is a scalar; a transform needs at least one axis"
        raise TorshError(msg, code="ShapeMismatch", message=msg, op=op, shapes=["[]"])


def _complex_in(a: np.ndarray[Any, Any], op: str) -> tuple[np.ndarray[Any, Any], type[np.floating[Any]]]:
    """`a` as complex values in the (re, im) layout: a view of a contiguous complex array."""
    f = _compute_dtype(a.dtype, op)  # before the scalar check: fft("abc") is a dtype error
    _check_not_scalar(a, op)
    if a.dtype.kind == "c":
        c = np.ascontiguousarray(a, dtype=np.complex64 if f is np.float32 else np.complex128)
        return c.view(f).reshape(a.shape + (2,)), f
    z = np.zeros(a.shape + (2,), f)
    z[..., 0] = a
    return z, f


def _real_in(a: np.ndarray[Any, Any], op: str) -> tuple[np.ndarray[Any, Any], type[np.floating[Any]]]:
    if a.dtype.kind == "c":
        msg = f"{op} takes real input; x is {a.dtype}"
        other = "ifft" if op == "ihfft" else op[1:]
        raise TorshError(msg, code="DTypeMismatch", message=msg, op=op, dtypes=[str(a.dtype)],
                         suggestions=[f"Use {other} for complex input, or pass x.real"])
    f = _compute_dtype(a.dtype, op)
    _check_not_scalar(a, op)
    return a.astype(f, copy=False), f


def _complex_out(t: Tensor) -> ComplexArray:
    r = np.ascontiguousarray(t.numpy())
    c: ComplexArray = r.view(np.complex64 if r.dtype == np.float32 else np.complex128)
    return c[..., 0]


def _real_out(t: Tensor, src: np.dtype[Any], passes: int = 1) -> RealArray:
    # NumPy's irfft of a float16 array gives float16; with more axes the ifft passes
    # before it make complex64 of it, and the result is float32.
    r = t.numpy()
    return r.astype(np.float16) if src == np.float16 and passes == 1 else r


def _cook_s(dims: Sequence[int], s: SizeSeq, axes: AxesSeq, c2r: bool) -> Optional[list[int]]:
    """s with NumPy 2's placeholders resolved: -1 is the input's length along the axis; None
    (deprecated in NumPy) the 1-D function's default length."""
    if s is None:
        return None
    sizes = list(s)
    if all(v is not None and v != -1 for v in sizes):
        return sizes  # type: ignore[return-value]
    ax = list(range(-len(sizes), 0)) if axes is None else [operator.index(a) for a in axes]
    if len(ax) != len(sizes):
        return [-1 if v is None else v for v in sizes]  # the op reports the mismatch
    nd, out = len(dims), []
    for i, (v, a) in enumerate(zip(sizes, ax)):
        if (v is None or v == -1) and -nd <= a < nd:
            m = dims[a]
            v = 2 * (m - 1) if v is None and c2r and i == len(sizes) - 1 else m
        out.append(-1 if v is None else v)  # an out-of-range axis: the op reports it
    return out


def _value_dims(x: Union[Tensor, np.ndarray[Any, Any]], complex_in: bool) -> tuple[int, ...]:
    shape = tuple(x.shape)
    return shape[:-1] if complex_in and isinstance(x, Tensor) else shape


def _one_axis(op: str, x: Any, n: Optional[int], axis: int, norm: NormName, out: Any = None) -> Any:
    f = getattr(_c, op)
    if isinstance(x, Tensor):
        return _tensor_into(op, lambda o: f(x, n, axis, norm, out=o), out)
    a = np.asarray(x)
    v, _ = _real_in(a, op) if op in _REAL_IN else _complex_in(a, op)
    real_result = op in _REAL_OUT
    if out is not None:
        return _into(op, lambda o=None: f(v, n, axis, norm, out=o), v, out, real_result)
    t = f(v, n, axis, norm)
    return _real_out(t, a.dtype) if real_result else _complex_out(t)


def _many_axes(op: str, x: Any, s: SizeSeq, axes: AxesSeq, norm: NormName, out: Any = None) -> Any:
    f = getattr(_c, op)
    real_in, c2r = op in _REAL_IN, op in _REAL_OUT
    if isinstance(x, Tensor):
        cooked_t = _cook_s(_value_dims(x, not real_in), s, axes, c2r)
        return _tensor_into(op, lambda o: f(x, cooked_t, axes, norm, out=o), out)
    a = np.asarray(x)
    v, _ = _real_in(a, op) if real_in else _complex_in(a, op)
    cooked = _cook_s(a.shape, s, axes, c2r)
    if out is not None:
        return _into(op, lambda o=None: f(v, cooked, axes, norm, out=o), v, out, c2r)
    t = f(v, cooked, axes, norm)
    if not c2r:
        return _complex_out(t)
    passes = len(axes) if axes is not None else len(s) if s is not None else a.ndim
    return _real_out(t, a.dtype, passes)


def _tensor_into(op: str, run: Any, out: Any) -> Any:
    """A Tensor's transform into out: a Tensor, or an array in the (re, im) layout; a complex
    NumPy array is taken as that layout (a view, so it must be C-contiguous)."""
    if isinstance(out, np.ndarray) and out.dtype.kind == "c":
        if not out.flags.c_contiguous:
            msg = "out is a strided complex array; a Tensor's transform writes a C-contiguous one"
            raise TorshError(msg, code="InvalidArgument", message=msg, op=op,
                             suggestions=["Pass numpy.empty(shape, dtype) or a Tensor"])
        run(out.view(out.real.dtype).reshape(out.shape + (2,)))
        return out
    return run(out)


def _into(op: str, run: Any, v: np.ndarray[Any, Any], out: Any, real_result: bool) -> Any:
    """numpy.fft's out=: the result written into the NumPy array `out`, which is returned.
    An out of the computing precision, C-contiguous and writable, is written in place
    with no copy; any other is filled from the result as NumPy's ufuncs fill theirs
    (same_kind casting). `run(o)` computes into o (the (re, im) layout), or returns a
    new tensor for o = None."""
    if not isinstance(out, np.ndarray):
        msg = f"out is a {type(out).__name__}; for NumPy input it must be a NumPy array"
        raise TorshError(msg, code="InvalidArgument", message=msg, op=op,
                         suggestions=["Pass a NumPy array of the result's shape, or None"])
    want = v.dtype if real_result else np.dtype(np.complex64 if v.dtype == np.float32 else np.complex128)
    complex_in = op not in _REAL_IN
    if out.dtype == want and out.flags.c_contiguous and out.flags.writeable and out.ndim == v.ndim - complex_in:
        try:
            run(out if real_result else out.view(v.dtype).reshape(out.shape + (2,)))
            return out
        except TorshError as e:
            if e.code != "ShapeMismatch":
                raise
            # Reported below in NumPy's shapes rather than the (re, im) layout's.
    t = run()
    r = t.numpy() if real_result else _complex_out(t)
    if out.shape != r.shape:
        msg = f"out is {list(out.shape)} but the result is {list(r.shape)}"
        raise TorshError(msg, code="ShapeMismatch", message=msg, op=op, shapes=[str(list(out.shape))],
                         suggestions=[f"Allocate out with shape {r.shape}"])
    np.copyto(out, r, casting="same_kind")
    return out


# -- One axis ------------------------------------------------------------------

@overload
def fft(x: Tensor, n: Optional[int] = None, axis: int = -1, norm: NormName = None,
        out: Optional[Tensor] = None) -> Tensor: ...
@overload
def fft(x: npt.ArrayLike, n: Optional[int] = None, axis: int = -1, norm: NormName = None,
        out: Optional[npt.NDArray[Any]] = None) -> ComplexArray: ...
def fft(x: Any, n: Optional[int] = None, axis: int = -1, norm: NormName = None, out: Any = None) -> Any:
    """The 1-D discrete Fourier transform along `axis` (numpy.fft.fft).

    x is zero-padded or truncated to length n (default: its length) first. A
    NumPy array gives a NumPy complex array; a Tensor ([..., 2], (re, im)) a Tensor.
    """
    return _one_axis("fft", x, n, axis, norm, out)


@overload
def ifft(x: Tensor, n: Optional[int] = None, axis: int = -1, norm: NormName = None,
        out: Optional[Tensor] = None) -> Tensor: ...
@overload
def ifft(x: npt.ArrayLike, n: Optional[int] = None, axis: int = -1, norm: NormName = None,
        out: Optional[npt.NDArray[Any]] = None) -> ComplexArray: ...
def ifft(x: Any, n: Optional[int] = None, axis: int = -1, norm: NormName = None, out: Any = None) -> Any:
    """The inverse 1-D discrete Fourier transform along `axis` (numpy.fft.ifft)."""
    return _one_axis("ifft", x, n, axis, norm, out)


@overload
def rfft(x: Tensor, n: Optional[int] = None, axis: int = -1, norm: NormName = None,
        out: Optional[Tensor] = None) -> Tensor: ...
@overload
def rfft(x: npt.ArrayLike, n: Optional[int] = None, axis: int = -1, norm: NormName = None,
        out: Optional[npt.NDArray[Any]] = None) -> ComplexArray: ...
def rfft(x: Any, n: Optional[int] = None, axis: int = -1, norm: NormName = None, out: Any = None) -> Any:
    """The 1-D DFT of real x along `axis`: its n // 2 + 1 non-negative frequencies (numpy.fft.rfft).

    Complex NumPy input raises TorshError (as NumPy 2 refuses it). A real
    Tensor gives a complex Tensor ([..., 2]).
    """
    return _one_axis("rfft", x, n, axis, norm, out)


@overload
def irfft(x: Tensor, n: Optional[int] = None, axis: int = -1, norm: NormName = None,
        out: Optional[Tensor] = None) -> Tensor: ...
@overload
def irfft(x: npt.ArrayLike, n: Optional[int] = None, axis: int = -1, norm: NormName = None,
        out: Optional[npt.NDArray[Any]] = None) -> RealArray: ...
def irfft(x: Any, n: Optional[int] = None, axis: int = -1, norm: NormName = None, out: Any = None) -> Any:
    """The inverse of rfft (numpy.fft.irfft): the real signal of length n from its
    non-negative frequencies (default n: 2 * (m - 1) for m of them)."""
    return _one_axis("irfft", x, n, axis, norm, out)


@overload
def hfft(x: Tensor, n: Optional[int] = None, axis: int = -1, norm: NormName = None,
        out: Optional[Tensor] = None) -> Tensor: ...
@overload
def hfft(x: npt.ArrayLike, n: Optional[int] = None, axis: int = -1, norm: NormName = None,
        out: Optional[npt.NDArray[Any]] = None) -> RealArray: ...
def hfft(x: Any, n: Optional[int] = None, axis: int = -1, norm: NormName = None, out: Any = None) -> Any:
    """The real spectrum of a signal with Hermitian symmetry from its first half (numpy.fft.hfft).

    x holds the signal's first m values (complex); the result is real, of length n
    (default 2 * (m - 1)): irfft of conj(x) with the norm's direction swapped.
    """
    return _one_axis("hfft", x, n, axis, norm, out)


@overload
def ihfft(x: Tensor, n: Optional[int] = None, axis: int = -1, norm: NormName = None,
        out: Optional[Tensor] = None) -> Tensor: ...
@overload
def ihfft(x: npt.ArrayLike, n: Optional[int] = None, axis: int = -1, norm: NormName = None,
        out: Optional[npt.NDArray[Any]] = None) -> ComplexArray: ...
def ihfft(x: Any, n: Optional[int] = None, axis: int = -1, norm: NormName = None, out: Any = None) -> Any:
    """The inverse of hfft (numpy.fft.ihfft): real x -> the n // 2 + 1 values of the Hermitian
    signal's first half, conj(rfft(x)) with the norm's direction swapped. Complex input
    raises TorshError, as for rfft."""
    return _one_axis("ihfft", x, n, axis, norm, out)


# -- N-D -----------------------------------------------------------------------

@overload
def fftn(x: Tensor, s: SizeSeq = None, axes: AxesSeq = None, norm: NormName = None,
        out: Optional[Tensor] = None) -> Tensor: ...
@overload
def fftn(x: npt.ArrayLike, s: SizeSeq = None, axes: AxesSeq = None, norm: NormName = None,
        out: Optional[npt.NDArray[Any]] = None) -> ComplexArray: ...
def fftn(x: Any, s: SizeSeq = None, axes: AxesSeq = None, norm: NormName = None, out: Any = None) -> Any:
    """The N-D DFT over `axes` with lengths s (numpy.fft.fftn).

    Default axes: the last len(s) when s is given (NumPy's deprecated reading,
    without its warning), else all of them.
    """
    return _many_axes("fftn", x, s, axes, norm, out)


@overload
def ifftn(x: Tensor, s: SizeSeq = None, axes: AxesSeq = None, norm: NormName = None,
        out: Optional[Tensor] = None) -> Tensor: ...
@overload
def ifftn(x: npt.ArrayLike, s: SizeSeq = None, axes: AxesSeq = None, norm: NormName = None,
        out: Optional[npt.NDArray[Any]] = None) -> ComplexArray: ...
def ifftn(x: Any, s: SizeSeq = None, axes: AxesSeq = None, norm: NormName = None, out: Any = None) -> Any:
    """The inverse N-D DFT (numpy.fft.ifftn)."""
    return _many_axes("ifftn", x, s, axes, norm, out)


@overload
def rfftn(x: Tensor, s: SizeSeq = None, axes: AxesSeq = None, norm: NormName = None,
        out: Optional[Tensor] = None) -> Tensor: ...
@overload
def rfftn(x: npt.ArrayLike, s: SizeSeq = None, axes: AxesSeq = None, norm: NormName = None,
        out: Optional[npt.NDArray[Any]] = None) -> ComplexArray: ...
def rfftn(x: Any, s: SizeSeq = None, axes: AxesSeq = None, norm: NormName = None, out: Any = None) -> Any:
    """The N-D DFT of real x (numpy.fft.rfftn): rfft along the last of `axes`, fft along the others."""
    return _many_axes("rfftn", x, s, axes, norm, out)


@overload
def irfftn(x: Tensor, s: SizeSeq = None, axes: AxesSeq = None, norm: NormName = None,
        out: Optional[Tensor] = None) -> Tensor: ...
@overload
def irfftn(x: npt.ArrayLike, s: SizeSeq = None, axes: AxesSeq = None, norm: NormName = None,
        out: Optional[npt.NDArray[Any]] = None) -> RealArray: ...
def irfftn(x: Any, s: SizeSeq = None, axes: AxesSeq = None, norm: NormName = None, out: Any = None) -> Any:
    """The inverse of rfftn (numpy.fft.irfftn): ifft along all but the last of `axes`, then irfft
    along it (default length 2 * (m - 1) there)."""
    return _many_axes("irfftn", x, s, axes, norm, out)


# -- 2-D -----------------------------------------------------------------------

_LAST2 = (-2, -1)


@overload
def fft2(x: Tensor, s: SizeSeq = None, axes: AxesSeq = _LAST2, norm: NormName = None,
        out: Optional[Tensor] = None) -> Tensor: ...
@overload
def fft2(x: npt.ArrayLike, s: SizeSeq = None, axes: AxesSeq = _LAST2, norm: NormName = None,
        out: Optional[npt.NDArray[Any]] = None) -> ComplexArray: ...
def fft2(x: Any, s: SizeSeq = None, axes: AxesSeq = _LAST2, norm: NormName = None, out: Any = None) -> Any:
    """fftn over axes (-2, -1) by default (numpy.fft.fft2); axes=None means all of them."""
    return _many_axes("fft2", x, s, axes, norm, out)


@overload
def ifft2(x: Tensor, s: SizeSeq = None, axes: AxesSeq = _LAST2, norm: NormName = None,
        out: Optional[Tensor] = None) -> Tensor: ...
@overload
def ifft2(x: npt.ArrayLike, s: SizeSeq = None, axes: AxesSeq = _LAST2, norm: NormName = None,
        out: Optional[npt.NDArray[Any]] = None) -> ComplexArray: ...
def ifft2(x: Any, s: SizeSeq = None, axes: AxesSeq = _LAST2, norm: NormName = None, out: Any = None) -> Any:
    """ifftn over axes (-2, -1) by default (numpy.fft.ifft2)."""
    return _many_axes("ifft2", x, s, axes, norm, out)


@overload
def rfft2(x: Tensor, s: SizeSeq = None, axes: AxesSeq = _LAST2, norm: NormName = None,
        out: Optional[Tensor] = None) -> Tensor: ...
@overload
def rfft2(x: npt.ArrayLike, s: SizeSeq = None, axes: AxesSeq = _LAST2, norm: NormName = None,
        out: Optional[npt.NDArray[Any]] = None) -> ComplexArray: ...
def rfft2(x: Any, s: SizeSeq = None, axes: AxesSeq = _LAST2, norm: NormName = None, out: Any = None) -> Any:
    """rfftn over axes (-2, -1) by default (numpy.fft.rfft2)."""
    return _many_axes("rfft2", x, s, axes, norm, out)


@overload
def irfft2(x: Tensor, s: SizeSeq = None, axes: AxesSeq = _LAST2, norm: NormName = None,
        out: Optional[Tensor] = None) -> Tensor: ...
@overload
def irfft2(x: npt.ArrayLike, s: SizeSeq = None, axes: AxesSeq = _LAST2, norm: NormName = None,
        out: Optional[npt.NDArray[Any]] = None) -> RealArray: ...
def irfft2(x: Any, s: SizeSeq = None, axes: AxesSeq = _LAST2, norm: NormName = None, out: Any = None) -> Any:
    """irfftn over axes (-2, -1) by default (numpy.fft.irfft2)."""
    return _many_axes("irfft2", x, s, axes, norm, out)


# -- Index helpers: NumPy's ----------------------------------------------------

def fftfreq(n: int, d: float = 1.0) -> RealArray:
    """The sample frequencies of an n-point fft with sample spacing d: numpy.fft.fftfreq (a NumPy array)."""
    return np.fft.fftfreq(n, d)


def rfftfreq(n: int, d: float = 1.0) -> RealArray:
    """The sample frequencies of an n-point rfft with sample spacing d: numpy.fft.rfftfreq (a NumPy array)."""
    return np.fft.rfftfreq(n, d)


def fftshift(x: npt.ArrayLike, axes: Union[int, Sequence[int], None] = None) -> npt.NDArray[Any]:
    """The zero frequency moved to the centre: numpy.fft.fftshift (a NumPy array).

    A Tensor is read with numpy.asarray, so with axes=None the (re, im) axis of
    a complex Tensor would be shifted too: name the axes.
    """
    return np.fft.fftshift(np.asarray(x), axes)


def ifftshift(x: npt.ArrayLike, axes: Union[int, Sequence[int], None] = None) -> npt.NDArray[Any]:
    """The inverse of fftshift: numpy.fft.ifftshift (a NumPy array); see fftshift about Tensors."""
    return np.fft.ifftshift(np.asarray(x), axes)
