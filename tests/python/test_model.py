"""tb.Model against an independent PyTorch forward of the same GGUF file.

The model is SmolLM2-135M-Instruct (scripts/fetch-model.sh puts it in the
cache); these tests skip, saying why, when it or PyTorch is absent.
"""

import pathlib
import sys

import numpy as np
import pytest

import torsh_backend as tb

MODEL = pathlib.Path(tb.model_cache_dir()) / "SmolLM2-135M-Instruct.Q4_1.gguf"
needs_model = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} is absent: run scripts/fetch-model.sh")

PROMPTS = [
    "The capital of France is",
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
    "<|im_start|>user\nWhat is 12 times 7?<|im_end|>\n<|im_start|>assistant\n",
]


@pytest.fixture(scope="module")
def model():
    return tb.Model.load(str(MODEL), ctx=512)


@pytest.fixture(scope="module")
def int8():
    """8-bit activations: llama.cpp's numerics, opt-in."""
    return tb.Model.load(str(MODEL), ctx=512, activations="int8")


@pytest.fixture(scope="module")
def exact():
    """The same model with its weights dequantized to f32 once: the forward pass
    itself (norms, RoPE pairing, attention, cache) with no activation quantization."""
    return tb.Model.load(str(MODEL), ctx=512, f32_weights=True)


@pytest.fixture(scope="module")
def reference():
    torch = pytest.importorskip("torch", reason="PyTorch is absent: the reference forward cannot run")
    torch.set_num_threads(2)
    pytest.importorskip("gguf", reason="the PyPI gguf package is absent: the reference cannot read the file")
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "model"))
    from torch_model import TorchModel
    return TorchModel(str(MODEL))


@needs_model
def test_config_and_memory_estimate(model):
    c = model.config
    assert (c["n_layers"], c["n_embd"], c["n_head"], c["n_head_kv"], c["vocab"]) == (30, 576, 9, 3, 49152)
    est = model.memory_estimate
    assert est["kv_cache"] == 2 * 30 * 3 * 64 * 512 * 2  # f16, the default
    assert tb.Model.load(str(MODEL), ctx=512, kv_type="f32").memory_estimate["kv_cache"] == 2 * est["kv_cache"]
    assert tb.Model.load(str(MODEL), ctx=512, kv_type="q8_0").memory_estimate["kv_cache"] == est["kv_cache"] * 34 // 64
    with pytest.raises(tb.TorshError, match="kv_type"):
        tb.Model.load(str(MODEL), ctx=512, kv_type="q4")
    assert 90e6 < est["weights"] < 100e6 and est["total"] == est["weights"] + est["kv_cache"] + est["activations"]


PASSAGE = ("In 1969, the Apollo 11 mission landed the first humans on the Moon. Neil Armstrong and Buzz Aldrin "
           "spent about two hours outside the lunar module, collecting samples and planting a flag, while Michael "
           "Collins orbited above in the command module Columbia. The crew returned to Earth on July 24, splashing "
           "down in the Pacific Ocean, where the recovery ship USS Hornet picked them up.")


def relative_errors(ours, ref):
    """Per position: max abs difference over the vocabulary / max abs reference logit."""
    return np.abs(ours - ref).max(axis=1) / np.abs(ref).max(axis=1)


def check_every_backend(path, ref, label, bound, **load):
    """The passage's first 64 tokens' logits (16 on WebGPU: lavapipe runs its
    shaders on the CPU, ~10x slower) within `bound` of the reference forward
    `ref` on the CPU, OpenCL and WebGPU where present, no op falling back to
    the CPU on the GPU backends. Returns the backends that ran."""
    ran = []
    for st in tb.statuses():
        if not st.available or st.type not in ("cpu", "opencl", "webgpu"):
            continue
        m = tb.Model.load(str(path), ctx=128, backend=st.type, **load)
        ids = m.tokenizer.encode(PASSAGE)[:16 if st.type == "webgpu" else 64]
        ref.reset()
        tb.reset_fallback_stats()
        err = relative_errors(m.logits(ids), ref.forward(ids).numpy())
        print(f"{label} on {st.type}: max relative logit error over {len(ids)} positions {err.max():.2e}")
        assert err.max() < bound, st.type
        assert tb.fallback_stats()["ops"] == 0, st.type
        ran.append(st.type)
    return ran


