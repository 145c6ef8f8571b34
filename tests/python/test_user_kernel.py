"""User kernels from Python: tb.RawKernel, tb.compile_kernel, Kernel.launch."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import torsh_backend as tb

SCALE = """
KERNEL void scale(GLOBAL float* y, GLOBAL const float* x, float a, long n) {
  const long i = GLOBAL_ID(0);
  if (i < n) y[i] = a * x[i];
}
"""

SCALE_WGSL = """
@group(0) @binding(0) var<storage, read_write> y : array<f32>;
@group(0) @binding(1) var<storage, read> x : array<f32>;
@group(0) @binding(2) var<uniform> a : f32;
@group(0) @binding(3) var<uniform> n : u32;
@compute @workgroup_size(64)
fn scale(@builtin(global_invocation_id) gid : vec3<u32>) {
  if (gid.x < n) { y[gid.x] = a * x[gid.x]; }
}
"""


def kernel_devices():
    """Every usable device that builds some dialect; one visible skip when none does."""
    params = []
    for name in tb.available():
        device = tb.create(name).device
        if tb.kernel_dialects(device):
            params.append(pytest.param(device, id=device))
    return params or [pytest.param(None, marks=pytest.mark.skip(reason="no backend builds user kernels here"))]


def scale_kernel(device):
    if "torsh" in tb.kernel_dialects(device):
        return tb.RawKernel(SCALE, "scale")
    return tb.RawKernel(SCALE_WGSL, "scale", dialect="wgsl")


@pytest.mark.parametrize("device", kernel_devices())
def test_raw_kernel_runs_on_the_device_of_its_arguments(device, rng):
    k = scale_kernel(device)
    x_host = rng.standard_normal(1000).astype(np.float32)
    x = tb.asarray(x_host, device=device)
    y = tb.zeros(1000, device=device)
    k((1000 + 63) // 64, 64, (y, x, 2.5, 1000))
    np.testing.assert_array_equal(y.numpy(), np.float32(2.5) * x_host)
    compiled = k.compile(device)
    assert compiled.device == device
    assert compiled.origin in ("compiled", "memory cache", "disk cache")
    assert [p["kind"] for p in compiled.params] == ["buffer", "buffer", "value", "value"]
    # NumPy scalars keep their width.
    k((1000 + 63) // 64, (64,), (y, x, np.float32(0.5), np.int32(1000)))
    np.testing.assert_array_equal(y.numpy(), np.float32(0.5) * x_host)


@pytest.mark.parametrize("device", kernel_devices())
def test_bad_launches_raise_before_the_driver(device):
    k = scale_kernel(device)
    x = tb.zeros(8, device=device)
    y = tb.zeros(8, device=device)
    with pytest.raises(tb.TorshError) as e:
        k(1, 64, (y, x, 2.0))
    assert e.value.code == "InvalidArgument" and "scale" in str(e.value)
    with pytest.raises(tb.TorshError) as e:
        k(1, 64, (y, x, 2.0, 2.5))  # a fraction for an integer parameter
    assert e.value.code == "InvalidArgument"
    with pytest.raises(tb.TorshError) as e:
        k(1, 64, (y, tb.zeros(8, dtype="f64", device=device), 2.0, 8))
    assert e.value.code == "DTypeMismatch"
    with pytest.raises(tb.TorshError):
        k(0, 64, (y, x, 2.0, 8))
    with pytest.raises(tb.TorshError):
        k((1, 2, 3, 4), 64, (y, x, 2.0, 8))
    with pytest.raises(tb.TorshError):
        k(1, 64, (y, x, "two", 8))
    # An int past 64 bits names the argument (it was a bare std::bad_cast).
    with pytest.raises(tb.TorshError, match="argument 3") as e:
        k(1, 64, (y, x, 2.0, 2**70))
    assert e.value.code == "InvalidArgument"
    # A grid whose work-item count wraps 64 bits names the limit it passed (it was "must be at least 1").
    with pytest.raises(tb.TorshError) as e:
        k((2**31,) * 3, 64, (y, x, 2.0, 8))
    assert e.value.code == "InvalidArgument" and "at least 1" not in str(e.value)
    assert any(limit in str(e.value) for limit in ("2^63", "overflows", "maxComputeWorkgroupsPerDimension")), e.value
    assert not y.numpy().any()


LOCAL_HOG = """
KERNEL void big(GLOBAL float* y) {
  LOCAL_ARRAY(float, buf, 1048576);
  long i = LOCAL_ID(0);
  buf[i] = 1;
  BARRIER();
  y[i] = buf[i];
}
"""


def torsh_kernel_devices():
    """The usable devices that build the torsh dialect; one visible skip when none does."""
    params = [pytest.param(name, id=name) for name in (tb.create(b).device for b in tb.available())
              if "torsh" in tb.kernel_dialects(name)]
    return params or [pytest.param(None, marks=pytest.mark.skip(reason="no backend builds torsh kernels here"))]


@pytest.mark.parametrize("device", torsh_kernel_devices())
def test_local_arrays_beyond_the_device_raise_instead_of_aborting(device):
    """In a child process: before the check, PoCL aborted the interpreter."""
    code = (
        "import torsh_backend as tb\n"
        f"k = tb.RawKernel({LOCAL_HOG!r}, 'big')\n"
        f"y = tb.zeros((64,), device={device!r})\n"
        "try:\n"
        "    k(1, 64, (y,))\n"
        "    print('ran', float(y.numpy()[0]))\n"
        "except tb.TorshError as e:\n"
        "    print('refused:', e.code, e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    # Devices with less local memory than the array refuse it; the CPU's work-group locals are host memory.
    assert r.stdout.startswith("refused: InvalidArgument") or r.stdout.startswith("ran 1.0"), r.stdout + r.stderr
    if device.startswith("opencl"):
        assert "local memory" in r.stdout, r.stdout


@pytest.mark.parametrize("device", kernel_devices())
def test_compile_errors_carry_the_log(device):
    torsh = "torsh" in tb.kernel_dialects(device)
    src = "KERNEL void f(GLOBAL float* y) {\n  y[0] = nope;\n}\n" if torsh else \
        "@compute @workgroup_size(1)\nfn f() {\n  let v = nope;\n}\n"
    with pytest.raises(tb.TorshError) as e:
        tb.compile_kernel(device, src, "f", dialect="torsh" if torsh else "wgsl")
    assert e.value.code == "KernelCompile"
    assert "nope" in str(e.value)


def test_workgroup_arrays_beyond_webgpu_limits_raise():
    if "webgpu" not in tb.available():
        pytest.skip("no WebGPU device here")
    src = """
