"""
torsh-backend: one API over the compute devices of a machine (CPU, OpenCL, CUDA, ...).
"""

from collections.abc import Mapping, Sequence
import enum
from typing import Any, overload

import numpy.typing

from torsh_backend._core import fft as fft


class DType(enum.Enum):
    """
    Element types. Functions taking a dtype also accept 'f32', 'float32', numpy.float32, ...
    """

    f32 = 0

    f64 = 1

    f16 = 2

    bf16 = 3

    i8 = 4

    u8 = 5

    i32 = 6

    i64 = 7

    bool = 8

def dtype(d: DType | numpy.typing.DTypeLike) -> DType:
    """
    The DType of any spelling: DType.f32, 'f32', 'float32', numpy.float32, numpy.dtype('f4'), torch.float32.
    """

def device(d: Backend | str | None) -> Backend:
    """
    The Backend of a device spelling: None (the CPU), 'cpu', 'opencl', 'opencl:1', 'auto' or a Backend.
    """

class DeviceInfo:
    """Facts about one device, as its backend reports them."""

    @property
    def index(self) -> int:
        """Device index within its backend."""

    @property
    def name(self) -> str: ...

    @property
    def vendor(self) -> str: ...

    @property
    def kind(self) -> str:
        """'cpu', 'gpu' or 'accelerator'."""

    @property
    def software(self) -> bool:
        """
        True for a device emulated on the host CPU (PoCL, lavapipe); never auto-selected over the CPU backend.
        """

    @property
    def total_memory(self) -> int:
        """Bytes."""

    @property
    def free_memory(self) -> int | None:
        """Bytes, or None when the driver cannot tell."""

    @property
    def compute_units(self) -> int: ...

    @property
    def compute_capability(self) -> str: ...

    @property
    def unified_memory(self) -> bool: ...

    @property
    def peak_gflops(self) -> float:
        """Estimated f32 FMA peak."""

    @property
    def driver_version(self) -> str: ...

    @property
    def features(self) -> list[str]: ...

    @property
    def architecture(self) -> str:
        """
        CPU: cpuid family and model, and the microarchitecture where known ('family 25 model 17 (Zen 4)').
        """

    @property
    def kernel_variants(self) -> list[tuple[str, str]]:
        """
        (family, variant) pairs: CPU: the instruction set and tile each kernel family runs ('gemm f32', 'avx512-14x32').
        """

    def __repr__(self) -> str: ...

class Capabilities:
    """What a device can do beyond f32 compute."""

    @property
    def f16(self) -> bool: ...

    @property
    def bf16(self) -> bool: ...

    @property
    def f64(self) -> bool: ...

    @property
    def int8(self) -> bool: ...

    @property
    def async_copy(self) -> bool: ...

    @property
    def event_timing(self) -> bool: ...

    @property
    def runtime_kernels(self) -> bool: ...

    @property
    def unified_memory(self) -> bool: ...

    @property
    def max_allocation(self) -> int: ...

    @property
    def max_work_group(self) -> int: ...

    @property
    def kernel_dialects(self) -> list[str]:
        """
        The dialects compile_kernel accepts on this device: 'torsh', 'opencl', 'cuda', 'wgsl'.
        """

class MemoryStats:
    """Live and peak memory of one backend handle."""

    @property
    def live_buffers(self) -> int: ...

    @property
    def live_bytes(self) -> int: ...

    @property
    def peak_bytes(self) -> int: ...

    @property
    def total_allocations(self) -> int: ...

class BackendStatus:
    """One backend type: available or not, and why."""

    @property
    def type(self) -> str: ...

    @property
    def available(self) -> bool: ...

    @property
    def reason(self) -> str:
        """Why it is unavailable, or notes when it is available."""

    @property
    def source(self) -> str:
        """'built-in' or the plugin's path."""

    @property
    def version(self) -> str: ...

    @property
    def devices(self) -> list[DeviceInfo]: ...

    def __repr__(self) -> str: ...

class Backend:
    """
    One device of one backend type. Handles are cheap and share state; create them with torsh_backend.create().
    """

    @property
    def type(self) -> str:
        """The backend key: 'cpu', 'opencl', 'cuda', ..."""

    @property
    def device(self) -> str:
        """'opencl:0' and so on."""

    @property
    def index(self) -> int: ...

    @property
    def name(self) -> str:
        """'OpenCL:0 (pthread-...)' and so on."""

    @property
    def info(self) -> DeviceInfo:
        """DeviceInfo of this device."""

    @property
    def capabilities(self) -> Capabilities: ...

    def memory_stats(self) -> MemoryStats:
        """Live and peak bytes allocated through this backend."""

    def supports(self, op: str, dtype: DType | numpy.typing.DTypeLike = 'f32') -> bool:
        """
        Whether the device runs an op family ('matmul', 'softmax', ...) natively for a dtype; ops it lacks fall back to the CPU with counted copies.
        """

    def synchronize(self) -> None:
        """Waits until all work queued on the device has finished."""

    def __eq__(self, arg: object, /) -> bool: ...

    def __hash__(self) -> int: ...

    def __repr__(self) -> str: ...

def available() -> list[str]:
    """
    Backend keys with at least one usable device, in auto-selection order (the CPU is always there).
    """

def create(name: str = 'auto', index: int | None = None) -> Backend:
    """
    Creates a backend: 'auto' (the best device: CUDA > ROCm > Metal > OpenCL GPU > WebGPU > CPU, never a software device over the CPU), 'cpu', 'opencl', 'cuda', ... or 'opencl:1'; create('opencl', 1) is create('opencl:1'), and an index that contradicts the name's is an error. Raises TorshError with the reason when the backend is unavailable.
    """