@needs_model
@pytest.mark.parametrize("which", ["default", "f32_weights"])
def test_logits_of_a_64_token_prompt_match_pytorch(model, exact, reference, which):
    # The default (integer kernels, 16-bit activations) and f32 weights both
    # meet the bound; f32 weights is the forward pass alone, near f32 rounding.
    m = model if which == "default" else exact
    ids = m.tokenizer.encode(PASSAGE)[:64]
    assert len(ids) == 64
    ours = m.logits(ids)
    assert ours.shape == (64, 49152) and ours.dtype == np.float32
    reference.reset()
    err = relative_errors(ours, reference.forward(ids).numpy())
    print(f"{which}: max relative logit error over 64 positions {err.max():.2e}")
    assert err.max() < 1e-2


@needs_model
def test_int8_activations_stay_near_pytorch(int8, reference):
    # 8-bit activations (llama.cpp's numerics) move the logits by a few percent
    # of the largest one; the bound says that nothing worse than that happens.
    ids = int8.tokenizer.encode(PASSAGE)[:64]
    reference.reset()
    err = relative_errors(int8.logits(ids), reference.forward(ids).numpy())
    print(f"int8 activations: max relative logit error over 64 positions {err.max():.2e} (mean {err.mean():.2e})")
    assert err.max() < 0.15


_greedy_reference = {}


@needs_model
@pytest.mark.parametrize("which", ["default", "f32_weights"])
@pytest.mark.parametrize("prompt", PROMPTS, ids=["france", "code", "chat"])
def test_greedy_continuation_matches_pytorch(model, exact, reference, prompt, which):
    m = model if which == "default" else exact
    ids = m.tokenizer.encode(prompt)
    gen = m.generate(prompt, max_tokens=32)
    text = "".join(gen)
    ours = list(gen.tokens)
    if prompt not in _greedy_reference:
        _greedy_reference[prompt] = reference.greedy(ids, 32)
    ref = _greedy_reference[prompt]
    # Generation stops at a stop token; the reference runs on for 32.
    assert ours == ref[:len(ours)], f"{text!r}"
    assert len(ours) == 32 or ours[-1] in m.tokenizer.stop_tokens


@needs_model
def test_chat_generation_streams_text_and_stats(model):
    gen = model.generate("What is the capital of France? Answer in one word.", max_tokens=16, chat=True)
    pieces = list(gen)
    assert all(isinstance(p, str) for p in pieces)
    assert "Paris" in "".join(pieces)
    s = gen.stats
    assert s["prompt_tokens"] > 10 and s["generated_tokens"] >= 1 and s["prompt_tokens_per_s"] > 0
    assert gen.finish_reason in ("stop", "length")


@needs_model
def test_sampling_is_reproducible_with_a_seed(model):
    a = model.generate("Once upon a time", max_tokens=12, temperature=0.8, top_k=40, top_p=0.9, seed=7)
    b = model.generate("Once upon a time", max_tokens=12, temperature=0.8, top_k=40, top_p=0.9, seed=7)
    assert "".join(a) == "".join(b) and a.tokens == b.tokens


