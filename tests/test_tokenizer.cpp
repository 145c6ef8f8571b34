// Tokenizers: the pre-tokenizer regexes, byte-level BPE and SentencePiece-style
// BPE on small vocabularies built here (expected tokens worked out by hand in
// the comments), special tokens, bad input, and the real SmolLM2 tokenizer
// against ids from Hugging Face `tokenizers` (tests/tokenizer/reference_ids.json,
// written by tests/tokenizer/make_reference.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "model/tokenizer/pretokenize.hpp"
#include "torsh/core/error.hpp"
#include "torsh/model/gguf.hpp"
#include "torsh/model/model_cache.hpp"
#include "torsh/model/tokenizer.hpp"

using torsh::ErrorCode;
using torsh::model::ChatMessage;
using torsh::model::PreTokenizer;
using torsh::model::Tokenizer;
using torsh::model::TokenizerData;
using Strings = std::vector<std::string>;

namespace {

Strings words(PreTokenizer kind, std::string_view text) {
  std::vector<std::string_view> views;
  torsh::model::pretokenize(kind, text, views);
  return Strings(views.begin(), views.end());
}

// The vocabulary texts of `ids`, to compare with expectations written as text.
Strings texts(const Tokenizer& tok, const std::vector<std::int32_t>& ids) {
  Strings out;
  for (auto id : ids) out.push_back(tok.data().tokens.at(static_cast<std::size_t>(id)));
  return out;
}

template <typename F>
ErrorCode error_code_of(F&& f) {
  try {
    f();
  } catch (const torsh::Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no torsh::Error thrown";
  return ErrorCode::Internal;
}

// GPT-2's byte-level spelling of one byte ("Ġ" for a space, "Ċ" for \n, ...).
std::string byte_char(int b) {
  int cp = b;
  if (!((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF))) {
    cp = 256;
    for (int k = 0; k < b; ++k)
      if (!((k >= '!' && k <= '~') || (k >= 0xA1 && k <= 0xAC) || (k >= 0xAE && k <= 0xFF))) ++cp;
  }
  std::string s;
  if (cp < 0x80) {
    s.push_back(static_cast<char>(cp));
  } else {
    s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return s;
}

// A byte-level BPE vocabulary: two control tokens, the 256 byte characters, then
// the merged tokens of `merges` (in order).
TokenizerData tiny_bpe(const Strings& merges, const std::string& pre = "gpt2") {
  TokenizerData d;
  d.model = "gpt2";
  d.pre = pre;
  d.tokens = {"<|endoftext|>", "<|endoftext|>x"};
  d.token_types = {3, 3};
  for (int b = 0; b < 256; ++b) d.tokens.push_back(byte_char(b)), d.token_types.push_back(1);
  for (const auto& m : merges) {
    std::string joined = m.substr(0, m.find(' ')) + m.substr(m.find(' ') + 1);
    if (std::find(d.tokens.begin(), d.tokens.end(), joined) == d.tokens.end())
      d.tokens.push_back(joined), d.token_types.push_back(1);
  }
  d.merges = merges;
  d.eos = 0;
  return d;
}

const Strings kHelloMerges = {"h e", "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or"};

// A SentencePiece vocabulary: <unk>, <s>, </s>, optionally the 256 byte tokens,
// then scored pieces.
TokenizerData tiny_spm(const std::vector<std::pair<std::string, float>>& pieces, bool byte_tokens) {
  TokenizerData d;
  d.model = "llama";
  d.tokens = {"<unk>", "<s>", "</s>"};
  d.token_types = {2, 3, 3};
  d.scores = {0, 0, 0};
  if (byte_tokens) {
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      d.tokens.push_back(name), d.token_types.push_back(6), d.scores.push_back(0);
    }
  }
  for (const auto& [text, score] : pieces)
    d.tokens.push_back(text), d.token_types.push_back(1), d.scores.push_back(score);
  d.unk = 0, d.bos = 1, d.eos = 2;
  d.add_bos = true;
  d.add_space_prefix = true;
  return d;
}

const std::vector<std::pair<std::string, float>> kHelloPieces = {
    {"▁", -10}, {"a", -1},  {"b", -1},  {"c", -1},   {"h", -1},     {"e", -1},      {"l", -1},  {"o", -1},
    {"▁h", -3}, {"he", -2}, {"ll", -4}, {"llo", -5}, {"hello", -6}, {"▁hello", -7}, {"▁a", -1}, {"▁b", -1}};

std::string random_text(std::mt19937& rng, bool valid_utf8) {
  static const Strings pieces = {"a",
                                 "b",
                                 "c",
                                 "h",
                                 "e",
                                 "l",
                                 "o",
                                 " ",
                                 "  ",
                                 "\n",
                                 "\t",
                                 "é",
                                 "日",
                                 "😀",
                                 "1",
                                 "23",
                                 "'s",
                                 "!",
                                 "<|endoftext|>",
                                 "\xE2\x80\x8B",
                                 "\xC2\xA0"};
  std::string s;
  int n = std::uniform_int_distribution<int>(0, 20)(rng);
  for (int i = 0; i < n; ++i) {
    if (!valid_utf8 && rng() % 5 == 0) {
      s.push_back(static_cast<char>(0x80 + rng() % 0x80));  // a stray continuation or lead byte
    } else {
      s += pieces[rng() % pieces.size()];
    }
  }
  return s;
}

// Any bytes at all, mostly not UTF-8.
std::string random_bytes(std::mt19937& rng) {
  std::string s(std::uniform_int_distribution<std::size_t>(0, 64)(rng), '\0');
  for (auto& c : s) c = static_cast<char>(rng() % 256);
  return s;
}

}  // namespace

// ---- pre-tokenizers (the expectations are what the regexes give in Hugging Face tokenizers)

TEST(PreTokenizer, Gpt2Regex) {
  EXPECT_EQ(words(PreTokenizer::Gpt2, "Hello world"), (Strings{"Hello", " world"}));
  EXPECT_EQ(words(PreTokenizer::Gpt2, "I'm fine"), (Strings{"I", "'m", " fine"}));
  // Contractions are lower case only: " 'S" is punctuation then a letter.
  EXPECT_EQ(words(PreTokenizer::Gpt2, "x's 'S"), (Strings{"x", "'s", " '", "S"}));
  EXPECT_EQ(words(PreTokenizer::Gpt2, "x 'll"), (Strings{"x", " '", "ll"}));
  // A space run leaves its last space to the word after it; at the end it stays whole.
  EXPECT_EQ(words(PreTokenizer::Gpt2, "  hi"), (Strings{" ", " hi"}));
  EXPECT_EQ(words(PreTokenizer::Gpt2, "hi   "), (Strings{"hi", "   "}));
  EXPECT_EQ(words(PreTokenizer::Gpt2, "\t\ta"), (Strings{"\t", "\t", "a"}));
  EXPECT_EQ(words(PreTokenizer::Gpt2, "a  \n b"), (Strings{"a", "  \n", " b"}));
  EXPECT_EQ(words(PreTokenizer::Gpt2, "he said: \"ok!\""), (Strings{"he", " said", ":", " \"", "ok", "!\""}));
  EXPECT_EQ(words(PreTokenizer::Gpt2, "abc123 45"), (Strings{"abc", "123", " 45"}));
  EXPECT_EQ(words(PreTokenizer::Gpt2, ""), Strings{});
}

TEST(PreTokenizer, SmolLMSplitsEveryDigit) {
  EXPECT_EQ(words(PreTokenizer::SmolLM, "abc123 45"), (Strings{"abc", "1", "2", "3", " ", "4", "5"}));
  // The text before a digit ends there: its spaces are not left to the digit.
  EXPECT_EQ(words(PreTokenizer::SmolLM, "  1"), (Strings{"  ", "1"}));
  EXPECT_EQ(words(PreTokenizer::SmolLM, "a1b"), (Strings{"a", "1", "b"}));
  EXPECT_EQ(words(PreTokenizer::SmolLM, "x²½"), (Strings{"x", "²", "½"}));  // \p{N}, not only 0-9
}

TEST(PreTokenizer, Qwen2RegexSplitsEveryDigit) {
  EXPECT_EQ(words(PreTokenizer::Qwen2, "Hello 12345 world"),
            (Strings{"Hello", " ", "1", "2", "3", "4", "5", " world"}));
  EXPECT_EQ(words(PreTokenizer::Qwen2, "I'M OK"), (Strings{"I", "'M", " OK"}));
}

TEST(PreTokenizer, Llama3Regex) {
  EXPECT_EQ(words(PreTokenizer::Llama3, "Hello 12345 world\n\n  x"),
            (Strings{"Hello", " ", "123", "45", " world", "\n\n", " ", " x"}));
  EXPECT_EQ(words(PreTokenizer::Llama3, "I'M OK"), (Strings{"I", "'M", " OK"}));  // any-case contractions
  EXPECT_EQ(words(PreTokenizer::Llama3, "a\tb"), (Strings{"a", "\tb"}));
  EXPECT_EQ(words(PreTokenizer::Llama3, "x!!\n\ny"), (Strings{"x", "!!\n\n", "y"}));
  EXPECT_EQ(words(PreTokenizer::Llama3, "  \n  \n  z"), (Strings{"  \n  \n", " ", " z"}));
}

TEST(PreTokenizer, UnicodeClassesAndInvalidBytes) {
  // NBSP and U+3000 are white space (but only U+0020 joins the word after it);
  // the combining accent is neither letter nor number.
  EXPECT_EQ(words(PreTokenizer::Gpt2, "a\u00A0\u3000b"), (Strings{"a", "\u00A0", "\u3000", "b"}));
  EXPECT_EQ(words(PreTokenizer::Gpt2, "cafe\u0301!"), (Strings{"cafe", "\u0301!"}));
  EXPECT_EQ(words(PreTokenizer::Gpt2, "日本語 テキスト"), (Strings{"日本語", " テキスト"}));
  // Invalid bytes are characters of their own ("other"), kept byte for byte.
  EXPECT_EQ(words(PreTokenizer::Gpt2, "a\xFF\xFE b\xC3"), (Strings{"a", "\xFF\xFE", " b", "\xC3"}));
  EXPECT_EQ(words(PreTokenizer::Gpt2, "\xE6\x97x"), (Strings{"\xE6\x97", "x"}));  // a truncated sequence
  EXPECT_EQ(words(PreTokenizer::Gpt2, "\xC0\xAF"), (Strings{"\xC0\xAF"}));        // overlong '/'
}

// ---- byte-level BPE

TEST(BytePairTokenizer, MergesByRank) {
  Tokenizer tok(tiny_bpe(kHelloMerges));
  // "hello": h e l l o -> (he) l l o -> he (ll) o -> (hell) o -> (hello).
  // " world": Ġ w o r l d -> (Ġw) o r l d -> Ġw (or) l d -> (Ġwor) l d.
  EXPECT_EQ(texts(tok, tok.encode("hello world")), (Strings{"hello", "Ġwor", "l", "d"}));
  EXPECT_EQ(tok.decode(tok.encode("hello world")), "hello world");
  // One word holding the same piece twice: each pair merges at both places.
  EXPECT_EQ(texts(tok, tok.encode("hellohello")), (Strings{"hello", "hello"}));
}

TEST(BytePairTokenizer, RankDecidesBetweenOverlappingPairs) {
  Tokenizer bc_first(tiny_bpe({"b c", "a b"}));
  EXPECT_EQ(texts(bc_first, bc_first.encode("abc")), (Strings{"a", "bc"}));
  Tokenizer ab_first(tiny_bpe({"a b", "b c"}));
  EXPECT_EQ(texts(ab_first, ab_first.encode("abc")), (Strings{"ab", "c"}));
  // Equal ranks: the leftmost pair first.
  Tokenizer aa(tiny_bpe({"a a"}));
  EXPECT_EQ(texts(aa, aa.encode("aaa")), (Strings{"aa", "a"}));
  EXPECT_EQ(texts(aa, aa.encode("aaaa")), (Strings{"aa", "aa"}));
}

TEST(BytePairTokenizer, Llama3TakesWholeWordsFirst) {
  auto d = tiny_bpe({"a b"}, "llama3");
  d.tokens.push_back("abc"), d.token_types.push_back(1);  // a token no merge makes
  Tokenizer llama3(d);
  EXPECT_EQ(texts(llama3, llama3.encode("abc")), (Strings{"abc"}));
  d.pre = "gpt2";
  Tokenizer gpt2(d);
  EXPECT_EQ(texts(gpt2, gpt2.encode("abc")), (Strings{"ab", "c"}));
}

TEST(BytePairTokenizer, SpecialTokens) {
  Tokenizer tok(tiny_bpe(kHelloMerges));
  // The longest special token that matches wins ("<|endoftext|>x" over "<|endoftext|>").
  EXPECT_EQ(tok.encode("hello<|endoftext|>hello<|endoftext|>x"),
            (std::vector<std::int32_t>{tok.encode("hello")[0], 0, tok.encode("hello")[0], 1}));
  EXPECT_TRUE(tok.is_special(0));
  EXPECT_FALSE(tok.is_special(tok.encode("hello")[0]));
  // Not parsed: the same text as ordinary bytes.
  auto plain = tok.encode("<|endoftext|>", false);
  EXPECT_GT(plain.size(), 1u);
  for (auto id : plain) EXPECT_FALSE(tok.is_special(id));
  EXPECT_EQ(tok.decode(plain), "<|endoftext|>");
  // Control tokens are left out of decode() unless kept.
  auto ids = tok.encode("a<|endoftext|>b");
  EXPECT_EQ(tok.decode(ids), "ab");
  EXPECT_EQ(tok.decode(ids, true), "a<|endoftext|>b");
  EXPECT_EQ(tok.token_text(0), "");
  EXPECT_EQ(tok.token_text(0, true), "<|endoftext|>");
  EXPECT_EQ(tok.stop_tokens(), (std::vector<std::int32_t>{0}));
}

TEST(BytePairTokenizer, EmptyTextAndBos) {
  auto d = tiny_bpe(kHelloMerges);
  d.bos = 0;
  Tokenizer tok(d);
  EXPECT_TRUE(tok.encode("").empty());
  EXPECT_EQ(tok.encode("", true, true), (std::vector<std::int32_t>{0}));
  EXPECT_EQ(tok.decode({}), "");
  d.bos = -1;
  Tokenizer no_bos(d);
  EXPECT_EQ(error_code_of([&] { no_bos.encode("x", true, true); }), ErrorCode::InvalidArgument);
}

TEST(BytePairTokenizer, InvalidUtf8IsKeptByteForByte) {
  Tokenizer tok(tiny_bpe(kHelloMerges));
  std::string text = "he\xFFllo \xC3( \xF0\x9F\x98";  // a stray byte, a broken pair, a truncated emoji
  auto ids = tok.encode(text);
  EXPECT_EQ(tok.decode(ids), text);
  // Each byte's own token: \xFF is spelled "ÿ".
  EXPECT_EQ(texts(tok, tok.encode("\xFF")), (Strings{"ÿ"}));
}

TEST(BytePairTokenizer, BytesWithoutTokensAreDropped) {
  // As Hugging Face tokenizers and llama.cpp do (SmolLM2 has no token for 0x04,
  // 0xF1, ...): no unknown token, even when the vocabulary has one.
  TokenizerData d;
  d.tokens = {"<unk>", "a", "b", "ab"};
  d.token_types = {2, 1, 1, 1};
  d.merges = {"a b"};
  d.unk = 0;
  Tokenizer tok(d);
  EXPECT_EQ(texts(tok, tok.encode("abxa")), (Strings{"ab", "a"}));
  EXPECT_EQ(tok.decode(tok.encode("abxa")), "aba");
  EXPECT_TRUE(tok.encode("x\xFF").empty());
}

TEST(BytePairTokenizer, RoundTrips) {
  for (const char* pre : {"smollm", "gpt2", "llama3"}) {
    Tokenizer tok(tiny_bpe(kHelloMerges, pre));
    std::mt19937 rng(42);
    for (int i = 0; i < 500; ++i) {
      std::string text = random_text(rng, i % 2 == 0);
      EXPECT_EQ(tok.decode(tok.encode(text), true), text) << pre << " " << i;
      EXPECT_EQ(tok.decode(tok.encode(text, false)), text) << pre << " " << i;
      std::string bytes = random_bytes(rng);
      EXPECT_EQ(tok.decode(tok.encode(bytes), true), bytes) << pre << " " << i;
    }
  }
}

// ---- SentencePiece-style BPE

TEST(SentencePieceTokenizer, ScoresDecideMerges) {
  // "hello" -> "▁hello": ▁ h e l l o. With "el" (-1.5) the best pair is e+l,
  // then ▁+h (-3); nothing else joins (▁hel, ell, lo are not pieces).
  auto pieces = kHelloPieces;
  pieces.push_back({"el", -1.5f});
  Tokenizer with_el(tiny_spm(pieces, true));
  EXPECT_EQ(texts(with_el, with_el.encode("hello")), (Strings{"<s>", "▁h", "el", "l", "o"}));
  // Without it: he (-2), then ll (-4; ▁h went stale), llo (-5), hello (-6), ▁hello (-7).
  Tokenizer tok(tiny_spm(kHelloPieces, true));
  EXPECT_EQ(texts(tok, tok.encode("hello")), (Strings{"<s>", "▁hello"}));
  EXPECT_EQ(tok.decode(tok.encode("hello")), "hello");
  // Equal scores: the leftmost pair first (a b c with ab = bc).
  Tokenizer tie(tiny_spm({{"a", 0}, {"b", 0}, {"c", 0}, {"ab", -1}, {"bc", -1}}, false));
  EXPECT_EQ(texts(tie, tie.encode("abc", true, false)), (Strings{"<unk>", "ab", "c"}));  // "▁" is no piece here
}

TEST(SentencePieceTokenizer, Spaces) {
  Tokenizer tok(tiny_spm(kHelloPieces, true));
  EXPECT_EQ(texts(tok, tok.encode("a b", true, false)), (Strings{"▁a", "▁b"}));
  // "  a" -> "▁▁▁a": ▁▁ is no piece, ▁a is.
  EXPECT_EQ(texts(tok, tok.encode("  a", true, false)), (Strings{"▁", "▁", "▁a"}));
  EXPECT_EQ(tok.decode(tok.encode("  a")), "  a");
  auto d = tiny_spm(kHelloPieces, true);
  d.add_space_prefix = false;
  Tokenizer no_prefix(d);
  EXPECT_EQ(texts(no_prefix, no_prefix.encode("a b", true, false)), (Strings{"a", "▁b"}));
  EXPECT_EQ(no_prefix.decode(no_prefix.encode(" a b")), " a b");
}

TEST(SentencePieceTokenizer, UnknownCharacters) {
  // é is no piece: its bytes C3 A9 as byte tokens when there are some, else <unk>.
  Tokenizer bytes(tiny_spm(kHelloPieces, true));
  EXPECT_EQ(texts(bytes, bytes.encode("hé", true, false)), (Strings{"▁h", "<0xC3>", "<0xA9>"}));
  EXPECT_EQ(bytes.decode(bytes.encode("hé")), "hé");
  EXPECT_EQ(texts(bytes, bytes.encode("\xFF", true, false)), (Strings{"▁", "<0xFF>"}));
  EXPECT_EQ(bytes.decode(bytes.encode("a\xFF\xC3")), "a\xFF\xC3");
  Tokenizer unk(tiny_spm(kHelloPieces, false));
  EXPECT_EQ(texts(unk, unk.encode("hé日", true, false)), (Strings{"▁h", "<unk>", "<unk>"}));
  EXPECT_EQ(unk.decode(unk.encode("hé")), "h");                // <unk> is left out ...
  EXPECT_EQ(unk.decode(unk.encode("hé"), true), "<s>h<unk>");  // ... unless kept
}

TEST(SentencePieceTokenizer, SpecialTokensAndRoundTrips) {
  Tokenizer tok(tiny_spm(kHelloPieces, true));
  // A space prefix follows each special token, as it does the start.
  EXPECT_EQ(texts(tok, tok.encode("a</s>b", true, false)), (Strings{"▁a", "</s>", "▁b"}));
  EXPECT_EQ(tok.decode(tok.encode("a</s>b"), true), "<s>a</s>b");
  EXPECT_TRUE(tok.encode("", true, false).empty());
  EXPECT_EQ(tok.encode(""), (std::vector<std::int32_t>{1}));
  std::mt19937 rng(7);
  for (int i = 0; i < 500; ++i) {
    std::string text = random_text(rng, i % 2 == 0);
    EXPECT_EQ(tok.decode(tok.encode(text, false)), text) << i;
    std::string bytes = random_bytes(rng);
    if (bytes.find("\xE2\x96\x81") == std::string::npos) {  // a literal ▁ comes back as a space
      EXPECT_EQ(tok.decode(tok.encode(bytes, false)), bytes) << i;
    }
  }
}

// ---- bad data

TEST(TokenizerData, BadDataIsRefused) {
  auto refused = [](TokenizerData d) { return error_code_of([&] { Tokenizer t(std::move(d)); }); };
  auto good = tiny_bpe(kHelloMerges);
  EXPECT_NO_THROW(Tokenizer{good});
  {
    auto d = good;
    d.token_types.pop_back();
    EXPECT_EQ(refused(d), ErrorCode::InvalidArgument);
  }
  {
    auto d = good;
    d.scores = {1.0f, 2.0f};
    EXPECT_EQ(refused(d), ErrorCode::InvalidArgument);
  }
  {
    auto d = good;
    d.token_types[5] = 7;
    EXPECT_EQ(refused(d), ErrorCode::InvalidArgument);
  }
  for (std::string merge : {"x nosuch", "nosuch x", "abc", "ĠĠĠ q"}) {
    auto d = good;
    d.merges.push_back(merge);
    EXPECT_EQ(refused(d), ErrorCode::InvalidArgument) << merge;
  }
  {
    auto d = good;
    d.merges.push_back("q z");  // both tokens, but "qz" is not
    EXPECT_EQ(refused(d), ErrorCode::InvalidArgument);
  }
  for (std::int32_t id : {-2, static_cast<std::int32_t>(good.tokens.size()), 1 << 30}) {
    auto d = good;
    d.eos = id;
    EXPECT_EQ(refused(d), ErrorCode::InvalidArgument) << id;
    d = good;
    d.unk = id;
    EXPECT_EQ(refused(d), ErrorCode::InvalidArgument) << id;
    d = good;
    d.bos = id;
    EXPECT_EQ(refused(d), ErrorCode::InvalidArgument) << id;
    d = good;
    d.pad = id;
    EXPECT_EQ(refused(d), ErrorCode::InvalidArgument) << id;
  }
  {
    auto d = good;
    d.add_bos = true;  // no bos
    EXPECT_EQ(refused(d), ErrorCode::InvalidArgument);
  }
  {
    TokenizerData d;
    EXPECT_EQ(refused(d), ErrorCode::InvalidArgument);  // no tokens
  }
  {
    auto d = tiny_spm(kHelloPieces, true);
    d.tokens[3] = "<0xZZ>";  // a byte token spelled wrong
    EXPECT_EQ(refused(d), ErrorCode::InvalidArgument);
  }
  {
    auto d = good;
    d.model = "bert";
    EXPECT_EQ(refused(d), ErrorCode::Unsupported);
    d = good;
    d.pre = "chatglm-bpe";
    try {
      Tokenizer t(d);
      FAIL();
    } catch (const torsh::Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::Unsupported);
      EXPECT_NE(e.message().find("chatglm-bpe"), std::string::npos) << e.message();
    }
  }
  Tokenizer tok(good);
  EXPECT_EQ(error_code_of([&] { tok.decode({0, -1}); }), ErrorCode::OutOfRange);
  EXPECT_EQ(error_code_of([&] { tok.decode({tok.vocab_size()}); }), ErrorCode::OutOfRange);
  EXPECT_EQ(error_code_of([&] { tok.token_text(tok.vocab_size()); }), ErrorCode::OutOfRange);
}

