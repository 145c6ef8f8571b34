#pragma once
// The decoder architectures the forward runs, as data: what each GGUF
// `general.architecture` changes in the one forward pass (model.cpp). A file
// of an architecture not in the table is refused at load, naming it.
#include <span>
#include <string_view>

#include "torsh/ops/ops.hpp"

namespace torsh::model {

struct Architecture {
  std::string_view name;  // general.architecture, and the prefix of its metadata keys
  // llama: adjacent pairs (the converter permutes Q and K rows for them);
  // qwen2 / qwen3: NeoX halves (i, i + rope_dim / 2), the checkpoint's own order.
  ops::RopeStyle rope;
  bool qk_norm;  // attn_q_norm / attn_k_norm: RMSNorm over each head before RoPE
  // May carry frequency factors: rope_freqs.weight (Llama 3.1 / 3.2) or, Phi-3's
  // LongRoPE, rope_factors_short / rope_factors_long.weight (the short ones up to
  // rope.scaling.original_context_length tokens of context, as llama.cpp picks).
  bool rope_freqs;
  std::string_view models;  // what users know the files as, for messages
  // Gemma's decoder: embeddings scaled by sqrt(n_embd), GeGLU (tanh GELU)
  // for SwiGLU, RMSNorm on the attention's and the feed-forward's outputs
  // (attn_post_norm, ffn_post_norm) before they join the residual.
  bool gemma = false;
  // Sliding-window layers: with a window, layer i is local when i % n < n - 1
  // ({arch}.attention.sliding_window_pattern overrides n); 0: none.
  int swa_pattern = 0;
  // Gemma 2: the window and soft-caps it takes when its file names none.
  std::int64_t default_window = 0;
  float default_attn_softcap = 0.0f, default_final_softcap = 0.0f;
  // The architecture's {arch}.* keys beyond the shared decoder's.
  std::span<const std::string_view> keys = {};
};

// nullptr for a name not in the table (supported_architectures() lists it).
const Architecture* find_architecture(std::string_view name);

}  // namespace torsh::model
