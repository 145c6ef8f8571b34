#pragma once
// Chat prompts for the template families recognised in tokenizer.chat_template
// (the Jinja text is not run: its family is recognised and written out here).
#include <string>
#include <string_view>
#include <vector>

#include "torsh/model/tokenizer.hpp"

namespace torsh::model {

enum class ChatFormat {
  None,     // the model has no template
  Unknown,  // a template of no recognised family
  ChatML,   // <|im_start|>role\ncontent<|im_end|>\n
  Llama2,   // <s>[INST] <<SYS>>\n...\n<</SYS>>\n\nuser [/INST] assistant </s>
  Llama3,   // <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
  Gemma,    // <start_of_turn>user\ncontent<end_of_turn>\n<start_of_turn>model\n
  Phi3,     // <|user|>\ncontent<|end|>\n<|assistant|>\n
};

struct ChatTemplate {
  ChatFormat format = ChatFormat::None;
  // ChatML: the system message the template writes when the conversation does
  // not start with one (empty when it writes none).
  std::string default_system;
  // Unknown: the template's first line (for the refusal's message).
  std::string first_line;

  static ChatTemplate recognise(std::string_view jinja);

  // bos_text and eos_text are written where the template writes those tokens,
  // except the BOS that starts the prompt when !leading_bos (encode() adds that
  // one when the model's add_bos is set, so a prompt starts with one BOS).
  std::string render(const std::vector<ChatMessage>& messages, bool add_generation_prompt, std::string_view bos_text,
                     std::string_view eos_text, bool leading_bos) const;
};

}  // namespace torsh::model
