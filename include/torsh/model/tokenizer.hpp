#pragma once
// Tokenizers built from a GGUF file's metadata (tokenizer.ggml.*):
//  - "gpt2": byte-level BPE with ranked merges and a pre-tokenizer chosen by
//    tokenizer.ggml.pre ("smollm": digits split one by one, then the GPT-2 regex;
//    "default"/"gpt2": the GPT-2 regex; "llama3"/"llama-bpe": the Llama 3 regex);
//  - "llama": the SentencePiece-style scored vocabulary (merge the pair whose
//    merged piece scores highest, "▁" for spaces, <0xXX> byte fallback).
// Special and control tokens (token_type 3 and 4, e.g. <|im_start|>) are matched
// verbatim in the text before the pre-tokenizer runs, when parse_special is set.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace torsh::model {

class GgufFile;

// What a tokenizer is built from (the GGUF keys it comes from are named).
struct TokenizerData {
  std::string model = "gpt2";       // tokenizer.ggml.model
  std::string pre = "default";      // tokenizer.ggml.pre
  std::vector<std::string> tokens;  // tokenizer.ggml.tokens
  std::vector<float> scores;        // tokenizer.ggml.scores (llama model)
  std::vector<std::int32_t>
      token_types;  // tokenizer.ggml.token_type: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte
  std::vector<std::string> merges;                      // tokenizer.ggml.merges ("a b", gpt2 model)
  std::int32_t bos = -1, eos = -1, unk = -1, pad = -1;  // tokenizer.ggml.*_token_id; -1 when absent
  bool add_bos = false;                                 // tokenizer.ggml.add_bos_token
  bool add_space_prefix = false;                        // tokenizer.ggml.add_space_prefix (llama model)
  std::string chat_template;                            // tokenizer.chat_template
};

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

class Tokenizer {
 public:
  // Checks the data (sizes agree, merges name known tokens, ids in range) and
  // builds the lookup tables; InvalidArgument naming the fault otherwise.
  explicit Tokenizer(TokenizerData data);
  static Tokenizer from_gguf(const GgufFile& file);

  // add_bos follows the data's add_bos when unset.
  std::vector<std::int32_t> encode(std::string_view text, bool parse_special = true,
                                   std::optional<bool> add_bos = std::nullopt) const;
  // Token ids back to text (byte-level decoding; invalid UTF-8 is kept as bytes).
  // Control tokens are left out unless keep_special.
  std::string decode(const std::vector<std::int32_t>& ids, bool keep_special = false) const;
  // One token's bytes as decode() would append them (for streaming; may be a
  // partial UTF-8 sequence).
  std::string token_text(std::int32_t id, bool keep_special = false) const;

  // The model's chat prompt. Templates recognised from tokenizer.chat_template:
  // ChatML (<|im_start|>role\ncontent<|im_end|>\n; this model also inserts its
  // default system message when the first message is not "system", as its
  // template does), Llama 2 [INST] and Llama 3 headers; others are an Unsupported error.
  std::string apply_chat_template(const std::vector<ChatMessage>& messages, bool add_generation_prompt = true) const;

  std::int32_t vocab_size() const;
  std::int32_t bos() const;
  std::int32_t eos() const;
  // Tokens that end generation: eos plus the template's end-of-turn token (<|im_end|>, <|eot_id|>).
  const std::vector<std::int32_t>& stop_tokens() const;
  bool is_special(std::int32_t id) const;
  const TokenizerData& data() const;

 private:
  struct State;
  std::shared_ptr<const State> s_;
};

}  // namespace torsh::model
