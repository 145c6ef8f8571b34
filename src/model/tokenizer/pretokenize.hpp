#pragma once
// The pre-tokenizers of byte-level BPE models: the text is cut into words
// (BPE never merges across them) by the model's regex, written out by hand.
#include <optional>
#include <string_view>
#include <vector>

namespace torsh::model {

enum class PreTokenizer {
  // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  Gpt2,
  // Every \p{N} character split off on its own first, then the GPT-2 regex on
  // the pieces between them (SmolLM: Digits(individual_digits) + ByteLevel).
  SmolLM,
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
  //   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  Llama3,
  // Llama3's with single digits: ...|\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+...
  Qwen2,
};

// tokenizer.ggml.pre names: "smollm", "default"/"gpt2", "llama3"/"llama-v3"/"llama-bpe",
// "qwen2"/"deepseek-r1-qwen"/"megrez".
std::optional<PreTokenizer> pre_tokenizer_named(std::string_view name);

// Appends the words of `text` to `words` (views into `text`, in order, covering
// it). Bytes that are not valid UTF-8 are characters of class "other".
void pretokenize(PreTokenizer kind, std::string_view text, std::vector<std::string_view>& words);

}  // namespace torsh::model
