#include "special_tokens.hpp"

#include <algorithm>

namespace torsh::model {

void SpecialTokenMatcher::add(std::string_view text, std::int32_t id) {
  if (text.empty()) return;
  auto& list = by_first_byte_[static_cast<unsigned char>(text[0])];
  // Stable: of two tokens with the same text, the first added (the lower id) wins.
  auto at = std::find_if(list.begin(), list.end(), [&](const auto& e) { return e.first.size() < text.size(); });
  list.insert(at, {text, id});
  ++count_;
}

void SpecialTokenMatcher::split(std::string_view text, std::vector<Fragment>& out) const {
  std::size_t plain_start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto& candidates = by_first_byte_[static_cast<unsigned char>(text[i])];
    auto match = std::find_if(candidates.begin(), candidates.end(),
                              [&](const auto& c) { return text.compare(i, c.first.size(), c.first) == 0; });
    if (match == candidates.end()) {
      ++i;
      continue;
    }
    if (i > plain_start) out.push_back({text.substr(plain_start, i - plain_start), -1});
    out.push_back({match->first, match->second});
    i += match->first.size();
    plain_start = i;
  }
  if (plain_start < text.size()) out.push_back({text.substr(plain_start), -1});
}

}  // namespace torsh::model
