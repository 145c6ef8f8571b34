#include "torsh/model/tokenizer.hpp"

#include <optional>

#include "bpe.hpp"
#include "chat_template.hpp"
#include "pretokenize.hpp"
#include "special_tokens.hpp"
#include "spm.hpp"
#include "tokenizer_check.hpp"
#include "torsh/core/error.hpp"
#include "vocab.hpp"

namespace torsh::model {

namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

std::string spm_escape(std::string_view text, bool space_prefix) {
  std::string out;
  out.reserve(text.size() + 8);
  if (space_prefix) out += kSpmSpace;
  for (char c : text) {
    if (c == ' ') {
      out += kSpmSpace;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string spm_unescape(std::string_view piece) {
  std::string out;
  for (std::size_t i = 0; i < piece.size();) {
    if (piece.compare(i, kSpmSpace.size(), kSpmSpace) == 0) {
      out.push_back(' ');
      i += kSpmSpace.size();
    } else {
      out.push_back(piece[i++]);
    }
  }
  return out;
}

}  // namespace

struct Tokenizer::State {
  TokenizerData data;
  bool sentencepiece = false;
  PreTokenizer pre = PreTokenizer::Gpt2;
  TokenIndex index;                          // every token's text -> id (the lowest id of a repeated text)
  TokenIndex pieces;                         // SentencePiece: the tokens merging may produce
  std::array<std::int32_t, 256> byte_ids{};  // the <0xXX> tokens by byte value; -1 where absent
  std::optional<BytePairEncoder> bpe;
  std::optional<SentencePieceEncoder> spm;
  SpecialTokenMatcher specials;
  std::vector<std::string> token_bytes;  // what decode() writes for each token
  ChatTemplate chat;
  std::vector<std::int32_t> stop;

  std::int32_t type(std::int32_t id) const {
    return data.token_types.empty() ? kTokenNormal : data.token_types[static_cast<std::size_t>(id)];
  }
  // Tokens decode() leaves out unless asked: control tokens and the unknown token.
  bool hidden(std::int32_t id) const { return type(id) == kTokenControl || type(id) == kTokenUnknown; }
  // Tokens matched verbatim in the text.
  bool special(std::int32_t id) const { return type(id) == kTokenControl || type(id) == kTokenUserDefined; }

  std::string_view piece(std::int32_t id, bool keep_special) const {
    if (id < 0 || static_cast<std::size_t>(id) >= token_bytes.size())
      throw Error(ErrorCode::OutOfRange,
                  "token id " + std::to_string(id) + " is outside the vocabulary (0 to " +
                      std::to_string(token_bytes.size() - 1) + ")",
                  {.op = "tokenizer"});
    if (hidden(id) && !keep_special) return {};
    return token_bytes[static_cast<std::size_t>(id)];
  }

  void encode_plain(std::string_view text, bool after_special, std::vector<std::int32_t>& out,
                    std::vector<std::string_view>& words) const {
    if (sentencepiece) {
      // The prefix space goes before the text and after each special token, as
      // llama.cpp and the Llama tokenizers (legacy) do.
      spm->encode(spm_escape(text, data.add_space_prefix && after_special), out);
      return;
    }
    words.clear();
    pretokenize(pre, text, words);
    for (auto w : words) bpe->encode_word(w, out);
  }
};

Tokenizer::Tokenizer(TokenizerData data) {
  check_tokenizer_data(data);
  auto s = std::make_shared<State>();
  s->data = std::move(data);
  const auto& d = s->data;
  const auto n = static_cast<std::int32_t>(d.tokens.size());
  s->sentencepiece = d.model == "llama";
  s->index.reserve(d.tokens.size());
  for (std::int32_t id = 0; id < n; ++id) s->index.try_emplace(d.tokens[static_cast<std::size_t>(id)], id);
  s->byte_ids = byte_tokens(d);

  if (s->sentencepiece) {
    for (std::int32_t id = 0; id < n; ++id) {
      auto t = s->type(id);
      if (t == kTokenNormal || t == kTokenUserDefined || t == kTokenUndefined)
        s->pieces.try_emplace(d.tokens[static_cast<std::size_t>(id)], id);
    }
    s->spm.emplace(s->pieces, s->data.scores, s->byte_ids, d.unk);
  } else {
    s->pre = *pre_tokenizer_named(d.pre);
    s->bpe.emplace(s->index, d.merges, s->pre == PreTokenizer::Llama3);
  }

  s->token_bytes.resize(d.tokens.size());
  for (std::int32_t id = 0; id < n; ++id) {
    const std::string& text = d.tokens[static_cast<std::size_t>(id)];
    std::string& bytes = s->token_bytes[static_cast<std::size_t>(id)];
    if (s->special(id)) {
      bytes = text;  // written as they are in the vocabulary, never byte-level or escaped
      s->specials.add(text, id);
    } else if (s->type(id) == kTokenByte && s->sentencepiece) {
      bytes.assign(1, static_cast<char>(std::stoi(text.substr(3, 2), nullptr, 16)));  // "<0xXX>", checked
    } else {
      bytes = s->sentencepiece ? spm_unescape(text) : BytePairEncoder::token_bytes(text);
    }
  }

  s->chat = ChatTemplate::recognise(d.chat_template);
  if (d.eos >= 0) s->stop.push_back(d.eos);
  std::string_view end_of_turn = s->chat.format == ChatFormat::ChatML   ? "<|im_end|>"
                                 : s->chat.format == ChatFormat::Llama3 ? "<|eot_id|>"
                                 : s->chat.format == ChatFormat::Gemma  ? "<end_of_turn>"
                                 : s->chat.format == ChatFormat::Phi3   ? "<|end|>"
                                                                        : "";
  if (std::int32_t id = end_of_turn.empty() ? -1 : find_token(s->index, end_of_turn); id >= 0 && id != d.eos)
    s->stop.push_back(id);
  s_ = std::move(s);
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text, bool parse_special,
                                            std::optional<bool> add_bos) const {
  const State& s = *s_;
  std::vector<std::int32_t> out;
  out.reserve(text.size() / 3 + 2);
  if (add_bos.value_or(s.data.add_bos)) {
    if (s.data.bos < 0)
      throw Error(ErrorCode::InvalidArgument, "encode: add_bos asked for, but the tokenizer has no bos token",
                  {.op = "tokenizer"}, {"Pass add_bos = false"});
    out.push_back(s.data.bos);
  }
  std::vector<SpecialTokenMatcher::Fragment> fragments;
  if (parse_special) {
    s.specials.split(text, fragments);
  } else if (!text.empty()) {
    fragments.push_back({text, -1});
  }
  std::vector<std::string_view> words;
  bool after_special = true;  // the start of the text counts as after a special token
  for (const auto& f : fragments) {
    if (f.token >= 0) {
      out.push_back(f.token);
      after_special = true;
    } else {
      s.encode_plain(f.text, after_special, out, words);
      after_special = false;
    }
  }
  return out;
}

std::string Tokenizer::token_text(std::int32_t id, bool keep_special) const {
  return std::string(s_->piece(id, keep_special));
}

std::string Tokenizer::decode(const std::vector<std::int32_t>& ids, bool keep_special) const {
  const State& s = *s_;
  std::string out;
  out.reserve(ids.size() * 4);
  // SentencePiece: encode() put a space before the text and after each special
  // token, so the first piece there loses its leading space.
  const bool prefixed = s.sentencepiece && s.data.add_space_prefix;
  bool strip_space = prefixed;
  for (std::int32_t id : ids) {
    std::string_view piece = s.piece(id, keep_special);
    if (s.special(id)) {
      strip_space = prefixed;
    } else if (strip_space && !piece.empty()) {
      if (piece[0] == ' ') piece.remove_prefix(1);
      strip_space = false;
    }
    out += piece;
  }
  return out;
}

std::string Tokenizer::apply_chat_template(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  const State& s = *s_;
  auto text_of = [&](std::int32_t id) {
    return id >= 0 ? std::string_view(s.data.tokens[static_cast<std::size_t>(id)]) : "";
  };
  return s.chat.render(messages, add_generation_prompt, text_of(s.data.bos), text_of(s.data.eos), !s.data.add_bos);
}

std::int32_t Tokenizer::vocab_size() const { return static_cast<std::int32_t>(s_->data.tokens.size()); }
std::int32_t Tokenizer::bos() const { return s_->data.bos; }
std::int32_t Tokenizer::eos() const { return s_->data.eos; }
const std::vector<std::int32_t>& Tokenizer::stop_tokens() const { return s_->stop; }
bool Tokenizer::is_special(std::int32_t id) const { return id >= 0 && id < vocab_size() && s_->special(id); }
const TokenizerData& Tokenizer::data() const { return s_->data; }

}  // namespace torsh::model
