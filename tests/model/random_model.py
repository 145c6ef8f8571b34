"""Writes a random-weight decoder GGUF of an architecture (llama, llama3:
llama with Llama 3.1's rope_freqs.weight, qwen2, qwen3, gemma2, gemma3) whose matrices all have rows of a
multiple of 256, so every K format (and IQ4_NL, IQ4_XS) is the weight of every
matmul (the token embedding, tied to the output head, included); SmolLM2's own rows (576)
are not, so its K-quant files hold Q5_0/Q8_0 for most tensors. The tokenizer
and chat template come from a real file (the cached SmolLM2). Weights are
~N(0, 0.02) and norms near 1, as trained models have them.

    python tests/model/random_model.py TOKENIZER_SRC.gguf DST.gguf q4_k [small|1b|...] [llama|llama3|qwen2|qwen3|gemma2|gemma3]

Per architecture, what its files carry beyond llama's tensors: llama3 the
frequency factors Llama 3.1's converter writes (factor 8, low/high frequency
factors 1 and 4, original context 8192) and base 500000; qwen2 Q/K/V biases
(~N(0, 0.3): large enough that a forward ignoring them fails); qwen3
attn_q_norm / attn_k_norm over 128-wide heads (key_length, so the queries are
wider than the embedding, as Qwen3's are). The tokenizer is SmolLM2's
vocabulary under the pre-tokenizer each family's files name (llama-bpe, qwen2).

Shapes: "small" (the tests': 256 wide, 2 layers), "qwen2-0.5b" and "qwen3-0.6b"
(those models' layers, for scripts/bench/llm_arch.sh) and "1b" (Llama 3.2 1B's
layers, 2048 wide, 16 layers, 32 query and 8 key/value heads, 8192 FFN, with
SmolLM2's 49152-token vocabulary: 1.07e9 parameters; written as f16 for
llama-quantize to turn into the files people download, for decode speed
where memory bandwidth is the limit).
"""

import pathlib
import sys

import gguf
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kquant  # noqa: E402

SHAPES = {  # n_embd, n_ff, n_head, n_head_kv, n_layer
    "small": (256, 768, 4, 2, 2),
    "1b": (2048, 8192, 32, 8, 16),
    # Qwen2.5-0.5B's, Qwen3-0.6B's and Gemma-3-1B's layers (head sizes 64, 128, 256), SmolLM2's vocabulary.
    "qwen2-0.5b": (896, 4864, 14, 2, 24),
    "qwen3-0.6b": (1024, 3072, 16, 8, 28),
    "gemma3-1b": (1152, 6912, 4, 1, 26),
}
HEAD_DIM = {"gemma3-1b": 256}  # else 128 for qwen3 / gemma3, n_embd / n_head for the others