@group(0) @binding(0) var<storage, read_write> y : array<f32>;
var<workgroup> buf : array<f32, 1048576>;
@compute @workgroup_size(64)
fn big(@builtin(local_invocation_id) l : vec3<u32>) { buf[l.x] = 1.0; workgroupBarrier(); y[l.x] = buf[l.x]; }
"""
    k = tb.RawKernel(src, "big", dialect="wgsl")
    y = tb.zeros((64,), device="webgpu")
    with pytest.raises(tb.TorshError, match="maxComputeWorkgroupStorageSize") as e:
        k(1, 64, (y,))
    assert e.value.code == "InvalidArgument" and "4194304 bytes" in str(e.value)


def test_unsupported_dialect_names_what_the_device_takes():
    cpu = tb.create("cpu")
    with pytest.raises(tb.TorshError) as e:
        tb.compile_kernel(cpu, SCALE_WGSL, "scale", dialect="wgsl")
    assert e.value.code == "Unsupported"
    with pytest.raises(tb.TorshError):
        tb.RawKernel(SCALE, "scale", dialect="glsl")


def test_kernel_stats_and_cache_dir():
    s = tb.kernel_stats()
    assert set(s) >= {"kernels_cached", "compiles", "memory_hits", "disk_hits", "launches", "compile_ms"}
    assert isinstance(tb.kernel_cache_dir(), str)
    assert isinstance(tb.kernel_cache_warnings(), list)


def test_the_custom_kernel_example_runs():
    example = pathlib.Path(__file__).parents[2] / "examples" / "custom_kernel" / "custom_kernel.py"
    r = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "failed" in r.stdout  # the summary line
