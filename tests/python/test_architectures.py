"""Every architecture of the forward's table against an independent PyTorch
forward written from its definition (tests/model/torch_model.py), on random-weight
files written here (tests/model/random_model.py): Llama 3.1-style llama with
rope_freqs.weight, qwen2 (NeoX RoPE, Q/K/V biases), qwen3 (NeoX RoPE, q/k
head norms, 128-wide heads: queries wider than the embedding), gemma2
(sliding-window layers, logit soft-caps, GeGLU, post norms, scaled
embeddings), gemma3 (sliding-window layers with their own RoPE base, linear
RoPE scaling on the global ones, q/k head norms) and phi3 (fused QKV and
gate-up tensors read as views, LongRoPE factors, the RoPE attention factor,
a separate output matrix). And against
llama.cpp's own forward on the same files where its logits program is built
(tests/model/build_llama_logits.sh; TORSH_LLAMA_LOGITS names it), skipping
visibly where it is not.
"""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import torsh_backend as tb
from test_model import PASSAGE, check_every_backend, relative_errors

MODEL = pathlib.Path(tb.model_cache_dir()) / "SmolLM2-135M-Instruct.Q4_1.gguf"
needs_model = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} is absent (its tokenizer is copied into "
                                 "the random files): run scripts/fetch-model.sh")
ARCHS = ["llama3", "qwen2", "qwen3", "gemma2", "gemma3", "phi3"]
CONFIG = {  # gguf architecture, RoPE pairs, q/k norm, frequency factors, head size, sliding window
    "llama3": ("llama", "gptj", False, True, 64, 0),
    "qwen2": ("qwen2", "neox", False, False, 64, 0),
    "qwen3": ("qwen3", "neox", True, False, 128, 0),
    "gemma2": ("gemma2", "neox", False, False, 64, 8),
    "gemma3": ("gemma3", "neox", True, False, 128, 8),
    "phi3": ("phi3", "neox", False, True, 64, 0),  # its window (2047) named, not applied, as llama.cpp
}


@pytest.fixture(scope="module", params=ARCHS)
def arch(request, tmp_path_factory):
    """The architecture's random-weight files (f32, q8_0, q4_k) and the PyTorch reference over each."""
    torch = pytest.importorskip("torch", reason="PyTorch is absent: the reference forward cannot run")
    torch.set_num_threads(2)
    pytest.importorskip("gguf", reason="the PyPI gguf package is absent: the files cannot be written")
    if not MODEL.exists():
        pytest.skip(f"{MODEL} is absent: run scripts/fetch-model.sh")
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "model"))
    from random_model import write
    from torch_model import TorchModel
    d = tmp_path_factory.mktemp(request.param)
    files = {}
    for fmt in ("f32", "q8_0", "q4_k"):
        path = d / f"random-{request.param}-{fmt}.gguf"
        write(str(MODEL), str(path), fmt, arch=request.param)
        files[fmt] = (path, TorchModel(str(path)))
    return request.param, files


@needs_model
def test_config_names_what_the_architecture_changes(arch):
    name, files = arch
    gguf_arch, rope, qk_norm, factors, head_dim, window = CONFIG[name]
    c = tb.Model.load(str(files["f32"][0]), ctx=64).config
    assert (c["architecture"], c["rope_style"], c["qk_norm"], c["rope_freq_factors"], c["head_dim"],
            c["sliding_window"]) == (gguf_arch, rope, qk_norm, factors, head_dim, window)
    if name.startswith("gemma"):  # the files' pattern 2: layer 0 local, layer 1 global
        assert c["local_layers"] == [True, False] and c["embed_scale"] == pytest.approx(16.0)
    if name == "gemma2":
        assert (c["attn_softcap"], c["final_softcap"]) == (0.5, 2.0)
    if name == "gemma3":
        assert (c["rope_scale"], c["rope_base_local"], c["rope_scale_local"]) == (8.0, 10000.0, 1.0)


