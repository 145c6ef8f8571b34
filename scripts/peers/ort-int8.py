#!/usr/bin/env python3
"""onnxruntime as the peer of `torsh bench`'s int8 GEMM cases: one JSON object per line, same case names.

matmul_integer_u8i8_<n>: MatMulInteger (u8 x i8 -> int32, zero points 128 and 0);
qlinear_matmul_u8i8_<n>: QLinearMatMul (u8 x i8 -> u8); *_w7_<n>: the same
with weights of 7 bits ([-64, 63], onnxruntime's reduce_range). Each
MatMulInteger session's output is checked against the exact product once: on
CPUs without VNNI onnxruntime's u8 x s8 kernel sums pairs of products in
int16 with saturation, and the "note" says how many outputs that changed. The weights are
initializers, so onnxruntime may prepack them at session creation (its best
case; torsh packs per call). Timed as `torsh bench` times a case: a warm-up,
then each run on its own, for at least --min-seconds and at least 3 runs; the
median. Sessions use --threads intra-op threads.
"""
import argparse
import json

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import timing

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--min-seconds", type=float, default=0.3)
ap.add_argument("--filter", default="")
ap.add_argument("--sizes", default="1024,2048,4096")
args = ap.parse_args()


def weights(n, seven_bits):
    rng = np.random.default_rng(6)
    return rng.integers(-64 if seven_bits else -128, 64 if seven_bits else 128, size=(n, n), dtype=np.int8)


def session(n, requantize, seven_bits):
    w = weights(n, seven_bits)
    inits = [numpy_helper.from_array(w, "b"), numpy_helper.from_array(np.array(128, np.uint8), "za"),
             numpy_helper.from_array(np.array(0, np.int8), "zb")]
    if requantize:
        inits += [numpy_helper.from_array(np.array(0.02, np.float32), "sa"),
                  numpy_helper.from_array(np.array(0.01, np.float32), "sb"),
                  numpy_helper.from_array(np.array(0.5, np.float32), "sy"),
                  numpy_helper.from_array(np.array(128, np.uint8), "zy")]
        node = helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])
        out = helper.make_tensor_value_info("y", TensorProto.UINT8, [n, n])
    else:
        node = helper.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])
        out = helper.make_tensor_value_info("y", TensorProto.INT32, [n, n])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", TensorProto.UINT8, [n, n])], [out],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def median_ms(fn, max_reps):
    return timing.median_ms(fn, max_reps, args.min_seconds)


def wrong_fraction(y, a, n, seven_bits):
    # float64 holds these sums exactly (|sum| <= 128 * 128 * n < 2^53).
    exact = (a.astype(np.float64) - 128) @ weights(n, seven_bits).astype(np.float64)
    return float(np.mean(y.astype(np.float64) != exact))


for seven_bits in (False, True):
    for requantize in (False, True):
        for n in (int(s) for s in args.sizes.split(",")):
            name = ("qlinear_matmul" if requantize else "matmul_integer") + "_u8i8_" + ("w7_" if seven_bits else "") + str(n)
            if args.filter not in name:
                continue
            s = session(n, requantize, seven_bits)
            a = np.random.default_rng(5).integers(0, 256, size=(n, n), dtype=np.uint8)
            ms = median_ms(lambda: s.run(None, {"a": a}), 30 if n <= 1024 else 5)
            note = f"onnxruntime {ort.__version__}"
            if not requantize:
                wrong = wrong_fraction(s.run(None, {"a": a})[0], a, n, seven_bits)
                note += f", {100 * wrong:.1f}% of outputs differ from the exact product" if wrong else ", exact"
            print(json.dumps({"name": name, "backend": "onnxruntime", "dtype": "u8" if requantize else "i32",
                              "median_ms": round(ms, 5), "gops": round(2 * n**3 / ms / 1e6, 1),
                              "note": note}), flush=True)
