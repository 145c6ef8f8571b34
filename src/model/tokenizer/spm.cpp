#include "spm.hpp"

#include <queue>

#include "unicode.hpp"

namespace torsh::model {

namespace {

// A symbol: a span of the text, in a doubly linked list.
struct Symbol {
  std::uint32_t offset, length;  // length 0: merged into its left neighbour
  std::int32_t prev, next;
};

struct Candidate {
  float score;
  std::int32_t left;
  std::uint32_t length;  // the merged length when queued, to recognise a stale pair
  std::int32_t id;
  // The highest score first, then the leftmost pair.
  bool operator<(const Candidate& o) const { return score != o.score ? score < o.score : left > o.left; }
};

}  // namespace

SentencePieceEncoder::SentencePieceEncoder(const TokenIndex& pieces, const std::vector<float>& scores,
                                           const std::array<std::int32_t, 256>& byte_tokens, std::int32_t unk)
    : pieces_(pieces), scores_(scores), byte_tokens_(byte_tokens), unk_(unk) {}

void SentencePieceEncoder::encode(std::string_view text, std::vector<std::int32_t>& out) const {
  if (text.empty()) return;
  auto chars = unicode::decode_utf8(text);
  const auto n = static_cast<std::int32_t>(chars.size());
  std::vector<Symbol> symbols(chars.size());
  for (std::int32_t i = 0; i < n; ++i) {
    const auto& c = chars[static_cast<std::size_t>(i)];
    symbols[static_cast<std::size_t>(i)] = {c.offset, c.length, i - 1, i + 1 < n ? i + 1 : -1};
  }
  auto sym = [&](std::int32_t i) -> Symbol& { return symbols[static_cast<std::size_t>(i)]; };

  std::priority_queue<Candidate> queue;
  auto consider = [&](std::int32_t left) {
    if (left < 0 || sym(left).next < 0) return;
    const Symbol& l = sym(left);
    std::uint32_t length = l.length + sym(l.next).length;  // adjacent symbols are adjacent in the text
    std::int32_t id = find_token(pieces_, text.substr(l.offset, length));
    if (id >= 0) queue.push({score(id), left, length, id});
  };
  for (std::int32_t i = 0; i + 1 < n; ++i) consider(i);

  while (!queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    Symbol& left = sym(c.left);
    // Stale when either side merged since: symbols only grow, so the lengths tell.
    if (left.length == 0 || left.next < 0 || left.length + sym(left.next).length != c.length) continue;
    std::int32_t right = left.next;
    left.length = c.length;
    left.next = sym(right).next;
    if (left.next >= 0) sym(left.next).prev = c.left;
    sym(right).length = 0;
    consider(left.prev);
    consider(c.left);
  }

  for (std::int32_t i = 0; i >= 0; i = sym(i).next) {
    std::string_view piece = text.substr(sym(i).offset, sym(i).length);
    if (std::int32_t id = find_token(pieces_, piece); id >= 0) {
      out.push_back(id);
      continue;
    }
    bool all_bytes = true;
    for (char b : piece) all_bytes &= byte_tokens_[static_cast<unsigned char>(b)] >= 0;
    if (all_bytes) {
      for (char b : piece) out.push_back(byte_tokens_[static_cast<unsigned char>(b)]);
    } else if (unk_ >= 0) {
      out.push_back(unk_);
    }
  }
}

}  // namespace torsh::model