@needs_model
def test_f32_weights_match_pytorch_on_every_backend(arch):
    # F32 weights and an f32 KV cache: the forward's own math, within 1e-4 of
    # the reference's (measured ~1e-6 on the CPU, PoCL and lavapipe); a missing
    # frequency factor moves the llama3 logits by ~9e-4, a wrong RoPE pairing
    # by ~3e-2. GPU backends with no op falling back to the CPU; 16 positions on
    # WebGPU (lavapipe runs its shaders on the CPU).
    name, files = arch
    path, ref = files["f32"]
    assert "cpu" in check_every_backend(path, ref, f"{name} f32", 1e-4, kv_type="f32")


@needs_model
def test_phi3_long_context_takes_the_long_rope_factors(arch):
    # Past the original context (4096 in the file) LongRoPE's long factors
    # replace the short ones, picked at load from the context asked for.
    name, files = arch
    if name != "phi3":
        pytest.skip("Phi-3's LongRoPE only")
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "model"))
    from torch_model import TorchModel
    path = files["f32"][0]
    m = tb.Model.load(str(path), ctx=4200, kv_type="f32")
    ids = m.tokenizer.encode(PASSAGE)[:32]
    long_ref, short_ref = TorchModel(str(path), ctx=4200), TorchModel(str(path))
    ours = m.logits(ids)
    assert relative_errors(ours, long_ref.forward(ids).numpy()).max() < 1e-4
    assert relative_errors(ours, short_ref.forward(ids).numpy()).max() > 1e-2


@needs_model
@pytest.mark.parametrize("fmt", ["q8_0", "q4_k"])
def test_quantized_weights_match_pytorch(arch, fmt):
    # The integer kernels (16-bit activations) and the f16 KV cache: the same
    # bound as the K-quant llama files' (test_model.py).
    name, files = arch
    path, ref = files[fmt]
    m = tb.Model.load(str(path), ctx=128)
    ids = m.tokenizer.encode(PASSAGE)[:64]
    ref.reset()
    err = relative_errors(m.logits(ids), ref.forward(ids).numpy())
    print(f"{name} {fmt}: max relative logit error over 64 positions {err.max():.2e}")
    assert err.max() < 2e-3
    prompt = "The capital of France is"
    gen = m.generate(prompt, max_tokens=8)
    "".join(gen)
    ours = list(gen.tokens)
    assert ours == ref.greedy(m.tokenizer.encode(prompt), 8)[:len(ours)]


LLAMA_LOGITS = os.environ.get("TORSH_LLAMA_LOGITS", "")


@needs_model
@pytest.mark.skipif(not os.access(LLAMA_LOGITS, os.X_OK),
                    reason="llama.cpp's logits program is absent: build it with tests/model/build_llama_logits.sh "
                    "and set TORSH_LLAMA_LOGITS")
def test_llama_cpp_agrees(arch, tmp_path):
    # llama.cpp's forward on the same F32 file (an f32 KV cache, its flash
    # attention off: that one rounds queries and keys to f16 on the CPU): its
    # logits within 1e-5 of ours and of the reference's (measured ~1e-6), so
    # the reference's reading of each architecture is llama.cpp's too. Gemma:
    # 2e-3 (measured 4-5e-4), llama.cpp's CPU GeGLU reading GELU from an f16
    # table; a reference without the window, the local RoPE base, the linear
    # scaling or either soft-cap is 1e-2 to 1.4 away from it.
    name, files = arch
    path, ref = files["f32"]
    m = tb.Model.load(str(path), ctx=128, kv_type="f32")
    ids = m.tokenizer.encode(PASSAGE)[:64]
    out = tmp_path / "logits.f32"
    r = subprocess.run([LLAMA_LOGITS, str(path), str(out)] + [str(i) for i in ids], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    peer = np.fromfile(out, dtype=np.float32).reshape(len(ids), -1)
    ours = m.logits(ids)
    ref.reset()
    err = relative_errors(ours, peer)
    ref_err = relative_errors(ref.forward(ids).numpy(), peer)
    print(f"{name}: llama.cpp against ours {err.max():.2e}, against the reference {ref_err.max():.2e}")
    bound = 2e-3 if name.startswith("gemma") else 1e-5
    assert err.max() < bound and ref_err.max() < bound
    assert (ours.argmax(1) == peer.argmax(1)).all()
