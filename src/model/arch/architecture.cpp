// The architecture table (architecture.hpp). Every architecture shares the
// pre-norm decoder: RMSNorm, attention over a KV cache with grouped-query
// heads, SwiGLU; optional Q/K/V/output biases are read wherever a file has
// them (llama.cpp reads them for these architectures too).
#include "architecture.hpp"

#include <iterator>
#include <string>

#include "torsh/model/model.hpp"

namespace torsh::model {
namespace {

using ops::RopeStyle;

constexpr std::string_view kGemma2Keys[] = {"attention.sliding_window", "attention.sliding_window_pattern",
                                            "rope.freq_base_swa", "attn_logit_softcapping", "final_logit_softcapping"};
constexpr std::string_view kGemma3Keys[] = {"attention.sliding_window", "attention.sliding_window_pattern",
                                            "rope.freq_base_swa", "final_logit_softcapping"};

// Phi-3's files name a sliding window that llama.cpp does not apply (its
// src/models/phi3.cpp: "Phi SWA is currently disabled"); it is read and not
// applied here either, so both run the same model.
constexpr std::string_view kPhi3Keys[] = {"attention.sliding_window"};

// llama.cpp's src/models/{llama,qwen2,qwen3,gemma2,gemma3,phi3}.cpp are the reference for each row.
constexpr Architecture kArchitectures[] = {
    {"llama", RopeStyle::GptJ, false, true, "Llama 1-3.x, SmolLM, TinyLlama, Mistral without a sliding window"},
    {"qwen2", RopeStyle::NeoX, false, false, "Qwen2, Qwen2.5"},
    {"qwen3", RopeStyle::NeoX, true, false, "Qwen3 dense"},
    // Gemma 2: local layers (window 4096 unless the file says) alternate with global ones,
    // attention and final logits soft-capped at 50 and 30 unless the file says.
    {"gemma2", RopeStyle::NeoX, false, false, "Gemma 2", true, 2, 4096, 50.0f, 30.0f, kGemma2Keys},
    // Gemma 3: five local layers (their own RoPE base, 10000 by default) to one global, q/k head norms.
    {"gemma3", RopeStyle::NeoX, true, false, "Gemma 3 text", true, 6, 0, 0.0f, 0.0f, kGemma3Keys},
    // Phi-3: fused attn_qkv and gate-up ffn_up (any architecture's fused tensors are read as views).
    {"phi3", RopeStyle::NeoX, false, true, "Phi-3, Phi-3.5 mini and medium", false, 0, 0, 0.0f, 0.0f, kPhi3Keys},
};

}  // namespace

const Architecture* find_architecture(std::string_view name) {
  for (const Architecture& a : kArchitectures)
    if (a.name == name) return &a;
  return nullptr;
}

std::string supported_architectures() {
  std::string out;
  const auto n = std::size(kArchitectures);
  for (std::size_t i = 0; i < n; ++i) {
    out += i == 0 ? "" : i + 1 == n ? " and " : ", ";
    out += std::string(kArchitectures[i].name) + " (" + std::string(kArchitectures[i].models) + ")";
  }
  return out;
}

}  // namespace torsh::model
