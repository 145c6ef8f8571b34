"""Writes a GGUF file whose weight matrices are requantized to another ggml
type by the PyPI ``gguf`` package's own quantizers (dequantized from the
source file first); metadata, vectors and tensor order are kept. Tests make
Q5_0 and Q5_1 models this way from the cached SmolLM2 file, so the weights
torsh reads were written by an independent implementation.

    python tests/model/requantize.py SRC.gguf DST.gguf q5_0
"""

import sys

import gguf
import numpy as np


def requantize(src, dst, type_name):
    qtype = gguf.GGMLQuantizationType[type_name.upper()]
    block = gguf.GGML_QUANT_SIZES[qtype][0]
    r = gguf.GGUFReader(src)
    arch = r.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(dst, arch)
    for key, field in r.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        main = field.types[0]
        sub = field.types[-1] if main == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(key, field.contents(), main, sub)
    for t in r.tensors:
        x = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        if x.ndim == 2 and x.shape[-1] % block == 0:
            w.add_tensor(t.name, gguf.quants.quantize(x, qtype), raw_dtype=qtype)
        else:
            w.add_tensor(t.name, x)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    requantize(sys.argv[1], sys.argv[2], sys.argv[3])
