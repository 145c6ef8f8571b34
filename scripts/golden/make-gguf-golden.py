#!/usr/bin/env python3
"""Writes tests/golden/gguf_py.gguf with the gguf Python package's writer and
tests/golden/gguf_py.expected with what the package's own reader sees in it,
so the C++ reader is checked against an independent writer and reader.

The file has every metadata value type, arrays (one nested), alignment 64 and
tensors of F32, F16, Q8_0, Q4_0 and Q4_1 (quantised by gguf.quants).

.expected holds one item per line, fields separated by single spaces:
  version N | alignment N | data_offset N | kv_count N | tensor_count N
  kv KEY TYPE VALUE            scalars: ints in decimal, bools 0/1, floats as
                               float.hex(), strings as UTF-8 hex ("-" if empty)
  kv KEY 9 ELEM COUNT V1 V2..  arrays of scalars or strings, encoded the same
  kv KEY 9 9 LEAVES            nested arrays: only how many scalars they hold in all
                               (the package's reader flattens nested arrays)
  tensor NAME TYPE D0,D1.. ABSOLUTE_OFFSET NBYTES FNV1A64_HEX
Run: build/pyenv/bin/python scripts/golden/make-gguf-golden.py (gguf 0.19.0).
"""
import os

import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGUFReader, GGUFValueType as V, GGUFWriter
from gguf.quants import quantize

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "golden")
PATH = os.path.join(OUT, "gguf_py.gguf")


def write():
    w = GGUFWriter(PATH, arch="llama")
    w.add_custom_alignment(64)
    w.add_key_value("t.u8", 200, V.UINT8)
    w.add_key_value("t.i8", -100, V.INT8)
    w.add_key_value("t.u16", 60000, V.UINT16)
    w.add_key_value("t.i16", -30000, V.INT16)
    w.add_key_value("t.u32", 4000000000, V.UINT32)
    w.add_key_value("t.i32", -2000000000, V.INT32)
    w.add_key_value("t.u64", 2**63 + 5, V.UINT64)
    w.add_key_value("t.i64", -(2**62), V.INT64)
    w.add_key_value("t.f32", 0.1, V.FLOAT32)
    w.add_key_value("t.f64", -2.25e300, V.FLOAT64)
    w.add_key_value("t.bool", True, V.BOOL)
    w.add_key_value("t.string", "h\u00e9llo world", V.STRING)
    w.add_key_value("t.empty_string", "", V.STRING)
    w.add_key_value("t.arr_i32", [-1, 7, 2**31 - 1], V.ARRAY, V.INT32)
    w.add_key_value("t.arr_f32", [0.25, -3.0, 1e-5], V.ARRAY, V.FLOAT32)
    w.add_key_value("t.arr_bool", [True, False], V.ARRAY, V.BOOL)
    w.add_key_value("t.arr_str", ["a", "", "ccc"], V.ARRAY, V.STRING)
    w.add_key_value("t.arr_nested", [[1, 2], [3]], V.ARRAY)

    rng = np.random.default_rng(1234)
    w.add_tensor("w.f32", np.arange(24, dtype=np.float32).reshape(3, 8) * 0.5)
    w.add_tensor("w.f16", rng.standard_normal(16).astype(np.float16))
    for name, qtype, rows in (("w.q8_0", Q.Q8_0, 2), ("w.q4_0", Q.Q4_0, 3), ("w.q4_1", Q.Q4_1, 1)):
        x = rng.standard_normal((rows, 64)).astype(np.float32)
        w.add_tensor(name, quantize(x, qtype), raw_dtype=qtype)
    w.add_tensor("w.3d", rng.standard_normal((2, 1, 4)).astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def scalar_text(vtype, v):
    if vtype == V.STRING:
        return v.encode().hex() or "-"
    if vtype in (V.FLOAT32, V.FLOAT64):
        return float(v).hex()
    if vtype == V.BOOL:
        return "1" if v else "0"
    return str(int(v))


def fnv1a(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def expected():
    r = GGUFReader(PATH)
    fields = [f for f in r.fields.values() if not f.name.startswith("GGUF.")]
    lines = [
        "version %d" % r.fields["GGUF.version"].contents(),
        "alignment %d" % r.alignment,
        "data_offset %d" % r.data_offset,
        "kv_count %d" % len(fields),
        "tensor_count %d" % len(r.tensors),
    ]
    for f in fields:
        t = f.types[0]
        if t != V.ARRAY:
            lines.append("kv %s %d %s" % (f.name, t, scalar_text(t, f.contents())))
        elif f.types[1] == V.ARRAY:
            lines.append("kv %s 9 9 %d" % (f.name, len(f.data)))  # one index per leaf scalar
        else:
            items = [scalar_text(f.types[1], v) for v in f.contents()]
            lines.append("kv %s 9 %d %d %s" % (f.name, f.types[1], len(items), " ".join(items)))
    for t in r.tensors:
        dims = ",".join(str(int(d)) for d in t.shape)
        data = np.asarray(t.data).tobytes()
        lines.append("tensor %s %d %s %d %d %s" % (t.name, int(t.tensor_type), dims, t.data_offset, t.n_bytes,
                                                   fnv1a(data)))
    with open(os.path.join(OUT, "gguf_py.expected"), "w") as out:
        out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    write()
    expected()
