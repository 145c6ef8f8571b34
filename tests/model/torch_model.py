"""An independent decoder forward pass in PyTorch, for checking torsh's.

Weights come from the GGUF file through the PyPI ``gguf`` package's own
reader and dequantizer (not torsh's); the math is written out here in f32 from
each architecture's definition (llama.cpp's src/models/*.cpp):

- llama: RMSNorm, RoPE on adjacent pairs (GGUF llama files permute Q and K
  for it), Llama 3.1's frequency factors (rope_freqs.weight) dividing the
  angles, grouped-query attention with a KV cache, SwiGLU, tied embeddings;
- qwen2: the same with RoPE on NeoX halves and Q/K/V biases;
- qwen3: NeoX halves, RMSNorm over each query and key head before RoPE, and a
  head size of its own (attention.key_length);
- gemma2 / gemma3: NeoX halves, embeddings times sqrt(n_embd), GeGLU (tanh
  GELU), RMSNorm on the attention's and the feed-forward's outputs before the
  residual, sliding-window layers (every layer i with i % n < n - 1, n the
  pattern: 2 for gemma2, 6 for gemma3 unless the file says) with their own RoPE
  base (gemma3: 10000 and no linear scaling), logit soft-caps on the scores and
  the output (gemma2; 50 and 30 unless the file says), q/k head norms (gemma3);
- phi3: NeoX halves, Q, K and V as row ranges of one fused attn_qkv, the gate
  and up projections as the two halves of ffn_up, LongRoPE's factors (the
  short ones unless `ctx` exceeds the original context, as llama.cpp picks)
  and the RoPE attention factor on the rotated queries and keys (scores times
  its square).
"""

import gguf
import numpy as np
import torch

NEOX = {"llama": False, "qwen2": True, "qwen3": True, "gemma2": True, "gemma3": True, "phi3": True}
SWA_PATTERN = {"gemma2": 2, "gemma3": 6}