def statuses() -> list[BackendStatus]:
    """
    Every backend type with its availability, the reason when unavailable, where it was loaded from and its devices.
    """

def explain_selection(min_free_bytes: int = 0) -> tuple[str, list[str]]:
    """
    The device auto-selection picks, and one line of reasoning per backend considered.
    """

def info() -> str:
    """The backend summary printed by `torsh info`, as a string."""

def plugin_search_path() -> list[str]:
    """
    Directories searched for backend plugins: TORSH_BACKEND_PATH, then the folder of libtorsh.
    """

def fallback_stats() -> dict[str, int]:
    """
    How many ops fell back to the CPU because their device lacks them, and the copies that cost.
    """

def reset_fallback_stats() -> None: ...

class Tensor:
    """
    A typed, shaped, strided view of device memory. Views share memory; ops return new tensors. Create tensors with zeros/empty/full/rand/randn, asarray, or from_dlpack.
    """

    @property
    def shape(self) -> tuple[int, ...]:
        """Dimensions, as a tuple."""

    @property
    def strides(self) -> tuple[int, ...]:
        """
        Strides in elements (NumPy's .strides counts bytes: multiply by itemsize).
        """

    @property
    def dtype(self) -> DType: ...

    @property
    def device(self) -> str:
        """'cpu:0', 'opencl:0', ..."""

    @property
    def backend(self) -> Backend:
        """The Backend of the device holding the data."""

    @property
    def ndim(self) -> int: ...

    @property
    def size(self) -> int:
        """Number of elements."""

    @property
    def nbytes(self) -> int: ...

    @property
    def itemsize(self) -> int: ...

    @property
    def offset(self) -> int:
        """Offset of the first element in its buffer, in elements."""

    @property
    def is_contiguous(self) -> bool: ...

    def __len__(self) -> int: ...

    def __repr__(self) -> str: ...

    def __str__(self) -> str: ...

    def reshape(self, *shape: int | Sequence[int]) -> Tensor:
        """
        A view with another shape (one dimension may be -1); needs a contiguous tensor.
        """

    def transpose(self, *axes: int | Sequence[int]) -> Tensor:
        """NumPy's transpose: axes reversed, or permuted as given. A view."""

    def permute(self, *axes: int | Sequence[int]) -> Tensor:
        """A view with the axes in the given order."""

    def swapaxes(self, axis1: int, axis2: int) -> Tensor:
        """A view with two axes exchanged."""

    @property
    def T(self) -> Tensor:
        """All axes reversed (a view)."""

    @property
    def mT(self) -> Tensor:
        """The last two axes swapped (a view)."""

    def unsqueeze(self, axis: int) -> Tensor:
        """A view with a new axis of length 1."""

    def expand_dims(self, axis: int) -> Tensor:
        """Same as unsqueeze (NumPy's name)."""

    def broadcast_to(self, shape: int | Sequence[int]) -> Tensor:
        """A broadcast view (stride 0 on the new dimensions)."""

    def __getitem__(self, key: Any, /) -> Tensor:
        """Basic indexing: ints, slices (any step), None and Ellipsis give views."""

    def __setitem__(self, key: Any, value: Tensor | numpy.typing.ArrayLike, /) -> None:
        """
        Copies a tensor, array or scalar (broadcast, cast) into the indexed view.
        """

    def to(self, device: Backend | str) -> Tensor:
        """
        A copy on another device ('cpu', 'opencl', a Backend); the tensor itself when already there.
        """

    def cpu(self) -> Tensor:
        """Same as to('cpu')."""

    def contiguous(self) -> Tensor:
        """A row-major copy, or the tensor itself when already row-major."""

    def clone(self) -> Tensor:
        """A row-major copy on the same device."""

    def cast(self, dtype: DType | numpy.typing.DTypeLike) -> Tensor:
        """A copy converted to another dtype on the same device."""

    def astype(self, dtype: DType | numpy.typing.DTypeLike) -> Tensor:
        """Same as cast (NumPy's name)."""

    def copy_(self, src: Tensor | numpy.typing.ArrayLike) -> Tensor:
        """Copies src into this tensor in place (any device, broadcast, cast)."""

    def fill_(self, value: Tensor | numpy.typing.ArrayLike) -> Tensor:
        """Fills the tensor with a scalar in place."""

    def numpy(self) -> numpy.typing.NDArray[Any]:
        """
        A NumPy array. A CPU tensor is shared without a copy (writes are seen by both); a device tensor is copied to the host (explicitly, by this call).
        """

    def __array__(self, dtype: numpy.typing.DTypeLike | None = None, copy: bool | None = None) -> numpy.typing.NDArray[Any]: ...

    def tolist(self) -> Any:
        """Nested Python lists (a host copy)."""

    def item(self) -> int | float | bool:
        """The single element as a Python scalar."""

    def __float__(self) -> float: ...

    def __int__(self) -> int: ...

    def __bool__(self) -> bool: ...

    def __add__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __radd__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __iadd__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __sub__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __rsub__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __isub__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __mul__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __rmul__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __imul__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __truediv__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __rtruediv__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __itruediv__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __pow__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __rpow__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __ipow__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __matmul__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __rmatmul__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __neg__(self) -> Tensor: ...

    def __abs__(self) -> Tensor: ...

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None, dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """
        Exports the tensor through DLPack. A CPU tensor is shared without a copy; a device tensor is copied only when the consumer asks for the host (dl_device=(1, 0)), and raises TorshError otherwise.
        """

    def __dlpack_device__(self) -> tuple[int, int]:
        """The DLPack (device_type, device_id) of the tensor's memory."""

