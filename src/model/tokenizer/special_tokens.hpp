#pragma once
// Finds special tokens (<|im_start|>, ...) written verbatim in a text: the
// leftmost match wins, and of the tokens matching there the longest.
#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace torsh::model {

class SpecialTokenMatcher {
 public:
  struct Fragment {
    std::string_view text;  // plain text when token < 0
    std::int32_t token;     // a special token's id, or -1
  };

  void add(std::string_view text, std::int32_t id);  // empty texts are never matched
  bool empty() const { return count_ == 0; }
  // Cuts `text` into plain-text fragments and special tokens, in order; empty
  // plain-text fragments are left out.
  void split(std::string_view text, std::vector<Fragment>& out) const;

 private:
  // Tokens by first byte, longest first (a lookup for each byte of the text).
  std::array<std::vector<std::pair<std::string_view, std::int32_t>>, 256> by_first_byte_;
  std::size_t count_ = 0;
};

}  // namespace torsh::model
