#include "chat_template.hpp"

#include <algorithm>

#include "torsh/core/error.hpp"
#include "unicode.hpp"

namespace torsh::model {

namespace {

// The text of a Jinja string literal, from `begin` up to `end_marker`, with the
// literal's escapes (\n, \', ...) undone.
std::string unescape_until(std::string_view jinja, std::size_t begin, std::string_view end_marker) {
  std::string out;
  std::size_t end = jinja.find(end_marker, begin);
  if (end == std::string_view::npos) return out;
  for (std::size_t i = begin; i < end; ++i) {
    if (jinja[i] != '\\' || i + 1 == end) {
      out.push_back(jinja[i]);
      continue;
    }
    char c = jinja[++i];
    out.push_back(c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c);
  }
  return out;
}

// The system message a ChatML template writes itself, as in
// {% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n...<|im_end|>\n' }}.
std::string chatml_default_system(std::string_view jinja) {
  for (std::string_view newline : {"\n", "\\n"}) {
    std::string head = "<|im_start|>system" + std::string(newline);
    if (auto at = jinja.find(head); at != std::string_view::npos)
      return unescape_until(jinja, at + head.size(), "<|im_end|>");
  }
  return {};
}

// Jinja's trim / Python's str.strip(): leading and trailing white space.
std::string_view trim(std::string_view s) {
  auto cps = unicode::decode_utf8(s);
  std::size_t b = 0, e = cps.size();
  while (b < e && cps[b].cls == unicode::CharClass::Space) ++b;
  while (e > b && cps[e - 1].cls == unicode::CharClass::Space) --e;
  if (b == e) return {};
  return s.substr(cps[b].offset, cps[e - 1].offset + cps[e - 1].length - cps[b].offset);
}

[[noreturn]] void bad_role(std::string_view format, const ChatMessage& m, std::string_view allowed) {
  throw Error(ErrorCode::InvalidArgument,
              "the " + std::string(format) + " chat template has no place for a message with role \"" + m.role + "\"",
              {.op = "apply_chat_template"}, {"Use the roles " + std::string(allowed)});
}

std::string render_chatml(const ChatTemplate& t, const std::vector<ChatMessage>& messages, bool add_generation_prompt) {
  std::string out;
  auto turn = [&](std::string_view role, std::string_view content) {
    out.append("<|im_start|>").append(role).append("\n").append(content).append("<|im_end|>\n");
  };
  if (!messages.empty() && messages.front().role != "system" && !t.default_system.empty())
    turn("system", t.default_system);
  for (const auto& m : messages) turn(m.role, m.content);
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

// Meta's Llama 2 template: the system message goes inside the first [INST];
// each answer ends with EOS and the next question starts with BOS. It has no
// generation prompt: the prompt ends with " [/INST]" either way.
std::string render_llama2(const std::vector<ChatMessage>& messages, std::string_view bos, std::string_view eos,
                          bool leading_bos) {
  std::string out, system;
  std::size_t first = 0;
  if (!messages.empty() && messages.front().role == "system") system = messages.front().content, first = 1;
  for (std::size_t i = first; i < messages.size(); ++i) {
    const auto& m = messages[i];
    std::string content = m.content;
    if (i == first && first == 1) content = "<<SYS>>\n" + system + "\n<</SYS>>\n\n" + content;
    if (m.role == "user") {
      if (i > first || leading_bos) out.append(bos);
      out.append("[INST] ").append(trim(content)).append(" [/INST]");
    } else if (m.role == "assistant") {
      out.append(" ").append(trim(content)).append(" ").append(eos);
    } else {
      bad_role("Llama 2", m, "system (first only), user and assistant");
    }
  }
  return out;
}

// Gemma 2 / 3 (Gemma 3's template; Gemma 2's refuses a system message, Gemma
// 3's puts it before the first user message, as here): "assistant" is the
// "model" turn, contents trimmed.
std::string render_gemma(const std::vector<ChatMessage>& messages, bool add_generation_prompt, std::string_view bos,
                         bool leading_bos) {
  std::string out(leading_bos ? bos : std::string_view{}), prefix;
  std::size_t first = 0;
  if (!messages.empty() && messages.front().role == "system") prefix = messages.front().content + "\n\n", first = 1;
  for (std::size_t i = first; i < messages.size(); ++i) {
    const auto& m = messages[i];
    if (m.role != "user" && m.role != "assistant") bad_role("Gemma", m, "system (first only), user and assistant");
    out.append("<start_of_turn>").append(m.role == "assistant" ? "model" : "user").append("\n");
    if (i == first) out.append(prefix);
    out.append(trim(m.content)).append("<end_of_turn>\n");
  }
  if (add_generation_prompt) out += "<start_of_turn>model\n";
  return out;
}

// Phi-3's: each message "<|role|>\ncontent<|end|>\n"; without a generation
// prompt the conversation ends with EOS.
std::string render_phi3(const std::vector<ChatMessage>& messages, bool add_generation_prompt, std::string_view eos) {
  std::string out;
  for (const auto& m : messages) {
    if (m.role != "system" && m.role != "user" && m.role != "assistant")
      bad_role("Phi-3", m, "system, user and assistant");
    out.append("<|").append(m.role).append("|>\n").append(m.content).append("<|end|>\n");
  }
  out += add_generation_prompt ? std::string("<|assistant|>\n") : std::string(eos);
  return out;
}

std::string render_llama3(const std::vector<ChatMessage>& messages, bool add_generation_prompt, std::string_view bos,
                          bool leading_bos) {
  std::string out(leading_bos ? bos : std::string_view{});
  for (const auto& m : messages)
    out.append("<|start_header_id|>")
        .append(m.role)
        .append("<|end_header_id|>\n\n")
        .append(trim(m.content))
        .append("<|eot_id|>");
  if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

}  // namespace

ChatTemplate ChatTemplate::recognise(std::string_view jinja) {
  ChatTemplate t;
  if (jinja.empty()) {
    t.format = ChatFormat::None;
  } else if (jinja.find("<|im_start|>") != std::string_view::npos) {
    t.format = ChatFormat::ChatML;
    t.default_system = chatml_default_system(jinja);
  } else if (jinja.find("<|start_header_id|>") != std::string_view::npos) {
    t.format = ChatFormat::Llama3;
  } else if (jinja.find("<start_of_turn>") != std::string_view::npos) {
    t.format = ChatFormat::Gemma;
  } else if (jinja.find("<|user|>") != std::string_view::npos && jinja.find("<|end|>") != std::string_view::npos) {
    t.format = ChatFormat::Phi3;
  } else if (jinja.find("[INST]") != std::string_view::npos) {
    t.format = ChatFormat::Llama2;
  } else {
    t.format = ChatFormat::Unknown;
    t.first_line = std::string(jinja.substr(0, std::min(jinja.find('\n'), std::size_t{120})));
  }
  return t;
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                 std::string_view bos_text, std::string_view eos_text, bool leading_bos) const {
  switch (format) {
    case ChatFormat::ChatML: return render_chatml(*this, messages, add_generation_prompt);
    case ChatFormat::Llama2: return render_llama2(messages, bos_text, eos_text, leading_bos);
    case ChatFormat::Llama3: return render_llama3(messages, add_generation_prompt, bos_text, leading_bos);
    case ChatFormat::Gemma: return render_gemma(messages, add_generation_prompt, bos_text, leading_bos);
    case ChatFormat::Phi3: return render_phi3(messages, add_generation_prompt, eos_text);
    case ChatFormat::None:
      throw Error(ErrorCode::Unsupported, "the model has no chat template (tokenizer.chat_template)",
                  {.op = "apply_chat_template"}, {"Write the prompt in the model's format and encode() it"});
    case ChatFormat::Unknown: break;
  }
  throw Error(
      ErrorCode::Unsupported,
      "the model's chat template (tokenizer.chat_template) is of no recognised family (ChatML, Llama 2, Llama 3, "
      "Gemma and Phi-3 are); it begins: " +
          first_line,
      {.op = "apply_chat_template"}, {"Write the prompt in the model's format and encode() it"});
}

}  // namespace torsh::model