def empty(shape: int | Sequence[int], dtype: DType | numpy.typing.DTypeLike = 'f32', device: Backend | str | None = None) -> Tensor:
    """An uninitialised tensor."""

def zeros(shape: int | Sequence[int], dtype: DType | numpy.typing.DTypeLike = 'f32', device: Backend | str | None = None) -> Tensor:
    """A tensor of zeros."""

def full(shape: int | Sequence[int], fill_value: Tensor | numpy.typing.ArrayLike, dtype: DType | numpy.typing.DTypeLike = 'f32', device: Backend | str | None = None) -> Tensor:
    """A tensor filled with one value."""

def from_dlpack(x: Any, *, device: Backend | str | None = None, copy: bool | None = None) -> Tensor:
    """
    A tensor sharing the memory of a DLPack producer (NumPy array, PyTorch CPU tensor, ...): writes through either side are seen by the other. copy=None copies only when needed (a read-only producer, another device requested), copy=False never copies, copy=True always does.
    """

def add(a: Tensor | numpy.typing.ArrayLike, b: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """a + b with NumPy broadcasting; both operands share a dtype."""

def subtract(a: Tensor | numpy.typing.ArrayLike, b: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """a - b with NumPy broadcasting."""

def sub(a: Tensor | numpy.typing.ArrayLike, b: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """a - b with NumPy broadcasting."""

def multiply(a: Tensor | numpy.typing.ArrayLike, b: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """a * b with NumPy broadcasting."""

def mul(a: Tensor | numpy.typing.ArrayLike, b: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """a * b with NumPy broadcasting."""

def divide(a: Tensor | numpy.typing.ArrayLike, b: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """a / b with NumPy broadcasting."""

def div(a: Tensor | numpy.typing.ArrayLike, b: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """a / b with NumPy broadcasting."""

def maximum(a: Tensor | numpy.typing.ArrayLike, b: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """Elementwise maximum with NumPy broadcasting."""

def minimum(a: Tensor | numpy.typing.ArrayLike, b: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """Elementwise minimum with NumPy broadcasting."""

def power(a: Tensor | numpy.typing.ArrayLike, b: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """a ** b with NumPy broadcasting."""

def pow(a: Tensor | numpy.typing.ArrayLike, b: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """a ** b with NumPy broadcasting."""

def negative(x: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """-x."""

def neg(x: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """-x."""

def abs(x: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """|x|."""

def exp(x: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """e ** x."""

def log(x: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """Natural logarithm."""

def sqrt(x: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """Square root."""

def rsqrt(x: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """1 / sqrt(x)."""

def tanh(x: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """Hyperbolic tangent."""

def sigmoid(x: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """1 / (1 + exp(-x))."""

def relu(x: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """max(x, 0)."""

def silu(x: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """x * sigmoid(x)."""

def gelu(x: Tensor | numpy.typing.ArrayLike, approximate: str = 'none') -> Tensor:
    """
    GELU: x * Phi(x) with the erf, or the tanh approximation (approximate='tanh'), as in PyTorch.
    """

def matmul(a: Tensor | numpy.typing.ArrayLike, b: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """
    a @ b as in NumPy: [..., m, k] @ [..., k, n] with batch broadcasting; 1-D operands are promoted and the added axis removed.
    """

def gemm(a: Tensor | numpy.typing.ArrayLike, b: Tensor | numpy.typing.ArrayLike, *, alpha: float = 1.0, beta: float = 0.0, c: Tensor | numpy.typing.ArrayLike | None = None, trans_a: bool = False, trans_b: bool = False) -> Tensor:
    """
    alpha * op(a) @ op(b) + beta * c for 2-D or batched 3-D operands (op transposes when trans_a / trans_b); c may be omitted when beta == 0.
    """

def matmul_vec(w: Tensor | numpy.typing.ArrayLike, x: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """w [n, k] @ x [k] -> [n] (the matrix-vector product of LLM decoding)."""

def weighted_sum_rows(weights: Tensor | numpy.typing.ArrayLike, matrix: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """weights [m] . matrix [m, n] -> [n]."""

def softmax(x: Tensor | numpy.typing.ArrayLike, axis: int = -1) -> Tensor:
    """exp(x) / sum(exp(x)) along an axis, computed stably."""

def log_softmax(x: Tensor | numpy.typing.ArrayLike, axis: int = -1) -> Tensor:
    """log(softmax(x)) along an axis, computed stably."""

def sum(x: Tensor | numpy.typing.ArrayLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
    """Sum over axis (None: every axis)."""

def mean(x: Tensor | numpy.typing.ArrayLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
    """Mean over axis (None: every axis)."""

def max(x: Tensor | numpy.typing.ArrayLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
    """Maximum over axis (None: every axis)."""

def min(x: Tensor | numpy.typing.ArrayLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
    """Minimum over axis (None: every axis)."""

def amax(x: Tensor | numpy.typing.ArrayLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
    """Same as max."""

def amin(x: Tensor | numpy.typing.ArrayLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
    """Same as min."""

def var(x: Tensor | numpy.typing.ArrayLike, axis: int | Sequence[int] | None = None, ddof: int = 0, keepdims: bool = False) -> Tensor:
    """
    Variance over axis, dividing by n - ddof (NumPy's default ddof=0; PyTorch's unbiased var is ddof=1).
    """

def argmax(x: Tensor | numpy.typing.ArrayLike, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """
    Index of the maximum along axis (None: into the flattened tensor), as int64.
    """

def cast(x: Tensor | numpy.typing.ArrayLike, dtype: DType | numpy.typing.DTypeLike) -> Tensor:
    """
    A copy converted to dtype (f32, f16, bf16, i8, ...) on the same device.
    """

def contiguous(x: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """A row-major copy, or x itself when already row-major."""

def layer_norm(x: Tensor | numpy.typing.ArrayLike, weight: Tensor | numpy.typing.ArrayLike | None = None, bias: Tensor | numpy.typing.ArrayLike | None = None, eps: float = 1e-05) -> Tensor:
    """
    Normalises over the last dimension: (x - mean) / sqrt(var + eps) * weight + bias.
    """

def rms_norm(x: Tensor | numpy.typing.ArrayLike, weight: Tensor | numpy.typing.ArrayLike | None = None, eps: float = 1e-06) -> Tensor:
    """x / sqrt(mean(x**2) + eps) * weight over the last dimension."""

def batch_norm(x: Tensor | numpy.typing.ArrayLike, running_mean: Tensor | numpy.typing.ArrayLike | None = None, running_var: Tensor | numpy.typing.ArrayLike | None = None, weight: Tensor | numpy.typing.ArrayLike | None = None, bias: Tensor | numpy.typing.ArrayLike | None = None, training: bool = False, momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    """
    Per-channel normalisation of x [N, C, ...]. training=True normalises with the batch statistics and updates running_mean / running_var in place (NumPy arrays passed there are updated too: they are shared; read-only arrays and lists raise TorshError).
    """

def rope_cache(max_pos: int, rot_dim: int, base: float = 10000.0, device: Backend | str | None = None, freq_factors: Sequence[float] | None = None) -> tuple[Tensor, Tensor]:
    """
    (cos, sin) tables [max_pos, rot_dim / 2] for the frequencies base ** (-2i / rot_dim), each divided by freq_factors[i] when given (rot_dim / 2 factors > 0: Llama 3.1's rope_freqs).
    """

def rope(x: Tensor | numpy.typing.ArrayLike, cos: Tensor | numpy.typing.ArrayLike, sin: Tensor | numpy.typing.ArrayLike, style: str = 'neox', pos0: int = 0, rot_dim: int = 0) -> Tensor:
    """
    Rotary position embedding of x [batch, seq, heads, head_dim] at positions pos0...; rot_dim=0 rotates the whole head.
    """

def index_select(x: Tensor | numpy.typing.ArrayLike, axis: int, ids: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """
    x's entries at ids (int32 or int64, any shape, flattened) along axis: numpy.take(x, ids.ravel(), axis) and torch.index_select. An id outside [0, x.shape[axis]) raises TorshError.
    """

def embedding(table: Tensor | numpy.typing.ArrayLike, ids: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """
    Rows of table [V, D] (any dtype) at ids (int32 or int64, any shape): ids.shape + [D].
    """

def attention(q: Tensor | numpy.typing.ArrayLike, k: Tensor | numpy.typing.ArrayLike, v: Tensor | numpy.typing.ArrayLike, causal: bool = False, scale: float | None = None, align: str = 'top_left', window: int = 0, softcap: float = 0.0) -> Tensor:
    """
    Scaled dot-product attention: q [B, Hq, Sq, D], k/v [B, Hkv, Skv, D] (grouped heads when Hkv divides Hq); scale defaults to 1/sqrt(D). With causal=True and Sq != Skv, align='top_left' (the default, PyTorch's is_causal) lets query i see keys j <= i; align='bottom_right' puts the queries at the end of the keys (j <= i + Skv - Sq, a KV cache); a query that sees no key gets zeros. window > 0 (causal only): a sliding window, each query seeing only the last `window` keys of its causal range; softcap > 0: each scaled score s becomes softcap * tanh(s / softcap) before the softmax (Gemma 2).
    """

def conv2d(x: Tensor | numpy.typing.ArrayLike, weight: Tensor | numpy.typing.ArrayLike, bias: Tensor | numpy.typing.ArrayLike | None = None, *, stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1, groups: int = 1, algorithm: str = 'auto') -> Tensor:
    """
    2-D convolution (cross-correlation, as PyTorch) of x [N, C, H, W] with weight [K, C / groups, R, S]. algorithm: 'auto' (the backend chooses), 'gemm' (the direct sum), or 'winograd' (F(2x2, 3x3): f32, 3x3, stride 1, dilation 1; fewer multiply-adds, a few times the rounding error).
    """

def max_pool2d(x: Tensor | numpy.typing.ArrayLike, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None, padding: int | tuple[int, int] = 0) -> Tensor:
    """Max pooling of x [N, C, H, W]; stride defaults to kernel_size."""

def avg_pool2d(x: Tensor | numpy.typing.ArrayLike, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None, padding: int | tuple[int, int] = 0, count_include_pad: bool = True) -> Tensor:
    """
    Average pooling of x [N, C, H, W]; stride defaults to kernel_size; padding counts in the divisor unless count_include_pad=False.
    """

def adam_step(params: Sequence[Tensor | numpy.typing.ArrayLike], grads: Sequence[Tensor | numpy.typing.ArrayLike], exp_avg: Sequence[Tensor | numpy.typing.ArrayLike], exp_avg_sq: Sequence[Tensor | numpy.typing.ArrayLike], *, step: int, lr: float = 0.001, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-08, weight_decay: float = 0.0, adamw: bool = False, grad_scale: float = 1.0) -> None:
    """
    One fused Adam (adamw=True: AdamW) step over lists of tensors, in place; step is 1-based. grad_scale multiplies the gradients first (the inverse loss scale). NumPy arrays are updated in place (shared memory); read-only arrays and lists raise TorshError.
    """

def rand(shape: int | Sequence[int], *, seed: int | None = None, dtype: DType | numpy.typing.DTypeLike = 'f32', low: float = 0.0, high: float = 1.0, offset: int = 0, device: Backend | str | None = None) -> Tensor:
    """
    Uniform [low, high) from Philox4x32-10: the same seed gives the same numbers on every device and thread count. seed=None draws a fresh seed.
    """

def randn(shape: int | Sequence[int], *, seed: int | None = None, dtype: DType | numpy.typing.DTypeLike = 'f32', mean: float = 0.0, std: float = 1.0, offset: int = 0, device: Backend | str | None = None) -> Tensor:
    """
    Normal(mean, std) from Philox4x32-10, reproducible across devices. seed=None draws a fresh seed.
    """

def bernoulli(shape: int | Sequence[int], p: float = 0.5, *, seed: int | None = None, dtype: DType | numpy.typing.DTypeLike = 'f32', offset: int = 0, device: Backend | str | None = None) -> Tensor:
    """1 with probability p, else 0. seed=None draws a fresh seed."""

def quantize_linear(x: Tensor | numpy.typing.ArrayLike, scale: Tensor | numpy.typing.ArrayLike, zero_point: Tensor | numpy.typing.ArrayLike | None = None, *, axis: int = 1, dtype: DType | numpy.typing.DTypeLike | None = None) -> Tensor:
    """
    ONNX QuantizeLinear: saturate(round_half_even(x / scale) + zero_point) as uint8 or int8. scale (f32) and zero_point hold one value (per tensor) or x.shape[axis] values (per channel along axis, ONNX's default 1). The quantized dtype is the zero point's when it is a tensor or array, else dtype (default uint8); a zero point given as ints must fit it. +-inf saturate; NaN gives the zero point. Scales must be finite and > 0.
    """

def dequantize_linear(x: Tensor | numpy.typing.ArrayLike, scale: Tensor | numpy.typing.ArrayLike, zero_point: Tensor | numpy.typing.ArrayLike | None = None, *, axis: int = 1, dtype: DType | numpy.typing.DTypeLike = 'float32') -> Tensor:
    """
    ONNX DequantizeLinear: (x - zero_point) * scale, computed in f32, as dtype (float32, float16 or bfloat16). x is uint8 or int8; zero_point, when given, has x's dtype and scale's shape.
    """

class IntegerWeight:
    """
    An int8 weight b [k, n] (uint8 or int8) prepared once for repeated matmul_integer / qlinear_matmul products, as ONNX initializers are. It holds its own copy of b, so later writes to b do not reach it; the CPU keeps it packed in its tile layout after the first product instead of packing it on every call. Results equal those with the plain array.
    """

    def __init__(self, b: Tensor | numpy.typing.ArrayLike) -> None: ...

    @property
    def tensor(self) -> Tensor:
        """The weight's own copy of b."""

    def __repr__(self) -> str: ...

def matmul_integer(a: Tensor | numpy.typing.ArrayLike, b: IntegerWeight | Tensor | numpy.typing.ArrayLike, a_zero_point: Tensor | numpy.typing.ArrayLike | None = None, b_zero_point: Tensor | numpy.typing.ArrayLike | None = None) -> Tensor:
    """
    ONNX MatMulInteger: the int32 product of (a - a_zero_point) and (b - b_zero_point), a [..., m, k] and b [..., k, n] uint8 or int8 (batch dimensions broadcast), summed exactly, wrapping as int32. A zero point has its operand's dtype and holds one value, or m (a's, per row) / n (b's, per column) values. b may be an IntegerWeight (prepared once).
    """

def qlinear_matmul(a: Tensor | numpy.typing.ArrayLike, a_scale: Tensor | numpy.typing.ArrayLike, a_zero_point: Tensor | numpy.typing.ArrayLike, b: IntegerWeight | Tensor | numpy.typing.ArrayLike, b_scale: Tensor | numpy.typing.ArrayLike, b_zero_point: Tensor | numpy.typing.ArrayLike, y_scale: Tensor | numpy.typing.ArrayLike | None = None, y_zero_point: Tensor | numpy.typing.ArrayLike | None = None, *, dtype: DType | numpy.typing.DTypeLike | None = None) -> Tensor:
    """
    ONNX QLinearMatMul: the int32 sum s of matmul_integer, requantized as saturate(round_half_even(s * ((a_scale * b_scale) / y_scale)) + y_zero_point) in f32, as y_zero_point's dtype (uint8 or int8; for a zero point given as an int, dtype, default uint8). Scales are f32, finite and > 0: a_scale one value or m, b_scale one value or n, y_scale one value. Without y_scale and y_zero_point: the f32 product s * (a_scale * b_scale). b may be an IntegerWeight (prepared once).
    """

def conv_integer(x: Tensor | numpy.typing.ArrayLike, weight: Tensor | numpy.typing.ArrayLike, x_zero_point: Tensor | numpy.typing.ArrayLike | None = None, w_zero_point: Tensor | numpy.typing.ArrayLike | None = None, *, stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1, groups: int = 1) -> Tensor:
    """
    ONNX ConvInteger: the int32 convolution of (x - x_zero_point) by (weight - w_zero_point), x [N, C, H, W] and weight [K, C / groups, R, S] uint8 or int8. x_zero_point is one value (padding holds it); w_zero_point one value or one per output channel.
    """

def qlinear_conv(x: Tensor | numpy.typing.ArrayLike, x_scale: Tensor | numpy.typing.ArrayLike, x_zero_point: Tensor | numpy.typing.ArrayLike, weight: Tensor | numpy.typing.ArrayLike, w_scale: Tensor | numpy.typing.ArrayLike, w_zero_point: Tensor | numpy.typing.ArrayLike, y_scale: Tensor | numpy.typing.ArrayLike, y_zero_point: Tensor | numpy.typing.ArrayLike, bias: Tensor | numpy.typing.ArrayLike | None = None, *, stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1, groups: int = 1, dtype: DType | numpy.typing.DTypeLike | None = None) -> Tensor:
    """
    ONNX QLinearConv: the sums of conv_integer plus bias (int32, one per output channel), requantized as qlinear_matmul: x_scale one value, w_scale one value or one per output channel, y_scale one value; the output has y_zero_point's dtype (for an int zero point, dtype, default uint8).
    """

class CsrMatrix:
    """
    A CSR matrix in SciPy's layout (indptr, indices, data) on one device: indices sorted within each row, i32 or i64, values f32 or f64. Checked when made.
    """

    @staticmethod
    def from_parts(indptr: Tensor | numpy.typing.ArrayLike, indices: Tensor | numpy.typing.ArrayLike, data: Tensor | numpy.typing.ArrayLike, shape: object) -> CsrMatrix:
        """
        From the three arrays (any DLPack producer) and (rows, cols). The values are shared, not copied (a NumPy array's later writes show); indptr and indices are copied, so the checked structure cannot change.
        """

    @staticmethod
    def from_scipy(matrix: object) -> CsrMatrix:
        """
        From a scipy.sparse matrix or array (converted with tocsr(); a canonical CSR one's data is shared, not copied, and its indptr and indices copied). Unsorted or duplicate indices are refused: call sum_duplicates() first.
        """

    @staticmethod
    def from_dense(dense: Tensor | numpy.typing.ArrayLike, index_dtype: DType | numpy.typing.DTypeLike = 'int32') -> CsrMatrix:
        """The nonzeros of a 2-D float32 / float64 tensor."""

    @property
    def shape(self) -> tuple[int, int]: ...

    @property
    def nnz(self) -> int: ...

    @property
    def indptr(self) -> Tensor:
        """A copy (the structure is fixed)."""

    @property
    def indices(self) -> Tensor:
        """A copy (the structure is fixed)."""

    @property
    def data(self) -> Tensor: ...

    def to_dense(self) -> Tensor: ...

    def transpose(self) -> CsrMatrix:
        """The CSR matrix of the transpose."""

    def to_coo(self) -> CooMatrix: ...

    def to_scipy(self) -> object:
        """
        A scipy.sparse.csr_matrix over the same memory (CPU; indptr and indices read-only) or a host copy (other devices).
        """

    @overload
    def __matmul__(self, arg: CsrMatrix, /) -> Tensor: ...

    @overload
    def __matmul__(self, arg: Tensor | numpy.typing.ArrayLike, /) -> Tensor: ...

    def __repr__(self) -> str: ...

class CooMatrix:
    """
    A COO matrix: row, col, data in any order, duplicates summed by to_csr().
    """

    @staticmethod
    def from_parts(row: Tensor | numpy.typing.ArrayLike, col: Tensor | numpy.typing.ArrayLike, data: Tensor | numpy.typing.ArrayLike, shape: object) -> CooMatrix: ...

    @property
    def shape(self) -> tuple[int, int]: ...

    @property
    def nnz(self) -> int: ...

    @property
    def row(self) -> Tensor:
        """A copy."""

    @property
    def col(self) -> Tensor:
        """A copy."""

    @property
    def data(self) -> Tensor: ...

    def to_csr(self) -> CsrMatrix:
        """Sorted by (row, column), duplicates summed in entry order."""

    def to_dense(self) -> Tensor: ...

def spmm(a: CsrMatrix, x: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """
    a @ x for a CsrMatrix a: x [cols] gives [rows] (SpMV), x [cols, n] gives [rows, n]; also a @ x.
    """

def sparse_add_dense(a: CsrMatrix, d: Tensor | numpy.typing.ArrayLike) -> Tensor:
    """a + d for a dense d of a's shape: a dense tensor."""

class RnnTape:
    """
    What lstm_train / gru_train kept for rnn_backward: each layer's input and output, every step's gate activations (and LSTM cell states), the states and the weights. NumPy arguments were copied into it; torsh Tensors are kept by reference, so leave them unchanged until rnn_backward.
    """

def lstm_train(x: Tensor | numpy.typing.ArrayLike, weights: Sequence[Tensor | numpy.typing.ArrayLike], h0: Tensor | numpy.typing.ArrayLike | None = None, c0: Tensor | numpy.typing.ArrayLike | None = None, *, num_layers: int = 1, bidirectional: bool = False, batch_first: bool = False) -> tuple[Tensor, tuple[Tensor, Tensor], RnnTape]:
    """
    lstm's forward for training: returns (output, (h_n, c_n), tape); rnn_backward(tape, ...) gives the gradients.
    """

def gru_train(x: Tensor | numpy.typing.ArrayLike, weights: Sequence[Tensor | numpy.typing.ArrayLike], h0: Tensor | numpy.typing.ArrayLike | None = None, *, num_layers: int = 1, bidirectional: bool = False, batch_first: bool = False) -> tuple[Tensor, Tensor, RnnTape]:
    """
    gru's forward for training: returns (output, h_n, tape); rnn_backward(tape, ...) gives the gradients.
    """

def rnn_backward(tape: RnnTape, grad_output: Tensor | numpy.typing.ArrayLike, grad_h_n: Tensor | numpy.typing.ArrayLike | None = None, grad_c_n: Tensor | numpy.typing.ArrayLike | None = None) -> tuple[Tensor, Tensor, Tensor | None, list[Tensor]]:
    """
    Backpropagation through time: given the loss's gradients with respect to output, h_n and (LSTM) c_n (absent: 0), returns (grad_x, grad_h0, grad_c0 or None for a GRU, [grad of each weight, in the forward's order]).
    """

def lstm(x: Tensor | numpy.typing.ArrayLike, weights: Sequence[Tensor | numpy.typing.ArrayLike], h0: Tensor | numpy.typing.ArrayLike | None = None, c0: Tensor | numpy.typing.ArrayLike | None = None, *, num_layers: int = 1, bidirectional: bool = False, batch_first: bool = False) -> tuple[Tensor, tuple[Tensor, Tensor]]:
    """
    nn.LSTM's forward: weights are the module's parameters in order (list(lstm.parameters())), PyTorch's gate order (i, f, g, o) and layout. Returns (output, (h_n, c_n)).
    """

def gru(x: Tensor | numpy.typing.ArrayLike, weights: Sequence[Tensor | numpy.typing.ArrayLike], h0: Tensor | numpy.typing.ArrayLike | None = None, *, num_layers: int = 1, bidirectional: bool = False, batch_first: bool = False) -> tuple[Tensor, Tensor]:
    """
    nn.GRU's forward (gates r, z, n; n = tanh(W_in x + b_in + r * (W_hn h + b_hn))). Returns (output, h_n).
    """

def lstm_cell(x: Tensor | numpy.typing.ArrayLike, h: Tensor | numpy.typing.ArrayLike, c: Tensor | numpy.typing.ArrayLike, w_ih: Tensor | numpy.typing.ArrayLike, w_hh: Tensor | numpy.typing.ArrayLike, b_ih: Tensor | numpy.typing.ArrayLike | None = None, b_hh: Tensor | numpy.typing.ArrayLike | None = None) -> tuple[Tensor, Tensor]:
    """nn.LSTMCell's step: returns (h, c)."""

def gru_cell(x: Tensor | numpy.typing.ArrayLike, h: Tensor | numpy.typing.ArrayLike, w_ih: Tensor | numpy.typing.ArrayLike, w_hh: Tensor | numpy.typing.ArrayLike, b_ih: Tensor | numpy.typing.ArrayLike | None = None, b_hh: Tensor | numpy.typing.ArrayLike | None = None) -> Tensor:
    """nn.GRUCell's step: returns h."""

class Tokenizer:
    """
    A tokenizer built from a GGUF file's metadata (byte-level BPE or SentencePiece-style).
    """

    @staticmethod
    def from_gguf(path: str) -> Tokenizer:
        """Reads the tokenizer of a GGUF file (no weights are loaded)."""

    def encode(self, text: str, parse_special: bool = True, add_bos: bool | None = None) -> list[int]:
        """
        Token ids of `text`; special tokens such as <|im_start|> are matched when parse_special.
        """

    def decode(self, ids: object, keep_special: bool = False) -> bytes:
        """
        The bytes of the decoded text (UTF-8 unless the ids cut a character; use .decode('utf-8', 'replace')).
        """

    def apply_chat_template(self, messages: Sequence[tuple[str, str]], add_generation_prompt: bool = True) -> str:
        """The model's chat prompt for [(role, content), ...]."""

    @property
    def vocab_size(self) -> int:
        """Number of tokens."""

    @property
    def bos(self) -> int:
        """Beginning-of-sequence id (-1: none)."""

    @property
    def eos(self) -> int:
        """End-of-sequence id (-1: none)."""

    @property
    def stop_tokens(self) -> list[int]:
        """Ids that end generation (eos, end of turn)."""

class Generation:
    """An iterator of text pieces from Model.generate()."""

    def __iter__(self) -> object:
        """The generation itself."""

    def __next__(self) -> str:
        """The next piece of text."""

    @property
    def tokens(self) -> list[int]:
        """The ids generated so far."""

    @property
    def finish_reason(self) -> str:
        """
        'none' while running, then 'stop' (a stop token), 'length' (max_tokens) or 'context'.
        """

    @property
    def stats(self) -> dict:
        """Token counts, seconds and tokens/s of the prompt and the generation."""

class Model:
    """A GGUF decoder language model (llama, qwen2, qwen3, gemma2, gemma3, phi3) on one backend."""

    @staticmethod
    def load(path: str | None = None, backend: Backend | str | None = None, ctx: int = 0, max_batch: int = 256, f32_weights: bool = False, activations: str = 'int16', kv_type: str = 'f16', sequences: int = 1, mmap: bool = False) -> Model:
        """
        Loads a GGUF model (default: the cached SmolLM2-135M-Instruct) onto a backend (default: the CPU). The integer kernels quantize activations per 32-block to `activations` levels: 'int16' (logits within 1e-3 of an f32 forward) or 'int8' (llama.cpp's numerics: faster prompts, logits off by a few percent). f32_weights dequantizes Q4/Q8 weights once and computes in f32 (5-7x the memory). kv_type is the KV cache's element type: 'f16' (the default, llama.cpp's), 'bf16', 'f32' or 'q8_0' (CPU only). sequences is how many sequences the cache holds at once (generate_parallel decodes that many together). mmap computes on the file's mapped pages on the CPU instead of reading the weights into huge pages (slower decode, pages shared with other processes). Refuses with OutOfMemory, with the numbers, when it would not fit.
        """

    def generate(self, prompt: str, max_tokens: int = 128, temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0, seed: int = 0, chat: bool = False) -> Generation:
        """
        A Generation: iterate it for text pieces (temperature 0 is greedy); chat wraps the prompt in the chat template.
        """

    def generate_parallel(self, prompts: Sequence[str], max_tokens: int = 128, temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0, seed: int = 0, chat: bool = False) -> tuple:
        """
        Continuations of every prompt, decoded together (one forward pass per step for all of them; prompt i sampled with seed + i): (texts, finish reasons, stats with the aggregate decode_tokens_per_s). The model must hold len(prompts) sequences (load(sequences=...)).
        """

    def logits(self, tokens: object) -> object:
        """
        Logits [len(tokens), vocab] (f32 NumPy array sharing the result's memory on the CPU) of the tokens from position 0.
        """

    @property
    def tokenizer(self) -> Tokenizer:
        """The model's tokenizer."""

    @property
    def config(self) -> dict:
        """Hyper-parameters."""

    @property
    def memory_estimate(self) -> dict:
        """
        Bytes of weights, KV cache and activations (estimate_inference_memory at load).
        """

    @property
    def context(self) -> int:
        """KV cache length in tokens (per sequence)."""

    @property
    def sequences(self) -> int:
        """Sequences the KV cache holds at once."""

    @property
    def backend(self) -> Backend:
        """Where the model runs."""

def estimate_inference_memory(path: str | None = None, ctx: int = 0, batch: int = 256) -> dict:
    """
    Bytes a GGUF model needs (weights, KV cache for ctx tokens, activations for a batch), before loading it.
    """

def model_cache_dir() -> str:
    """Where models are cached ($TORSH_MODEL_DIR or ~/.cache/torsh/models)."""

class Kernel:
    """
    A user kernel compiled for one device (torsh_backend.compile_kernel, RawKernel.compile). Launch it with k.launch(grid, block, args).
    """

    @property
    def name(self) -> str: ...

    @property
    def entry(self) -> str: ...

    @property
    def dialect(self) -> str: ...

    @property
    def device(self) -> str: ...

    @property
    def params(self) -> list:
        """
        The entry's parameters as the launch checks them: dicts of kind ('buffer'/'value'), type, size, writable, name, spelling.
        """

    @property
    def params_known(self) -> bool: ...

    @property
    def origin(self) -> str:
        """'compiled', 'memory cache' or 'disk cache'."""

    @property
    def build_ms(self) -> float:
        """Milliseconds compile_kernel took for this handle."""

    @property
    def build_log(self) -> str: ...

    @property
    def cache_path(self) -> str: ...

    def launch(self, grid: object, block: object, args: object, stream: Backend | None = None) -> None:
        """
        Runs the kernel: `grid` work-groups of `block` items (ints or tuples of up to 3). args: Tensors (or writable arrays on the CPU), ints, floats, NumPy scalars, bytes of a POD struct. Checked against the entry's parameters first. Runs on the default stream of `stream` (a Backend) or of the kernel's device.
        """

    def __repr__(self) -> str: ...

class RawKernel:
    """
    A kernel of your own from source, as CuPy's RawKernel: compiled for each device on first use there (or now for `backend`), called as k(grid, block, (t1, t2, 3.0)). dialect: 'torsh' (one source for CPU, OpenCL, CUDA, ROCm), 'opencl', 'cuda' or 'wgsl'.
    """

    def __init__(self, source: str, entry: str, dialect: str = 'torsh', backend: Backend | str | None = None, defines: Mapping[str, object] = {}, options: Sequence[str] = [], name: str = '') -> None: ...

    def __call__(self, grid: object, block: object, args: object, backend: Backend | str | None = None) -> None:
        """
        Launches on the device of the first tensor argument (or `backend`), compiling there on first use.
        """

    def compile(self, backend: Backend | str) -> Kernel:
        """The Kernel for a device, compiled (or found in the cache) now."""

    @property
    def entry(self) -> str: ...

    @property
    def dialect(self) -> str: ...

def compile_kernel(backend: Backend | str, source: str, entry: str, dialect: str = 'torsh', defines: Mapping[str, object] = {}, options: Sequence[str] = [], name: str = '') -> Kernel:
    """
    Compiles a kernel for one device (or finds it in the memory or disk cache). Raises TorshError (KernelCompile) with the build log when it does not compile.
    """

def kernel_dialects(backend: Backend | str) -> list[str]:
    """
    The kernel dialects a device builds: 'torsh', 'opencl', 'cuda', 'wgsl'.
    """

def kernel_stats(backend: Backend | str | None = None) -> dict:
    """
    Kernel compile and cache counters of one device, or of the process: kernels_cached, compiles, memory_hits, disk_hits, disk_writes, disk_rebuilds, launches, compile_ms, disk_load_ms.
    """

def kernel_cache_dir() -> str:
    """
    The disk cache of compiled kernels ('' when TORSH_KERNEL_CACHE_DIR=off).
    """

def kernel_cache_warnings() -> list[str]:
    """
    Warnings the kernel cache raised in this process (corrupt entries rebuilt, unwritable directory).
    """
