#pragma once
// Shared by the tokenizer's parts: the token-type numbers of GGUF files and the
// text -> id index (looked up with string_views, without building strings).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace torsh::model {

// tokenizer.ggml.token_type values.
enum TokenType : std::int32_t {
  kTokenUndefined = 0,
  kTokenNormal = 1,
  kTokenUnknown = 2,
  kTokenControl = 3,
  kTokenUserDefined = 4,
  kTokenUnused = 5,
  kTokenByte = 6,
};

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenIndex = std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>>;

inline std::int32_t find_token(const TokenIndex& index, std::string_view text) {
  auto it = index.find(text);
  return it == index.end() ? -1 : it->second;
}

}  // namespace torsh::model
