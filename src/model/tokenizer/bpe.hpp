#pragma once
// Byte-level BPE (GPT-2 style): a word's bytes start as the tokens of their
// byte-level characters, then the adjacent pair with the best-ranked merge
// (earliest in the merge list) is merged, leftmost first, until no pair has a
// merge.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vocab.hpp"

namespace torsh::model {

class BytePairEncoder {
 public:
  // `merges` are "left right" token texts; each must name two tokens whose
  // concatenation is a token (InvalidArgument naming the merge otherwise).
  // `whole_words_first`: a word that is itself a token is taken as it is,
  // before any merging (Llama 3's tokenizer does this).
  //
  // A byte whose character is not in the vocabulary is dropped (SmolLM2 lacks
  // 21, e.g. 0x04 and the UTF-8 lead bytes 0xF1, 0xF2): Hugging Face
  // tokenizers and llama.cpp drop it too, and the model never saw an unknown
  // token in its place.
  BytePairEncoder(const TokenIndex& index, const std::vector<std::string>& merges, bool whole_words_first);

  void encode_word(std::string_view word, std::vector<std::int32_t>& out) const;

  // A vocabulary token's bytes: its byte-level characters mapped back to bytes
  // (a character outside the map is kept as its UTF-8).
  static std::string token_bytes(std::string_view token);

 private:
  struct Merge {
    std::int32_t rank;
    std::int32_t result;
  };
  static std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
  }

  const TokenIndex& index_;
  std::array<std::int32_t, 256> byte_token_;  // -1: not in the vocabulary
  std::array<std::string, 256> byte_text_;    // each byte's byte-level character, UTF-8
  std::unordered_map<std::uint64_t, Merge> merges_;
  bool whole_words_first_;
};

}  // namespace torsh::model
