#pragma once
// The Unicode the tokenizers need: UTF-8 decoding that never fails (a byte that
// does not start a valid sequence is a code point of its own), the character
// classes the pre-tokenizer regexes use, and GPT-2's byte <-> character map.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace torsh::model::unicode {

// The classes of the pre-tokenizer regexes: \p{L}, \p{N}, \s, and the rest.
// General categories come from utf8proc, so they follow its Unicode version
// (15.0 in utf8proc 2.8): a character assigned later is "other" here.
enum class CharClass : std::uint8_t { Letter, Number, Space, Other };

// Stands for a byte that is not part of valid UTF-8 (it is classed Other).
inline constexpr std::uint32_t kInvalidByte = 0xFFFFFFFFu;

struct CodePoint {
  std::uint32_t cp;      // the code point, or kInvalidByte
  std::uint32_t offset;  // where its bytes start in the text
  std::uint8_t length;   // how many bytes (1 for an invalid byte)
  CharClass cls;
};

// Decodes `text` (overlong forms, surrogates and values past U+10FFFF are
// invalid). Text past 4 GiB is refused (InvalidArgument): offsets are 32-bit.
std::vector<CodePoint> decode_utf8(std::string_view text);

CharClass char_class(std::uint32_t cp);
// Unicode White_Space: Zs, Zl, Zp, \t \n \v \f \r and U+0085.
bool is_space(std::uint32_t cp);

void append_utf8(std::string& out, std::uint32_t cp);

// GPT-2's byte-level alphabet: each byte maps to a printable character (the
// printable Latin-1 bytes to themselves, the rest to U+0100 and up), so any
// byte string is spelled by vocabulary characters.
const std::array<std::uint32_t, 256>& byte_to_char();
// The byte a byte-level character stands for; -1 for a character outside the map.
int char_to_byte(std::uint32_t cp);

}  // namespace torsh::model::unicode
