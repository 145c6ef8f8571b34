#include "tokenizer_check.hpp"

#include <limits>
#include <string>

#include "pretokenize.hpp"
#include "torsh/core/error.hpp"
#include "vocab.hpp"

namespace torsh::model {

namespace {

[[noreturn]] void invalid(const std::string& what) {
  throw Error(ErrorCode::InvalidArgument, "tokenizer data: " + what, {.op = "tokenizer"},
              {"Check the tokenizer.ggml.* metadata of the model file"});
}

void check_size(const char* name, std::size_t size, std::size_t n_tokens) {
  if (size != 0 && size != n_tokens)
    invalid(std::string(name) + " has " + std::to_string(size) + " entries for " + std::to_string(n_tokens) +
            " tokens");
}

void check_id(const char* name, std::int32_t id, std::size_t n_tokens) {
  if (id < -1 || (id >= 0 && static_cast<std::size_t>(id) >= n_tokens))
    invalid(std::string(name) + " " + std::to_string(id) + " is not a token id (the vocabulary has " +
            std::to_string(n_tokens) + " tokens; -1 stands for none)");
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

void check_tokenizer_data(const TokenizerData& data) {
  if (data.model != "gpt2" && data.model != "llama")
    throw Error(ErrorCode::Unsupported, "tokenizer model \"" + data.model + "\" is not supported (gpt2 and llama are)",
                {.op = "tokenizer"});
  if (data.model == "gpt2" && !pre_tokenizer_named(data.pre))
    throw Error(ErrorCode::Unsupported,
                "pre-tokenizer \"" + data.pre + "\" is not supported (smollm, default, gpt2, llama3 and llama-bpe are)",
                {.op = "tokenizer"});
  const std::size_t n = data.tokens.size();
  if (n == 0) invalid("the vocabulary is empty");
  if (n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    invalid(std::to_string(n) + " tokens do not fit 32-bit ids");
  check_size("token_type", data.token_types.size(), n);
  check_size("scores", data.scores.size(), n);
  for (std::size_t i = 0; i < data.token_types.size(); ++i)
    if (data.token_types[i] < kTokenUndefined || data.token_types[i] > kTokenByte)
      invalid("token " + std::to_string(i) + " has type " + std::to_string(data.token_types[i]) +
              " (types are 0 to 6)");
  check_id("bos", data.bos, n);
  check_id("eos", data.eos, n);
  check_id("unk", data.unk, n);
  check_id("pad", data.pad, n);
  if (data.add_bos && data.bos < 0) invalid("add_bos is set but there is no bos token");
  byte_tokens(data);
}

std::array<std::int32_t, 256> byte_tokens(const TokenizerData& data) {
  std::array<std::int32_t, 256> tokens;
  tokens.fill(-1);
  for (std::size_t i = 0; i < data.token_types.size(); ++i) {
    if (data.token_types[i] != kTokenByte) continue;
    const std::string& t = data.tokens[i];
    int hi = t.size() == 6 ? hex_digit(t[3]) : -1, lo = t.size() == 6 ? hex_digit(t[4]) : -1;
    if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>' || hi < 0 || lo < 0)
      invalid("token " + std::to_string(i) + " \"" + t + "\" has the byte type but is not spelled <0xXX>");
    auto& slot = tokens[static_cast<std::size_t>(hi * 16 + lo)];
    if (slot < 0) slot = static_cast<std::int32_t>(i);
  }
  return tokens;
}

}  // namespace torsh::model