def llama3_freq_factors(head_dim, base, factor=8.0, low=1.0, high=4.0, original=8192):
    """Llama 3.1's RoPE frequency factors (convert_hf_to_gguf.py's rope_freqs)."""
    out = []
    for i in range(0, head_dim, 2):
        wavelen = 2 * np.pi * base ** (i / head_dim)
        if wavelen < original / high:
            out.append(1.0)
        elif wavelen > original / low:
            out.append(factor)
        else:
            smooth = (original / wavelen - low) / (high - low)
            out.append(1.0 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def write(src, dst, type_name, seed=7, shape="small", arch="llama"):
    N_EMBD, N_FF, N_HEAD, N_HEAD_KV, N_LAYER = SHAPES[shape]
    gguf_arch = "llama" if arch == "llama3" else arch
    r = gguf.GGUFReader(src)
    w = gguf.GGUFWriter(dst, gguf_arch)
    vocab = None
    # The pre-tokenizer each family's files name (SmolLM2's vocabulary under it).
    pre = {"llama3": "llama-bpe", "qwen2": "qwen2", "qwen3": "qwen2"}.get(arch)  # gemma: SmolLM2's own
    if pre:
        w.add_tokenizer_pre(pre)
    for key, field in r.fields.items():
        if not key.startswith("tokenizer.") or (pre and key == "tokenizer.ggml.pre"):
            continue
        main = field.types[0]
        sub = field.types[-1] if main == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(key, field.contents(), main, sub)
        if key == "tokenizer.ggml.tokens":
            vocab = len(field.contents())
    # (llama.cpp sets Phi-3's special tokens' attributes when the name says
    # "phi3", and SmolLM2's vocabulary has none of them: that file is "ph-3".)
    w.add_name(f"random-{arch.replace('phi3', 'ph-3')}-{shape}-{type_name}")
    w.add_block_count(N_LAYER)
    w.add_context_length(2048)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD_KV)
    head_dim = HEAD_DIM.get(shape, 128 if arch in ("qwen3", "gemma3") else N_EMBD // N_HEAD)
    base = {"llama3": 500000.0, "gemma3": 1000000.0}.get(arch, 10000.0)
    if arch in ("qwen3", "gemma3"):
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
    if arch == "phi3":
        # Phi-3-mini-128k's kind of file: LongRoPE factor pairs with an
        # attention factor and an original context (the short factors apply
        # within it), and the sliding window its files name.
        w.add_uint32("phi3.rope.scaling.original_context_length", 4096)
        w.add_float32("phi3.rope.scaling.attn_factor", 1.19)
        w.add_sliding_window(2047)
    if arch.startswith("gemma") and shape != "small":
        w.add_sliding_window(512)  # Gemma 3 1B's, with its pattern of 6 (the default)
    elif arch.startswith("gemma"):
        # A window of 8 and a local/global pattern of 2, so a 64-token prompt
        # crosses both kinds of layer; soft-caps (gemma2) small enough to bend
        # random weights' scores and logits; gemma3's global layers with
        # linear RoPE scaling 8 (as Gemma 3 4B's), its local ones at base 10000.
        w.add_sliding_window(8)
        w.add_uint32(f"{arch}.attention.sliding_window_pattern", 2)
        if arch == "gemma2":
            w.add_float32("gemma2.attn_logit_softcapping", 0.5)
            w.add_float32("gemma2.final_logit_softcapping", 2.0)
        else:
            w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
            w.add_rope_scaling_factor(8.0)
    if arch != "qwen2":  # qwen2 files leave it to the head size
        w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(base)
    w.add_layer_norm_rms_eps(1e-5 if arch == "llama" else 1e-6)
    w.add_vocab_size(vocab)

    rng = np.random.default_rng(seed)

    def matrix(name, rows, cols):
        x = (rng.standard_normal((rows, cols)) * 0.02).astype(np.float32)
        if type_name in kquant.QUANTIZERS:
            qtype = gguf.GGMLQuantizationType[type_name.upper()]
            w.add_tensor(name, kquant.quantize(x, type_name), raw_dtype=qtype)
        elif type_name == "f32":
            w.add_tensor(name, x)
        else:
            qtype = gguf.GGMLQuantizationType[type_name.upper()]
            w.add_tensor(name, gguf.quants.quantize(x, qtype), raw_dtype=qtype)

    def norm(name, n=N_EMBD):
        w.add_tensor(name, (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32))

    def bias(name, n):
        w.add_tensor(name, (0.3 * rng.standard_normal(n)).astype(np.float32))

    matrix("token_embd.weight", vocab, N_EMBD)
    if arch == "llama3":
        w.add_tensor("rope_freqs.weight", llama3_freq_factors(head_dim, base))
    if arch == "phi3":
        w.add_tensor("rope_factors_short.weight", (1.0 + 2.0 * rng.random(head_dim // 2)).astype(np.float32))
        w.add_tensor("rope_factors_long.weight", (4.0 + 20.0 * rng.random(head_dim // 2)).astype(np.float32))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        norm(p + "attn_norm.weight")
        if arch == "phi3":  # fused: Q, K and V rows in one matrix
            matrix(p + "attn_qkv.weight", (N_HEAD + 2 * N_HEAD_KV) * head_dim, N_EMBD)
        else:
            matrix(p + "attn_q.weight", N_HEAD * head_dim, N_EMBD)
            matrix(p + "attn_k.weight", N_HEAD_KV * head_dim, N_EMBD)
            matrix(p + "attn_v.weight", N_HEAD_KV * head_dim, N_EMBD)
        if arch == "qwen2":
            bias(p + "attn_q.bias", N_HEAD * head_dim)
            bias(p + "attn_k.bias", N_HEAD_KV * head_dim)
            bias(p + "attn_v.bias", N_HEAD_KV * head_dim)
        if arch in ("qwen3", "gemma3"):
            norm(p + "attn_q_norm.weight", head_dim)
            norm(p + "attn_k_norm.weight", head_dim)
        matrix(p + "attn_output.weight", N_EMBD, N_HEAD * head_dim)
        if arch.startswith("gemma"):
            norm(p + "post_attention_norm.weight")
        norm(p + "ffn_norm.weight")
        if arch == "phi3":  # fused: the gate's rows, then the up projection's
            matrix(p + "ffn_up.weight", 2 * N_FF, N_EMBD)
        else:
            matrix(p + "ffn_gate.weight", N_FF, N_EMBD)
            matrix(p + "ffn_up.weight", N_FF, N_EMBD)
        matrix(p + "ffn_down.weight", N_EMBD, N_FF)
        if arch.startswith("gemma"):
            norm(p + "post_ffw_norm.weight")
    norm("output_norm.weight")  # the output head is the token embedding (tied), as in SmolLM2
    if arch == "phi3":  # except Phi-3's, a matrix of its own
        matrix("output.weight", vocab, N_EMBD)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    write(sys.argv[1], sys.argv[2], sys.argv[3], shape=sys.argv[4] if len(sys.argv) > 4 else "small",
          arch=sys.argv[5] if len(sys.argv) > 5 else "llama")
