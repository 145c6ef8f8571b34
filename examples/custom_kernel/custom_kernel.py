"""One user kernel on every backend present, from Python.

bias_gelu_dropout.torsh (the Torsh dialect) runs on the CPU, OpenCL, CUDA and
ROCm backends, bias_gelu_dropout.wgsl on WebGPU; each result is checked
against the same computation made of built-in ops. Exits 1 on a wrong answer.

    python examples/custom_kernel/custom_kernel.py
"""

import pathlib
import sys

import numpy as np

import torsh_backend as tb

HERE = pathlib.Path(__file__).parent


def run_on(device: str) -> float:
    dialects = tb.kernel_dialects(device)
    dialect = "torsh" if "torsh" in dialects else "wgsl"
    source = (HERE / f"bias_gelu_dropout.{dialect}").read_text()
    kernel = tb.RawKernel(source, "bias_gelu_dropout", dialect=dialect)

    rows, cols, p_drop = 333, 769, 0.1
    scale = 1.0 / (1.0 - p_drop)
    x = tb.randn((rows, cols), seed=1, device=device)
    bias = tb.randn((cols,), seed=2, device=device)
    keep = tb.bernoulli((rows, cols), 1.0 - p_drop, seed=3, device=device)
    y = tb.empty((rows, cols), device=device)

    # 120 work-groups of 256 items; the kernel strides over the rest.
    kernel(120, 256, (y, x, bias, keep, rows, cols, scale))
    k = kernel.compile(device)
    print(f"  {device:10s} {dialect:6s} kernel built in {k.build_ms:8.2f} ms ({k.origin})")

    ref = tb.gelu(x + bias, approximate="tanh") * keep * scale
    return float(np.max(np.abs(y.numpy() - ref.numpy())))


def main() -> int:
    failures = ran = 0
    print("bias + GELU + dropout as a user kernel, against built-in ops:")
    for name in tb.available():
        device = tb.create(name).device
        if not tb.kernel_dialects(device):
            print(f"  {device:10s} builds no user kernels")
            continue
        try:
            diff = run_on(device)
        except tb.TorshError as e:
            print(f"  {device:10s} failed: {e}")
            failures += 1
            continue
        ok = diff <= 1e-5
        print(f"  {device:10s} max |diff| {diff:.3g}  {'OK' if ok else 'WRONG'}")
        failures += not ok
        ran += 1
    print(f"{ran} device(s) ran the kernel, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