// ---- chat templates

TEST(ChatTemplate, Families) {
  auto d = tiny_bpe(kHelloMerges);
  d.tokens.push_back("<|im_end|>"), d.token_types.push_back(3);
  d.chat_template =
      "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
      "{{ '<|im_start|>system\\nBe kind.<|im_end|>\\n' }}{% endif %}"
      "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
      "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
  const auto im_end = static_cast<std::int32_t>(d.tokens.size() - 1);
  Tokenizer chatml(d);
  EXPECT_EQ(chatml.apply_chat_template({{"user", "Hi"}}),
            "<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(chatml.apply_chat_template({{"system", "S"}, {"user", "Hi"}}, false),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
  EXPECT_EQ(chatml.stop_tokens(), (std::vector<std::int32_t>{0, im_end}));

  d.chat_template = "{{ bos_token }}...<|start_header_id|>...";
  d.tokens.push_back("<|eot_id|>"), d.token_types.push_back(3);
  d.bos = 0;
  Tokenizer llama3(d);
  EXPECT_EQ(
      llama3.apply_chat_template({{"system", " S "}, {"user", "Hi\n"}}),
      "<|endoftext|><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|>"
      "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(llama3.stop_tokens(), (std::vector<std::int32_t>{0, static_cast<std::int32_t>(d.tokens.size() - 1)}));
  d.add_bos = true;  // encode() writes BOS, so the prompt does not
  EXPECT_EQ(Tokenizer(d).apply_chat_template({{"user", "Hi"}}, false),
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>");

  auto s = tiny_spm(kHelloPieces, true);
  s.chat_template = "... '[INST] ' + content.strip() + ' [/INST]' ...";
  Tokenizer llama2(s);
  EXPECT_EQ(llama2.apply_chat_template({{"system", "S"}, {"user", "Q1"}, {"assistant", "A1"}, {"user", "Q2"}}),
            "[INST] <<SYS>>\nS\n<</SYS>>\n\nQ1 [/INST] A1 </s><s>[INST] Q2 [/INST]");
  EXPECT_EQ(error_code_of([&] { llama2.apply_chat_template({{"tool", "x"}}); }), ErrorCode::InvalidArgument);

  // Gemma 3's template (system before the first user message, "model" turns,
  // contents trimmed) and its end-of-turn token as a stop token.
  d.chat_template = "{{ bos_token }}...{{ '<start_of_turn>' + role + '\\n' ...";
  d.tokens.push_back("<end_of_turn>"), d.token_types.push_back(3);
  d.add_bos = false;
  Tokenizer gemma(d);
  EXPECT_EQ(gemma.apply_chat_template({{"system", "S"}, {"user", " Hi "}, {"assistant", "Hello"}, {"user", "Q"}}),
            "<|endoftext|><start_of_turn>user\nS\n\nHi<end_of_turn>\n<start_of_turn>model\nHello<end_of_turn>\n"
            "<start_of_turn>user\nQ<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(gemma.stop_tokens(), (std::vector<std::int32_t>{0, static_cast<std::int32_t>(d.tokens.size() - 1)}));
  EXPECT_EQ(error_code_of([&] { gemma.apply_chat_template({{"tool", "x"}}); }), ErrorCode::InvalidArgument);
  // Phi-3's: "<|role|>\ncontent<|end|>\n", EOS without a generation prompt.
  d.chat_template = "{% for message in messages %}{{'<|user|>\\n' + message['content'] + '<|end|>\\n'}}...";
  d.tokens.push_back("<|end|>"), d.token_types.push_back(3);
  d.eos = 0;
  Tokenizer phi3(d);
  EXPECT_EQ(phi3.apply_chat_template({{"system", "S"}, {"user", "Hi"}}),
            "<|system|>\nS<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\n");
  EXPECT_EQ(phi3.apply_chat_template({{"user", "Hi"}, {"assistant", "A"}}, false),
            "<|user|>\nHi<|end|>\n<|assistant|>\nA<|end|>\n<|endoftext|>");
  EXPECT_EQ(phi3.stop_tokens(), (std::vector<std::int32_t>{0, static_cast<std::int32_t>(d.tokens.size() - 1)}));

  s.chat_template = "{{ messages }}\nmore";
  EXPECT_EQ(error_code_of([&] { Tokenizer(s).apply_chat_template({{"user", "x"}}); }), ErrorCode::Unsupported);
  try {  // refused with the template's first line shown
    Tokenizer(s).apply_chat_template({{"user", "x"}});
  } catch (const torsh::Error& e) {
    EXPECT_NE(e.message().find("it begins: {{ messages }}"), std::string::npos) << e.message();
    EXPECT_EQ(e.message().find("more"), std::string::npos) << e.message();
  }
  s.chat_template = "";
  EXPECT_EQ(error_code_of([&] { Tokenizer(s).apply_chat_template({{"user", "x"}}); }), ErrorCode::Unsupported);
}

// ---- the real model against Hugging Face tokenizers

namespace {

nlohmann::json reference() {
  std::ifstream in(TORSH_TOKENIZER_REFERENCE);
  if (!in) throw std::runtime_error("cannot read " + std::string(TORSH_TOKENIZER_REFERENCE));
  return nlohmann::json::parse(in);
}

}  // namespace

TEST(SmolLM2Tokenizer, MatchesHuggingFaceTokenizers) {
  auto path = torsh::model::find_model(torsh::model::kSmolLM2FileName);
  if (!path)
    GTEST_SKIP() << torsh::model::kSmolLM2FileName << " is not in " << torsh::model::model_cache_dir()
                 << " (scripts/fetch-model.sh)";
  auto tok = Tokenizer::from_gguf(torsh::model::GgufFile::open(*path));
  EXPECT_EQ(tok.vocab_size(), 49152);
  EXPECT_EQ(tok.data().merges.size(), 48900u);
  EXPECT_EQ(tok.bos(), 1);
  EXPECT_EQ(tok.eos(), 2);
  EXPECT_EQ(tok.stop_tokens(), (std::vector<std::int32_t>{2}));  // eos is <|im_end|>

  auto ref = reference();
  std::size_t n = 0, tokens = 0, lossy = 0;
  for (const auto& c : ref["cases"]) {
    std::string text = c["text"];
    auto expected = c["ids"].get<std::vector<std::int32_t>>();
    auto ids = tok.encode(text);
    EXPECT_EQ(ids, expected) << "text: \"" << text << "\"";
    if (c.contains("decoded_hex")) {
      // Bytes the vocabulary has no token for were dropped; the rest come back.
      std::string hex = c["decoded_hex"], kept;
      for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        kept.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
      EXPECT_EQ(tok.decode(ids, true), kept) << "text: \"" << text << "\"";
      ++lossy;
    } else {
      EXPECT_EQ(tok.decode(ids, true), text);
      EXPECT_EQ(tok.decode(ids), c["decoded_without_special"].get<std::string>());
    }
    ++n, tokens += ids.size();
  }
  EXPECT_GE(lossy, 1u);
  EXPECT_GE(n, 300u);

  // Encoding speed, for the log only.
  auto start = std::chrono::steady_clock::now();
  std::size_t encoded = 0;
  for (int rep = 0; rep < 20; ++rep)
    for (const auto& c : ref["cases"]) encoded += tok.encode(c["text"].get<std::string>()).size();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ tokenizer ] %zu reference strings, %zu tokens; encode: %.2f M tokens/s\n", n, tokens,
              static_cast<double>(encoded) / seconds / 1e6);
}

// Llama 3's and Qwen2's regexes over SmolLM2's vocabulary and merges, against
// Hugging Face tokenizers built the way those models' tokenizer.json files are
// (tests/tokenizer/pre_tokenizer_ids.json).
TEST(SmolLM2Tokenizer, OtherPreTokenizersMatchHuggingFaceTokenizers) {
  auto path = torsh::model::find_model(torsh::model::kSmolLM2FileName);
  if (!path)
    GTEST_SKIP() << torsh::model::kSmolLM2FileName << " is not in " << torsh::model::model_cache_dir()
                 << " (scripts/fetch-model.sh)";
  std::ifstream in(TORSH_PRE_TOKENIZER_REFERENCE);
  ASSERT_TRUE(in) << TORSH_PRE_TOKENIZER_REFERENCE;
  const auto ref = nlohmann::json::parse(in);
  const TokenizerData smollm = Tokenizer::from_gguf(torsh::model::GgufFile::open(*path)).data();
  for (const char* pre : {"llama3", "qwen2"}) {
    TokenizerData d = smollm;
    d.pre = pre;
    const Tokenizer tok(d);
    std::size_t n = 0;
    for (const auto& c : ref[pre]) {
      const std::string text = c["text"];
      EXPECT_EQ(tok.encode(text), c["ids"].get<std::vector<std::int32_t>>()) << pre << " text: \"" << text << "\"";
      ++n;
    }
    EXPECT_GE(n, 300u) << pre;
  }
}

TEST(SmolLM2Tokenizer, ChatTemplateMatchesJinja) {
  auto path = torsh::model::find_model(torsh::model::kSmolLM2FileName);
  if (!path)
    GTEST_SKIP() << torsh::model::kSmolLM2FileName << " is not in " << torsh::model::model_cache_dir()
                 << " (scripts/fetch-model.sh)";
  auto tok = Tokenizer::from_gguf(torsh::model::GgufFile::open(*path));
  auto ref = reference();
  std::size_t n = 0;
  for (const auto& chat : ref["chats"]) {
    std::vector<ChatMessage> messages;
    for (const auto& m : chat["messages"]) messages.push_back({m["role"], m["content"]});
    EXPECT_EQ(tok.apply_chat_template(messages, chat["add_generation_prompt"].get<bool>()),
              chat["text"].get<std::string>());
    ++n;
  }
  EXPECT_EQ(n, 10u);
}
