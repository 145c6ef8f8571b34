#include "unicode.hpp"

#include <utf8proc.h>

#include <limits>

#include "torsh/core/error.hpp"

namespace torsh::model::unicode {

namespace {

// The length of the valid UTF-8 sequence starting at text[i], and its code
// point; 0 when text[i] does not start one.
int valid_sequence(std::string_view text, std::size_t i, std::uint32_t& cp) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  int len;
  std::uint32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, min = 0x80, cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, min = 0x800, cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, cp = b0 & 0x07;
  } else {
    return 0;  // a continuation byte or 0xF8..0xFF
  }
  if (i + static_cast<std::size_t>(len) > text.size()) return 0;
  for (int k = 1; k < len; ++k) {
    unsigned char b = byte(i + static_cast<std::size_t>(k));
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

std::array<std::uint32_t, 256> make_byte_to_char() {
  std::array<std::uint32_t, 256> map{};
  auto keeps_itself = [](int b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
  };
  std::uint32_t next = 256;  // the bytes that are not printable take U+0100, U+0101, ... in byte order
  for (int b = 0; b < 256; ++b)
    map[static_cast<std::size_t>(b)] = keeps_itself(b) ? static_cast<std::uint32_t>(b) : next++;
  return map;
}

}  // namespace

std::vector<CodePoint> decode_utf8(std::string_view text) {
  if (text.size() > std::numeric_limits<std::uint32_t>::max())
    throw Error(ErrorCode::InvalidArgument,
                "text of " + std::to_string(text.size()) + " bytes is too long to tokenize (at most 4 GiB)",
                {.op = "tokenizer"});
  std::vector<CodePoint> out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::uint32_t cp = 0;
    int len = valid_sequence(text, i, cp);
    if (len == 0) {
      out.push_back({kInvalidByte, static_cast<std::uint32_t>(i), 1, CharClass::Other});
      ++i;
    } else {
      out.push_back({cp, static_cast<std::uint32_t>(i), static_cast<std::uint8_t>(len), char_class(cp)});
      i += static_cast<std::size_t>(len);
    }
  }
  return out;
}

bool is_space(std::uint32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= '\t' && cp <= '\r');
  if (cp == 0x85) return true;
  auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP;
}

CharClass char_class(std::uint32_t cp) {
  if (cp < 0x80) {  // the common case, without the table lookup
    if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return CharClass::Letter;
    if (cp >= '0' && cp <= '9') return CharClass::Number;
    return is_space(cp) ? CharClass::Space : CharClass::Other;
  }
  if (cp > 0x10FFFF) return CharClass::Other;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: return CharClass::Letter;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO: return CharClass::Number;
    default: return is_space(cp) ? CharClass::Space : CharClass::Other;
  }
}

void append_utf8(std::string& out, std::uint32_t cp) {
  auto put = [&](std::uint32_t v) { out.push_back(static_cast<char>(v)); };
  if (cp < 0x80) {
    put(cp);
  } else if (cp < 0x800) {
    put(0xC0 | (cp >> 6)), put(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    put(0xE0 | (cp >> 12)), put(0x80 | ((cp >> 6) & 0x3F)), put(0x80 | (cp & 0x3F));
  } else {
    put(0xF0 | (cp >> 18)), put(0x80 | ((cp >> 12) & 0x3F)), put(0x80 | ((cp >> 6) & 0x3F)), put(0x80 | (cp & 0x3F));
  }
}

const std::array<std::uint32_t, 256>& byte_to_char() {
  static const auto map = make_byte_to_char();
  return map;
}

int char_to_byte(std::uint32_t cp) {
  // Every mapped character is below U+0144 (256 bytes, 188 of them kept as themselves).
  static const auto inverse = [] {
    std::array<int, 0x144> inv;
    inv.fill(-1);
    const auto& map = byte_to_char();
    for (int b = 0; b < 256; ++b) inv[map[static_cast<std::size_t>(b)]] = b;
    return inv;
  }();
  return cp < inverse.size() ? inverse[cp] : -1;
}

}  // namespace torsh::model::unicode
