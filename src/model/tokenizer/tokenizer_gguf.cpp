// Tokenizer::from_gguf: the tokenizer.ggml.* metadata into TokenizerData.
#include <limits>

#include "torsh/core/error.hpp"
#include "torsh/model/gguf.hpp"
#include "torsh/model/tokenizer.hpp"

namespace torsh::model {

namespace {

std::int32_t token_id(const GgufFile& file, std::string_view key) {
  std::int64_t id = file.get_int(key, -1);
  if (id < -1 || id > std::numeric_limits<std::int32_t>::max())
    throw Error(ErrorCode::InvalidArgument,
                file.path() + ": " + std::string(key) + " = " + std::to_string(id) + " is not a token id",
                {.op = "tokenizer"});
  return static_cast<std::int32_t>(id);
}

}  // namespace

Tokenizer Tokenizer::from_gguf(const GgufFile& file) {
  TokenizerData d;
  d.model = file.get_string("tokenizer.ggml.model");
  d.pre = file.get_string("tokenizer.ggml.pre", "default");
  d.tokens = file.get_strings("tokenizer.ggml.tokens");
  if (file.find("tokenizer.ggml.scores")) d.scores = file.get_floats("tokenizer.ggml.scores");
  if (file.find("tokenizer.ggml.token_type")) {
    for (std::int64_t t : file.get_ints("tokenizer.ggml.token_type")) {
      // Out-of-range values are refused by the Tokenizer's checks (types are 0 to 6).
      d.token_types.push_back(t < 0 || t > 255 ? -1 : static_cast<std::int32_t>(t));
    }
  }
  if (file.find("tokenizer.ggml.merges")) d.merges = file.get_strings("tokenizer.ggml.merges");
  d.bos = token_id(file, "tokenizer.ggml.bos_token_id");
  d.eos = token_id(file, "tokenizer.ggml.eos_token_id");
  d.unk = token_id(file, "tokenizer.ggml.unknown_token_id");
  d.pad = token_id(file, "tokenizer.ggml.padding_token_id");
  // Absent keys take llama.cpp's defaults: SentencePiece models add BOS and a space prefix.
  const bool sentencepiece = d.model == "llama";
  d.add_bos = file.get_bool("tokenizer.ggml.add_bos_token", sentencepiece && d.bos >= 0);
  d.add_space_prefix = file.get_bool("tokenizer.ggml.add_space_prefix", sentencepiece);
  d.chat_template = file.get_string("tokenizer.chat_template", "");
  return Tokenizer(std::move(d));
}

}  // namespace torsh::model