@needs_model
def test_interleaved_and_threaded_generations_do_not_mix(model):
    """Each generation owns its sequence: interleaving two iterators, or running
    two from threads, gives each the text it gives alone (it used to print
    ' Paris, 9, 10, 11')."""
    import threading
    alone_a = "".join(model.generate("The capital of France is", max_tokens=12))
    alone_b = "".join(model.generate("1, 2, 3, 4,", max_tokens=12))
    g1 = model.generate("The capital of France is", max_tokens=12)
    s = next(g1)
    assert "".join(model.generate("1, 2, 3, 4,", max_tokens=12)) == alone_b
    assert s + "".join(g1) == alone_a
    out = {}

    def run(key, prompt):
        out[key] = "".join(model.generate(prompt, max_tokens=12))

    threads = [threading.Thread(target=run, args=(k, p)) for k, p in
               (("a", "The capital of France is"), ("b", "1, 2, 3, 4,"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == {"a": alone_a, "b": alone_b}


@needs_model
def test_bad_arguments_raise(model):
    with pytest.raises(tb.TorshError):
        model.logits([49152])
    with pytest.raises(tb.TorshError):
        model.logits(list(range(600)))  # longer than ctx 512
    with pytest.raises(tb.TorshError):
        list(model.generate("hi", temperature=-1.0))
    with pytest.raises(tb.TorshError, match="int16"):
        tb.Model.load(str(MODEL), activations="int4")
    with pytest.raises(tb.TorshError):
        tb.Model.load(str(MODEL), ctx=1 << 24)  # the KV cache alone would need ~720 GiB


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(tb.TorshError, match="nope.gguf"):
        tb.Model.load(str(tmp_path / "nope.gguf"))
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 8)
    with pytest.raises(tb.TorshError):
        tb.Model.load(str(bad))


@needs_model
def test_generate_parallel_decodes_each_prompt_as_alone():
    m = tb.Model.load(str(MODEL), ctx=96, sequences=3)
    assert m.sequences == 3
    prompts = ["The capital of France is", "1, 2, 3, 4,", "The capital of France is"]
    texts, reasons, stats = m.generate_parallel(prompts, max_tokens=8)
    alone = ["".join(m.generate(p, max_tokens=8)) for p in prompts]
    assert texts == alone
    assert texts[0] == texts[2] and texts[0] != texts[1]
    assert set(reasons) <= {"length", "stop"}
    assert stats["decode_tokens_per_s"] > 0
    with pytest.raises(tb.TorshError, match="sequences"):
        m.generate_parallel(prompts + prompts, max_tokens=2)


@pytest.fixture(scope="module", params=["q5_0", "q5_1"])
def requantized(request, tmp_path_factory):
    """The cached model with every weight matrix requantized by the gguf
    package's own quantizer (tests/model/requantize.py), and the PyTorch
    reference over that file."""
    torch = pytest.importorskip("torch", reason="PyTorch is absent: the reference forward cannot run")
    torch.set_num_threads(2)
    pytest.importorskip("gguf", reason="the PyPI gguf package is absent: the file cannot be written")
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "model"))
    from requantize import requantize
    from torch_model import TorchModel
    path = tmp_path_factory.mktemp("requantized") / f"smollm2-{request.param}.gguf"
    requantize(str(MODEL), str(path), request.param)
    return request.param, tb.Model.load(str(path), ctx=512), TorchModel(str(path))


@needs_model
def test_q5_weights_match_pytorch(requantized):
    # The same bound as the Q4_1 file's default: the 5-bit levels go through
    # the same integer kernels (16-bit activations), so only their rounding of
    # the activations separates the logits from the f32 reference's.
    fmt, m, ref = requantized
    assert m.memory_estimate["weights"] > 80e6
    ids = m.tokenizer.encode(PASSAGE)[:64]
    ref.reset()
    err = relative_errors(m.logits(ids), ref.forward(ids).numpy())
    print(f"{fmt}: max relative logit error over 64 positions {err.max():.2e}")
    assert err.max() < 1e-2
    ids = m.tokenizer.encode(PROMPTS[0])
    gen = m.generate(PROMPTS[0], max_tokens=16)
    text = "".join(gen)
    ours = list(gen.tokens)
    assert ours == ref.greedy(ids, 16)[:len(ours)], f"{fmt}: {text!r}"


@pytest.fixture(scope="module", params=["q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "iq4_nl", "iq4_xs"])
def k_model(request, tmp_path_factory):
    """A random-weight llama whose every matrix (the embedding and output head
    included) is in one K or IQ4 format (tests/model/random_model.py, blocks written
    by tests/model/kquant.py), and the PyTorch reference over that file."""
    torch = pytest.importorskip("torch", reason="PyTorch is absent: the reference forward cannot run")
    torch.set_num_threads(2)
    pytest.importorskip("gguf", reason="the PyPI gguf package is absent: the file cannot be written")
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "model"))
    from random_model import write
    from torch_model import TorchModel
    path = tmp_path_factory.mktemp("kquant") / f"random-llama-{request.param}.gguf"
    write(str(MODEL), str(path), request.param)
    return request.param, path, TorchModel(str(path))


@needs_model
def test_k_and_iq4_weights_match_pytorch_on_every_backend(k_model):
    # Logits against the PyTorch forward over gguf's own dequantization: the
    # CPU's integer kernels (16-bit activations) and the GPU kernels (f32) both
    # within the f16 KV cache's rounding, and the GPU backends without one op
    # falling back to the CPU. 64 positions on the CPU and OpenCL, 16 on
    # WebGPU (lavapipe runs its shaders on the CPU, ~10x slower).
    fmt, path, ref = k_model
    assert "cpu" in check_every_backend(path, ref, fmt, 2e-3)
