#pragma once
// The decoder architectures the forward runs, as data: what each GGUF
// `general.architecture` changes in the one forward pass (model.cpp). A file
// of an architecture not in the table is refused at load, naming it.
#include <string_view>

#include "torsh/ops/ops.hpp"

namespace torsh::model {

struct Architecture {
  std::string_view name;  // general.architecture, and the prefix of its metadata keys
  // llama: adjacent pairs (the converter permutes Q and K rows for them);
  // qwen2 / qwen3: NeoX halves (i, i + rope_dim / 2), the checkpoint's own order.
  ops::RopeStyle rope;
  bool qk_norm;             // attn_q_norm / attn_k_norm: RMSNorm over each head before RoPE
  bool rope_freqs;          // may carry rope_freqs.weight (Llama 3.1 / 3.2's frequency factors)
  std::string_view models;  // what users know the files as, for messages
};

// nullptr for a name not in the table (supported_architectures() lists it).
const Architecture* find_architecture(std::string_view name);

}  // namespace torsh::model
