#pragma once
// Reads GGUF metadata values from a cursor, counting them against
// kMaxMetadataValues and limiting array nesting to kMaxArrayDepth.
#include <cstdint>
#include <string>
#include <string_view>

#include "gguf_cursor.hpp"
#include "gguf_parse.hpp"

namespace torsh::model::detail {

class MetadataReader {
 public:
  explicit MetadataReader(ByteCursor& c) : c_(c) {}

  // A value type tag (u32); `what` names it in the error when it is unknown.
  GgufType value_type(std::string_view what);
  // A value of `type`; `depth` is the number of arrays around it.
  GgufValue value(GgufType type, int depth = 0);

 private:
  void array(GgufValue& v, int depth);
  void count_values(std::uint64_t n, std::size_t at);

  ByteCursor& c_;
  std::uint64_t values_ = 0;
};

// `s` for an error message: control and non-ASCII bytes escaped, long strings cut short.
std::string printable(std::string_view s);

}  // namespace torsh::model::detail
