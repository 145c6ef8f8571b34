"""An independent llama forward pass in PyTorch, for checking torsh's.

Weights come from the GGUF file through the PyPI ``gguf`` package's own
reader and dequantizer (not torsh's); the math is written out here in f32:
RMSNorm, RoPE on adjacent pairs (GGUF llama files permute Q and K for it),
grouped-query attention with a KV cache, SwiGLU, tied embeddings.
"""

import gguf
import numpy as np
import torch


class TorchLlama:
    def __init__(self, path):
        r = gguf.GGUFReader(path)
        f = {k: v.contents() for k, v in r.fields.items()
             if not k.startswith("tokenizer.")}
        a = f["general.architecture"] + "."
        self.n_layers = f[a + "block_count"]
        self.n_embd = f[a + "embedding_length"]
        self.n_head = f[a + "attention.head_count"]
        self.n_head_kv = f[a + "attention.head_count_kv"]
        self.head_dim = self.n_embd // self.n_head
        self.rope_dim = f.get(a + "rope.dimension_count", self.head_dim)
        self.base = float(f.get(a + "rope.freq_base", 10000.0))
        self.eps = float(f[a + "attention.layer_norm_rms_epsilon"])
        tensors = {t.name: t for t in r.tensors}

        def w(name):
            t = tensors[name]
            x = gguf.quants.dequantize(t.data, t.tensor_type)
            return torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))

        self.embd = w("token_embd.weight")
        self.out_norm = w("output_norm.weight")
        self.output = w("output.weight") if "output.weight" in tensors else self.embd
        self.layers = []
        for i in range(self.n_layers):
            p = f"blk.{i}."
            self.layers.append({k: w(p + k + ".weight") for k in (
                "attn_norm", "ffn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                "ffn_gate", "ffn_up", "ffn_down")})
        self.reset()

    def reset(self):
        self.k = [None] * self.n_layers
        self.v = [None] * self.n_layers
        self.pos = 0

    def rms_norm(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * w

    def rope(self, x, positions):  # x [S, H, D]: pairs (2i, 2i + 1) rotate by pos * base^(-2i/rot)
        half = self.rope_dim // 2
        inv = self.base ** (-torch.arange(0, half, dtype=torch.float64) * 2 / self.rope_dim)
        ang = positions[:, None].double() * inv[None, :]
        cos, sin = ang.cos().float()[:, None, :], ang.sin().float()[:, None, :]
        out = x.clone()
        x0, x1 = x[..., 0:self.rope_dim:2], x[..., 1:self.rope_dim:2]
        out[..., 0:self.rope_dim:2] = x0 * cos - x1 * sin
        out[..., 1:self.rope_dim:2] = x0 * sin + x1 * cos
        return out

    @torch.no_grad()
    def forward(self, tokens):
        """Logits [len(tokens), vocab] of tokens appended at the current position."""
        s = len(tokens)
        positions = torch.arange(self.pos, self.pos + s)
        x = self.embd[torch.tensor(tokens, dtype=torch.long)]
        group = self.n_head // self.n_head_kv
        for i, l in enumerate(self.layers):
            h = self.rms_norm(x, l["attn_norm"])
            q = self.rope((h @ l["attn_q"].T).view(s, self.n_head, self.head_dim), positions)
            k = self.rope((h @ l["attn_k"].T).view(s, self.n_head_kv, self.head_dim), positions)
            v = (h @ l["attn_v"].T).view(s, self.n_head_kv, self.head_dim)
            self.k[i] = k if self.k[i] is None else torch.cat([self.k[i], k])
            self.v[i] = v if self.v[i] is None else torch.cat([self.v[i], v])
            kk = self.k[i].repeat_interleave(group, dim=1)  # query head h reads kv head h // group
            vv = self.v[i].repeat_interleave(group, dim=1)
            scores = torch.einsum("shd,thd->hst", q, kk) / self.head_dim ** 0.5
            t = kk.shape[0]
            mask = torch.arange(t)[None, :] > (positions[:, None])  # causal: key j visible when j <= pos
            scores = scores.masked_fill(mask[None], float("-inf"))
            o = torch.einsum("hst,thd->shd", scores.softmax(-1), vv).reshape(s, self.n_embd)
            x = x + o @ l["attn_output"].T
            h = self.rms_norm(x, l["ffn_norm"])
            x = x + (torch.nn.functional.silu(h @ l["ffn_gate"].T) * (h @ l["ffn_up"].T)) @ l["ffn_down"].T
        self.pos += s
        return self.rms_norm(x, self.out_norm) @ self.output.T

    def greedy(self, prompt, n):
        self.reset()
        logits = self.forward(prompt)
        out = []
        for _ in range(n):
            tok = int(torch.argmax(logits[-1]))
            out.append(tok)
            logits = self.forward([tok])
        return out
