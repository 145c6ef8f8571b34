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

constexpr Architecture kArchitectures[] = {
    {"llama", RopeStyle::GptJ, false, true, "Llama 1-3.x, SmolLM, TinyLlama, Mistral without a sliding window"},
    {"qwen2", RopeStyle::NeoX, false, false, "Qwen2, Qwen2.5"},
    {"qwen3", RopeStyle::NeoX, true, false, "Qwen3 dense"},
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
