#include "pretokenize.hpp"

#include <cstddef>

#include "unicode.hpp"

namespace torsh::model {

namespace {

using unicode::CharClass;
using unicode::CodePoint;

// The regexes work on a span of decoded characters [begin, end) and report
// each match's end; the words are cut from the byte offsets.
class Matcher {
 public:
  Matcher(const std::vector<CodePoint>& cps, std::size_t end) : cps_(cps), end_(end) {}

  bool has(std::size_t i) const { return i < end_; }
  CharClass cls(std::size_t i) const { return cps_[i].cls; }
  bool is(std::size_t i, CharClass c) const { return has(i) && cls(i) == c; }
  bool is_char(std::size_t i, char32_t c) const { return has(i) && cps_[i].cp == c; }
  bool is_char_nocase(std::size_t i, char c) const {
    return has(i) &&
           (cps_[i].cp == static_cast<unsigned char>(c) || cps_[i].cp == static_cast<unsigned char>(c - 'a' + 'A'));
  }
  bool is_newline(std::size_t i) const { return is_char(i, '\r') || is_char(i, '\n'); }

  std::size_t run_of(std::size_t i, CharClass c) const {
    while (is(i, c)) ++i;
    return i;
  }

  // 's 't 'm 'd 're 've 'll (lower case unless `any_case`): the end, or 0 for no match.
  std::size_t contraction(std::size_t i, bool any_case) const {
    if (!is_char(i, '\'')) return 0;
    auto at = [&](std::size_t k, char c) {
      return any_case ? is_char_nocase(k, c) : is_char(k, static_cast<unsigned char>(c));
    };
    if (at(i + 1, 's') || at(i + 1, 't') || at(i + 1, 'm') || at(i + 1, 'd')) return i + 2;
    if ((at(i + 1, 'r') && at(i + 2, 'e')) || (at(i + 1, 'v') && at(i + 2, 'e')) || (at(i + 1, 'l') && at(i + 2, 'l')))
      return i + 3;
    return 0;
  }

  // \s+(?!\S)|\s+ at a space: the run, less its last character when a
  // non-space follows and the run is longer than one (that character then
  // starts the next word, e.g. " world").
  std::size_t spaces(std::size_t i) const {
    std::size_t k = run_of(i, CharClass::Space);
    return (has(k) && k - i > 1) ? k - 1 : k;
  }

  // One GPT-2 word starting at i.
  std::size_t gpt2_word(std::size_t i) const {
    if (std::size_t k = contraction(i, false)) return k;
    std::size_t j = is_char(i, ' ') ? i + 1 : i;  // the optional leading space
    if (is(j, CharClass::Letter)) return run_of(j, CharClass::Letter);
    if (is(j, CharClass::Number)) return run_of(j, CharClass::Number);
    if (is(j, CharClass::Other)) return run_of(j, CharClass::Other);
    return spaces(i);  // cls(i) is Space here: anything else matched above
  }

  // One Llama 3 word starting at i; Qwen2's regex is the same with one digit
  // a word (\p{N} for \p{N}{1,3}).
  std::size_t llama3_word(std::size_t i, std::size_t max_digits = 3) const {
    if (std::size_t k = contraction(i, true)) return k;
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (is(i, CharClass::Letter)) return run_of(i, CharClass::Letter);
    if (!is_newline(i) && !is(i, CharClass::Number) && is(i + 1, CharClass::Letter))
      return run_of(i + 1, CharClass::Letter);
    // \p{N}{1,3}
    if (is(i, CharClass::Number)) {
      std::size_t k = i + 1;
      while (k < i + max_digits && is(k, CharClass::Number)) ++k;
      return k;
    }
    // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
    std::size_t j = is_char(i, ' ') ? i + 1 : i;
    if (is(j, CharClass::Other)) {
      std::size_t k = run_of(j, CharClass::Other);
      while (is_newline(k)) ++k;
      return k;
    }
    // \s*[\r\n]+: up to the last newline of the space run, when it has one.
    std::size_t run_end = run_of(i, CharClass::Space);
    for (std::size_t k = run_end; k > i; --k)
      if (is_newline(k - 1)) return k;
    return spaces(i);
  }

 private:
  const std::vector<CodePoint>& cps_;
  std::size_t end_;
};

template <typename WordEnd>
void split_span(const std::vector<CodePoint>& cps, std::size_t begin, std::size_t end, std::string_view text,
                std::vector<std::string_view>& words, WordEnd word_end) {
  Matcher m(cps, end);
  auto byte_at = [&](std::size_t i) { return i < cps.size() ? std::size_t{cps[i].offset} : text.size(); };
  for (std::size_t i = begin; i < end;) {
    std::size_t k = word_end(m, i);
    words.push_back(text.substr(byte_at(i), byte_at(k) - byte_at(i)));
    i = k;
  }
}

}  // namespace

std::optional<PreTokenizer> pre_tokenizer_named(std::string_view name) {
  if (name == "smollm") return PreTokenizer::SmolLM;
  if (name == "default" || name == "gpt2") return PreTokenizer::Gpt2;
  if (name == "llama3" || name == "llama-v3" || name == "llama-bpe") return PreTokenizer::Llama3;
  if (name == "qwen2" || name == "deepseek-r1-qwen" || name == "megrez") return PreTokenizer::Qwen2;
  return std::nullopt;
}

void pretokenize(PreTokenizer kind, std::string_view text, std::vector<std::string_view>& words) {
  auto cps = unicode::decode_utf8(text);
  auto gpt2 = [](const Matcher& m, std::size_t i) { return m.gpt2_word(i); };
  switch (kind) {
    case PreTokenizer::Gpt2: split_span(cps, 0, cps.size(), text, words, gpt2); break;
    case PreTokenizer::Llama3:
      split_span(cps, 0, cps.size(), text, words, [](const Matcher& m, std::size_t i) { return m.llama3_word(i); });
      break;
    case PreTokenizer::Qwen2:
      split_span(cps, 0, cps.size(), text, words, [](const Matcher& m, std::size_t i) { return m.llama3_word(i, 1); });
      break;
    case PreTokenizer::SmolLM: {
      // Each number character is a word; the regex runs on the text between them,
      // which ends there (so "  1" is "  ", "1", not " ", " 1").
      std::size_t start = 0;
      for (std::size_t i = 0; i <= cps.size(); ++i) {
        if (i < cps.size() && cps[i].cls != CharClass::Number) continue;
        split_span(cps, start, i, text, words, gpt2);
        if (i < cps.size()) split_span(cps, i, i + 1, text, words, gpt2);
        start = i + 1;
      }
      break;
    }
  }
}

}  // namespace torsh::model
