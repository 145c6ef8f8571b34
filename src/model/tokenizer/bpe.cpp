#include "bpe.hpp"

#include <queue>

#include "torsh/core/error.hpp"
#include "unicode.hpp"

namespace torsh::model {

namespace {

[[noreturn]] void bad_merge(std::size_t rank, std::string_view merge, const std::string& why) {
  throw Error(ErrorCode::InvalidArgument,
              "tokenizer merge " + std::to_string(rank) + " \"" + std::string(merge) + "\" " + why, {.op = "tokenizer"},
              {"Check tokenizer.ggml.merges and tokenizer.ggml.tokens in the model file"});
}

// A symbol of the word being merged: a token id in a doubly linked list.
struct Symbol {
  std::int32_t id;  // -1: a byte without a token (never merged)
  std::int32_t prev, next;
};

struct Candidate {
  std::int32_t rank;
  std::int32_t left;  // the left symbol's position: ties go to the leftmost pair
  std::int32_t left_id, right_id;
  std::int32_t result;
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
};

}  // namespace

BytePairEncoder::BytePairEncoder(const TokenIndex& index, const std::vector<std::string>& merges,
                                 bool whole_words_first)
    : index_(index), whole_words_first_(whole_words_first) {
  const auto& chars = unicode::byte_to_char();
  for (std::size_t b = 0; b < 256; ++b) {
    unicode::append_utf8(byte_text_[b], chars[b]);
    byte_token_[b] = find_token(index, byte_text_[b]);
  }
  merges_.reserve(merges.size());
  std::string joined;
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    std::string_view merge = merges[rank];
    // The separator is the first space after the first character: byte-level
    // tokens have no spaces, but a vocabulary of plain text may start with one.
    auto space = merge.find(' ', 1);
    if (space == std::string_view::npos) bad_merge(rank, merge, "is not two tokens separated by a space");
    std::string_view left = merge.substr(0, space), right = merge.substr(space + 1);
    std::int32_t left_id = find_token(index, left), right_id = find_token(index, right);
    if (left_id < 0) bad_merge(rank, merge, "names \"" + std::string(left) + "\", which is not a token");
    if (right_id < 0) bad_merge(rank, merge, "names \"" + std::string(right) + "\", which is not a token");
    joined.assign(left).append(right);
    std::int32_t result = find_token(index, joined);
    if (result < 0) bad_merge(rank, merge, "makes \"" + joined + "\", which is not a token");
    // A repeated pair keeps its first (best) rank.
    merges_.try_emplace(pair_key(left_id, right_id), Merge{static_cast<std::int32_t>(rank), result});
  }
}

void BytePairEncoder::encode_word(std::string_view word, std::vector<std::int32_t>& out) const {
  if (word.empty()) return;
  auto emit = [&](std::int32_t id) {
    if (id >= 0) out.push_back(id);  // a byte without a token is dropped
  };
  if (word.size() == 1) return emit(byte_token_[static_cast<unsigned char>(word[0])]);
  if (whole_words_first_) {
    std::string spelled;
    for (char c : word) spelled += byte_text_[static_cast<unsigned char>(c)];
    if (std::int32_t id = find_token(index_, spelled); id >= 0) return out.push_back(id);
  }

  const auto n = static_cast<std::int32_t>(word.size());
  std::vector<Symbol> symbols(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i)
    symbols[static_cast<std::size_t>(i)] = {byte_token_[static_cast<unsigned char>(word[static_cast<std::size_t>(i)])],
                                            i - 1, i + 1 < n ? i + 1 : -1};
  auto sym = [&](std::int32_t i) -> Symbol& { return symbols[static_cast<std::size_t>(i)]; };

  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto consider = [&](std::int32_t left) {
    if (left < 0) return;
    std::int32_t right = sym(left).next;
    if (right < 0 || sym(left).id < 0 || sym(right).id < 0) return;
    auto it = merges_.find(pair_key(sym(left).id, sym(right).id));
    if (it != merges_.end()) queue.push({it->second.rank, left, sym(left).id, sym(right).id, it->second.result});
  };
  for (std::int32_t i = 0; i + 1 < n; ++i) consider(i);

  while (!queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    // Skip a pair that changed since it was queued: a merge grows a token, so
    // an unchanged id pair at this position is still the same pair.
    Symbol& left = sym(c.left);
    if (left.id != c.left_id || left.next < 0 || sym(left.next).id != c.right_id) continue;
    std::int32_t right = left.next;
    left.id = c.result;
    left.next = sym(right).next;
    if (left.next >= 0) sym(left.next).prev = c.left;
    sym(right).id = -2;  // gone; never compared equal to a token id
    consider(left.prev);
    consider(c.left);
  }
  for (std::int32_t i = 0; i >= 0; i = sym(i).next) emit(sym(i).id);
}

std::string BytePairEncoder::token_bytes(std::string_view token) {
  std::string bytes;
  for (const auto& cp : unicode::decode_utf8(token)) {
    int b = cp.cp == unicode::kInvalidByte ? -1 : unicode::char_to_byte(cp.cp);
    if (b >= 0) {
      bytes.push_back(static_cast<char>(b));
    } else {
      bytes.append(token.substr(cp.offset, cp.length));
    }
  }
  return bytes;
}

}  // namespace torsh::model