class TorchModel:
    def __init__(self, path, ctx=0):
        r = gguf.GGUFReader(path)
        f = {k: v.contents() for k, v in r.fields.items()
             if not k.startswith("tokenizer.")}
        self.arch = f["general.architecture"]
        a = self.arch + "."
        self.n_layers = f[a + "block_count"]
        self.n_embd = f[a + "embedding_length"]
        self.n_head = f[a + "attention.head_count"]
        self.n_head_kv = f[a + "attention.head_count_kv"]
        self.head_dim = f.get(a + "attention.key_length", self.n_embd // self.n_head)
        self.rope_dim = f.get(a + "rope.dimension_count", self.head_dim)
        self.base = float(f.get(a + "rope.freq_base", 10000.0))
        self.eps = float(f[a + "attention.layer_norm_rms_epsilon"])
        self.neox = NEOX[self.arch]
        self.gemma = self.arch.startswith("gemma")
        self.scale = 1.0
        if f.get(a + "rope.scaling.type", "none") == "linear":
            self.scale = float(f[a + "rope.scaling.factor"])
        self.window, self.local = 0, [False] * self.n_layers
        self.base_local, self.scale_local = self.base, self.scale
        self.attn_cap = self.final_cap = 0.0
        if self.gemma:
            self.window = f.get(a + "attention.sliding_window", 4096 if self.arch == "gemma2" else 0)
            n = f.get(a + "attention.sliding_window_pattern", SWA_PATTERN[self.arch])
            self.local = [self.window > 0 and (n == 0 or i % n < n - 1) for i in range(self.n_layers)]
            if self.arch == "gemma3":
                self.base_local, self.scale_local = 10000.0, 1.0
            self.base_local = float(f.get(a + "rope.freq_base_swa", self.base_local))
            self.attn_cap = float(f.get(a + "attn_logit_softcapping", 50.0 if self.arch == "gemma2" else 0.0))
            self.final_cap = float(f.get(a + "final_logit_softcapping", 30.0 if self.arch == "gemma2" else 0.0))
        tensors = {t.name: t for t in r.tensors}

        def w(name):
            t = tensors[name]
            x = gguf.quants.dequantize(t.data, t.tensor_type)
            return torch.from_numpy(np.array(x, dtype=np.float32))  # a writable copy

        self.embd = w("token_embd.weight")
        self.out_norm = w("output_norm.weight")
        self.output = w("output.weight") if "output.weight" in tensors else self.embd
        self.freq_factors = None
        n_ctx_orig = f.get(a + "rope.scaling.original_context_length", f.get(a + "context_length", 0))
        long = ctx > n_ctx_orig
        for name in ("rope_freqs.weight", "rope_factors_long.weight" if long else "rope_factors_short.weight"):
            if name in tensors:
                self.freq_factors = w(name).double()
        self.attn_factor = float(f.get(a + "rope.scaling.attn_factor", 1.0))
        self.layers = []
        for i in range(self.n_layers):
            p = f"blk.{i}."
            names = ["attn_norm", "ffn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                     "ffn_gate", "ffn_up", "ffn_down", "attn_q_norm", "attn_k_norm", "post_attention_norm",
                     "post_ffw_norm"]
            layer = {k: w(p + k + ".weight") for k in names if p + k + ".weight" in tensors}
            if p + "attn_qkv.weight" in tensors:  # rows: Q, then K, then V
                qkv = w(p + "attn_qkv.weight")
                nq, nkv = self.n_head * self.head_dim, self.n_head_kv * self.head_dim
                layer["attn_q"], layer["attn_k"], layer["attn_v"] = qkv[:nq], qkv[nq:nq + nkv], qkv[nq + nkv:]
            if "ffn_gate" not in layer:  # ffn_up's rows: the gate's, then the up projection's
                n_ff = layer["ffn_up"].shape[0] // 2
                layer["ffn_gate"], layer["ffn_up"] = layer["ffn_up"][:n_ff], layer["ffn_up"][n_ff:]
            for k in ("attn_q", "attn_k", "attn_v", "attn_output"):
                layer[k + ".bias"] = w(p + k + ".bias") if p + k + ".bias" in tensors else 0.0
            self.layers.append(layer)
        self.reset()

    def reset(self):
        self.k = [None] * self.n_layers
        self.v = [None] * self.n_layers
        self.pos = 0

    def rms_norm(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * w

    def rope(self, x, positions, local=False):
        """x [S, H, D]: pair i (adjacent: 2i, 2i + 1; NeoX: i, i + rope_dim / 2)
        rotates by pos * base^(-2i/rope_dim) / freq_factor[i] / linear scale."""
        half = self.rope_dim // 2
        base, scale = (self.base_local, self.scale_local) if local else (self.base, self.scale)
        inv = base ** (-torch.arange(0, half, dtype=torch.float64) * 2 / self.rope_dim) / scale
        if self.freq_factors is not None:
            inv = inv / self.freq_factors
        ang = positions[:, None].double() * inv[None, :]
        cos, sin = ang.cos().float()[:, None, :], ang.sin().float()[:, None, :]
        out = x.clone()
        if self.neox:
            i0, i1 = slice(0, half), slice(half, self.rope_dim)
        else:
            i0, i1 = slice(0, self.rope_dim, 2), slice(1, self.rope_dim, 2)
        x0, x1 = x[..., i0], x[..., i1]
        out[..., i0] = x0 * cos - x1 * sin
        out[..., i1] = x0 * sin + x1 * cos
        return out

    @torch.no_grad()
    def forward(self, tokens):
        """Logits [len(tokens), vocab] of tokens appended at the current position."""
        s = len(tokens)
        positions = torch.arange(self.pos, self.pos + s)
        x = self.embd[torch.tensor(tokens, dtype=torch.long)]
        if self.gemma:
            x = x * torch.tensor(self.n_embd, dtype=torch.float32).sqrt()
        group = self.n_head // self.n_head_kv
        for i, l in enumerate(self.layers):
            h = self.rms_norm(x, l["attn_norm"])
            q = (h @ l["attn_q"].T + l["attn_q.bias"]).view(s, self.n_head, self.head_dim)
            k = (h @ l["attn_k"].T + l["attn_k.bias"]).view(s, self.n_head_kv, self.head_dim)
            v = (h @ l["attn_v"].T + l["attn_v.bias"]).view(s, self.n_head_kv, self.head_dim)
            if "attn_q_norm" in l:
                q = self.rms_norm(q, l["attn_q_norm"])
                k = self.rms_norm(k, l["attn_k_norm"])
            q, k = self.rope(q, positions, self.local[i]), self.rope(k, positions, self.local[i])
            self.k[i] = k if self.k[i] is None else torch.cat([self.k[i], k])
            self.v[i] = v if self.v[i] is None else torch.cat([self.v[i], v])
            kk = self.k[i].repeat_interleave(group, dim=1)  # query head h reads kv head h // group
            vv = self.v[i].repeat_interleave(group, dim=1)
            scores = torch.einsum("shd,thd->hst", q, kk) / self.head_dim ** 0.5 * self.attn_factor ** 2
            if self.attn_cap:
                scores = self.attn_cap * torch.tanh(scores / self.attn_cap)
            t = kk.shape[0]
            mask = torch.arange(t)[None, :] > (positions[:, None])  # causal: key j visible when j <= pos
            if self.local[i]:  # and, in a sliding-window layer, when j > pos - window
                mask = mask | (torch.arange(t)[None, :] <= positions[:, None] - self.window)
            scores = scores.masked_fill(mask[None], float("-inf"))
            o = torch.einsum("hst,thd->shd", scores.softmax(-1), vv).reshape(s, self.n_head * self.head_dim)
            a = o @ l["attn_output"].T + l["attn_output.bias"]
            x = x + (self.rms_norm(a, l["post_attention_norm"]) if self.gemma else a)
            h = self.rms_norm(x, l["ffn_norm"])
            g = h @ l["ffn_gate"].T
            g = torch.nn.functional.gelu(g, approximate="tanh") if self.gemma else torch.nn.functional.silu(g)
            f = (g * (h @ l["ffn_up"].T)) @ l["ffn_down"].T
            x = x + (self.rms_norm(f, l["post_ffw_norm"]) if self.gemma else f)
        self.pos += s
        logits = self.rms_norm(x, self.out_norm) @ self.output.T
        if self.final_cap:
            logits = self.final_cap * torch.tanh(logits / self.final_cap)
        return logits

    def greedy(self, prompt, n):
        self.reset()
        logits = self.forward(prompt)
        out = []
        for _ in range(n):
            tok = int(torch.argmax(logits[-1]))
            out.append(tok)
            logits = self.forward([tok])
        return out
