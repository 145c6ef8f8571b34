#!/usr/bin/env python3
"""onnxruntime as the peer of `torsh bench`'s int8 GEMM cases: one JSON object per line, same case names.

matmul_integer_u8i8_<n>: MatMulInteger (u8 x i8 -> int32, zero points 128 and 0);
qlinear_matmul_u8i8_<n>: QLinearMatMul (u8 x i8 -> u8). The weights are
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


def session(n, requantize):
    rng = np.random.default_rng(6)
    w = rng.integers(-128, 128, size=(n, n), dtype=np.int8)
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


for requantize in (False, True):
    for n in (int(s) for s in args.sizes.split(",")):
        name = ("qlinear_matmul" if requantize else "matmul_integer") + f"_u8i8_{n}"
        if args.filter not in name:
            continue
        s = session(n, requantize)
        a = np.random.default_rng(5).integers(0, 256, size=(n, n), dtype=np.uint8)
        ms = median_ms(lambda: s.run(None, {"a": a}), 30 if n <= 1024 else 5)
        print(json.dumps({"name": name, "backend": "onnxruntime", "dtype": "u8" if requantize else "i32",
                          "median_ms": round(ms, 5), "gops": round(2 * n**3 / ms / 1e6, 1),
                          "note": f"onnxruntime {ort.__version__}"}), flush=True)
