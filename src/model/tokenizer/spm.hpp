#pragma once
// SentencePiece-style BPE over a scored vocabulary (llama.cpp's "llama"
// tokenizer): the text starts as its characters; the adjacent pair whose
// concatenation is a piece with the highest score is merged, leftmost first on
// ties, until no adjacent pair makes a piece. A character left without a piece
// becomes byte tokens <0xXX> when the vocabulary has them for all its bytes,
// else the unknown token.
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "vocab.hpp"

namespace torsh::model {

class SentencePieceEncoder {
 public:
  // `pieces`: the tokens merging may produce (normal and user-defined ones);
  // `scores` indexed by id (empty: all 0); `byte_tokens`: <0xXX> per byte, -1 when absent.
  SentencePieceEncoder(const TokenIndex& pieces, const std::vector<float>& scores,
                       const std::array<std::int32_t, 256>& byte_tokens, std::int32_t unk);

  // `text` is already escaped: spaces written as U+2581, the prefix space added.
  void encode(std::string_view text, std::vector<std::int32_t>& out) const;

 private:
  float score(std::int32_t id) const { return scores_.empty() ? 0.0f : scores_[static_cast<std::size_t>(id)]; }

  const TokenIndex& pieces_;
  const std::vector<float>& scores_;
  std::array<std::int32_t, 256> byte_tokens_;
  std::int32_t unk_;
};

}  // namespace torsh::model
