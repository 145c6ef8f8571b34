#pragma once
// Streaming text generation: prefill the prompt, then decode one token at a
// time, handing back text pieces that are whole UTF-8 sequences.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "torsh/model/model.hpp"
#include "torsh/model/sampler.hpp"

namespace torsh::model {

struct GenerationOptions {
  std::int64_t max_tokens = 128;
  SamplingParams sampling;
  bool stop_at_eos = true;  // stop at the tokenizer's stop tokens (eos, end of turn)
};

// A user prompt as the ids a Generation starts from: wrapped in the model's
// chat template as one user turn when `chat`, encoded with special tokens
// parsed. Generation needs at least one token, so an empty result becomes
// [bos] (or [eos] when the tokenizer has no bos).
std::vector<std::int32_t> encode_prompt(const Tokenizer& tokenizer, const std::string& prompt, bool chat);

enum class FinishReason { None, Stop, Length, Context };
const char* finish_reason_name(FinishReason r);

struct GenerationStats {
  std::int64_t prompt_tokens = 0, generated_tokens = 0;
  double prompt_seconds = 0, generation_seconds = 0;
  double prompt_tokens_per_s() const { return prompt_seconds > 0 ? prompt_tokens / prompt_seconds : 0; }
  // Tokens after the first (the first comes from the prefill's logits) over the decode time.
  double generation_tokens_per_s() const;
};

// Continuations of several prompts decoded together: the prompts are
// prefilled one by one, then every step decodes one token of each unfinished
// sequence in one forward pass (Model::decode). Sequence i samples with
// seed opts.sampling.seed + i, so N copies of one prompt give N different
// continuations at a temperature above 0. The model needs prompts.size()
// sequence slots (LoadOptions::sequences).
struct ParallelResult {
  std::vector<std::vector<std::int32_t>> tokens;  // generated ids, per prompt
  std::vector<std::string> texts;                 // their text (stop tokens left out)
  std::vector<FinishReason> finish;
  std::int64_t prompt_tokens = 0, generated_tokens = 0;
  double prompt_seconds = 0;
  // The batched steps alone (each sequence's first token comes from its
  // prefill), and their tokens over that time: the aggregate decode rate.
  double decode_seconds = 0;
  std::int64_t decode_tokens = 0;
  double decode_tokens_per_s() const { return decode_seconds > 0 ? decode_tokens / decode_seconds : 0; }
};
ParallelResult generate_parallel(Model& model, const std::vector<std::vector<std::int32_t>>& prompts,
                                 const GenerationOptions& opts = {});

class Generation {
 public:
  // Runs nothing yet; the prompt is prefilled by the first next(). The
  // generation owns its sequence (Model::Sequence): other generations or
  // forward() calls on the same model between its steps cost a recompute of
  // its tokens, never a mixed cache. One Generation is advanced by one thread
  // at a time: a next() that overlaps another on the same object is refused.
  Generation(Model& model, std::vector<std::int32_t> prompt, GenerationOptions opts = {});

  // The next piece of text (possibly empty while a UTF-8 sequence is incomplete
  // or a control token was produced); nullopt once finished.
  std::optional<std::string> next();
  std::string run_to_end();

  const std::vector<std::int32_t>& tokens() const { return generated_; }
  FinishReason finish_reason() const { return finish_; }
  const GenerationStats& stats() const { return stats_; }

 private:
  std::optional<std::string> step();

  Model model_;  // a handle: shares the model with the caller
  Model::Sequence seq_;
  std::unique_ptr<std::atomic<bool>> busy_ = std::make_unique<std::atomic<bool>>(false);  // in next()
  std::vector<std::int32_t> prompt_, generated_;
  GenerationOptions opts_;
  Sampler sampler_;
  std::string pending_;  // bytes of an incomplete UTF-8 sequence
  Tensor logits_;
  FinishReason finish_ = FinishReason::None;
  GenerationStats stats_;
  bool started_ = false;
};

}  // namespace torsh::model
