// Streaming generation: the prompt is prefilled on the first next(), each
// later call decodes one token. Text goes out in whole UTF-8 sequences, so a
// character split across tokens (emoji, CJK) is never printed half.
#include "torsh/model/generation.hpp"

#include <algorithm>
#include <chrono>

#include "torsh/core/error.hpp"

namespace torsh::model {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Length of the longest prefix of s that does not end inside a UTF-8 sequence.
std::size_t complete_utf8_prefix(const std::string& s) {
  std::size_t n = s.size();
  // Look back at most 3 bytes for the lead byte of an unfinished sequence.
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    const std::size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return need > back ? n - back : n;
  }
  return n;  // only continuation bytes (invalid UTF-8): pass them through
}

}  // namespace

std::vector<std::int32_t> encode_prompt(const Tokenizer& tokenizer, const std::string& prompt, bool chat) {
  const std::string text = chat ? tokenizer.apply_chat_template({{"user", prompt}}, true) : prompt;
  std::vector<std::int32_t> ids = tokenizer.encode(text, true);
  if (ids.empty()) ids.push_back(tokenizer.bos() >= 0 ? tokenizer.bos() : tokenizer.eos());
  return ids;
}

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::None: return "none";
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Context: return "context";
  }
  return "none";
}

double GenerationStats::generation_tokens_per_s() const {
  return generation_seconds > 0 && generated_tokens > 1 ? (generated_tokens - 1) / generation_seconds : 0;
}

Generation::Generation(Model& model, std::vector<std::int32_t> prompt, GenerationOptions opts)
    : model_(model), prompt_(std::move(prompt)), opts_(opts), sampler_(opts.sampling) {
  if (prompt_.empty())
    throw Error(ErrorCode::InvalidArgument, "generation needs a prompt of at least one token", {.op = "generate"},
                {"Encode some text first (with the BOS token if the model wants one)"});
  if (opts_.max_tokens < 0) throw Error(ErrorCode::InvalidArgument, "max_tokens must be >= 0", {.op = "generate"});
  if (static_cast<std::int64_t>(prompt_.size()) > model_.context())
    throw Error(ErrorCode::OutOfRange,
                "the prompt has " + std::to_string(prompt_.size()) + " tokens but the context holds " +
                    std::to_string(model_.context()),
                {.op = "generate"}, {"Load the model with a larger ctx, or shorten the prompt"});
}

std::optional<std::string> Generation::next() {
  if (busy_->exchange(true))
    throw Error(ErrorCode::InvalidState, "this generation is already being advanced by another thread",
                {.op = "generate"}, {"Advance each generation from one thread, or start one generation per thread"});
  struct Release {
    std::atomic<bool>& busy;
    ~Release() { busy = false; }
  } release{*busy_};
  return step();
}

std::optional<std::string> Generation::step() {
  if (finish_ != FinishReason::None) return std::nullopt;
  if (!started_) {
    started_ = true;
    stats_.prompt_tokens = static_cast<std::int64_t>(prompt_.size());
    const auto t0 = Clock::now();
    logits_ = model_.extend(seq_, prompt_);
    model_.backend().synchronize();
    stats_.prompt_seconds = seconds_since(t0);
  }
  if (static_cast<std::int64_t>(generated_.size()) >= opts_.max_tokens) {
    finish_ = FinishReason::Length;
  } else {
    const auto t0 = Clock::now();
    if (!generated_.empty()) {
      if (static_cast<std::int64_t>(seq_.tokens.size()) >= model_.context()) {
        finish_ = FinishReason::Context;
      } else {
        const std::int32_t last = generated_.back();
        logits_ = model_.extend(seq_, std::span<const std::int32_t>(&last, 1));
      }
    }
    if (finish_ == FinishReason::None) {
      const std::vector<float> l = logits_.to_vector();
      const std::int32_t tok = sampler_.sample(l);
      if (!generated_.empty()) stats_.generation_seconds += seconds_since(t0);
      generated_.push_back(tok);
      stats_.generated_tokens = static_cast<std::int64_t>(generated_.size());
      const auto& stops = model_.tokenizer().stop_tokens();
      if (opts_.stop_at_eos && std::find(stops.begin(), stops.end(), tok) != stops.end()) {
        finish_ = FinishReason::Stop;
      } else {
        pending_ += model_.tokenizer().token_text(tok);
        const std::size_t n = complete_utf8_prefix(pending_);
        std::string out = pending_.substr(0, n);
        pending_.erase(0, n);
        return out;
      }
    }
  }
  // Finished: hand back whatever bytes were held for an unfinished sequence.
  if (!pending_.empty()) {
    std::string out = std::move(pending_);
    pending_.clear();
    return out;
  }
  return std::nullopt;
}

ParallelResult generate_parallel(Model& model, const std::vector<std::vector<std::int32_t>>& prompts,
                                 const GenerationOptions& opts) {
  const auto n = static_cast<std::int64_t>(prompts.size());
  if (n == 0)
    throw Error(ErrorCode::InvalidArgument, "generate_parallel needs at least one prompt", {.op = "generate"});
  if (n > model.sequences())
    throw Error(ErrorCode::InvalidArgument,
                std::to_string(n) + " prompts but the model's KV cache holds " + std::to_string(model.sequences()) +
                    " sequences",
                {.op = "generate"}, {"Load the model with LoadOptions::sequences >= " + std::to_string(n)});
  if (opts.max_tokens < 0) throw Error(ErrorCode::InvalidArgument, "max_tokens must be >= 0", {.op = "generate"});
  for (const auto& p : prompts)
    if (p.empty() || static_cast<std::int64_t>(p.size()) > model.context())
      throw Error(ErrorCode::InvalidArgument,
                  "each prompt needs between 1 and " + std::to_string(model.context()) + " tokens (one has " +
                      std::to_string(p.size()) + ")",
                  {.op = "generate"});
  ParallelResult r;
  r.tokens.resize(prompts.size());
  r.texts.resize(prompts.size());
  r.finish.assign(prompts.size(), FinishReason::None);
  std::vector<Model::Sequence> seqs(prompts.size());
  std::vector<Sampler> samplers;
  std::vector<Tensor> logits(prompts.size());
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    SamplingParams sp = opts.sampling;
    sp.seed += i;
    samplers.emplace_back(sp);
    logits[i] = model.extend(seqs[i], prompts[i]);
    r.prompt_tokens += static_cast<std::int64_t>(prompts[i].size());
  }
  model.backend().synchronize();
  r.prompt_seconds = seconds_since(t0);
  const auto& stops = model.tokenizer().stop_tokens();
  // Samples each unfinished sequence's next token from its logits row.
  auto sample = [&](std::size_t i, const std::vector<float>& row) {
    if (static_cast<std::int64_t>(r.tokens[i].size()) >= opts.max_tokens) {
      r.finish[i] = FinishReason::Length;
      return;
    }
    if (!r.tokens[i].empty() && static_cast<std::int64_t>(seqs[i].tokens.size()) >= model.context()) {
      r.finish[i] = FinishReason::Context;
      return;
    }
    const std::int32_t tok = samplers[i].sample(row);
    r.tokens[i].push_back(tok);
    ++r.generated_tokens;
    if (opts.stop_at_eos && std::find(stops.begin(), stops.end(), tok) != stops.end()) r.finish[i] = FinishReason::Stop;
  };
  for (std::size_t i = 0; i < prompts.size(); ++i) sample(i, logits[i].to_vector());
  for (;;) {
    std::vector<Model::Sequence*> live;
    std::vector<std::int32_t> next;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      if (r.finish[i] != FinishReason::None) continue;
      if (static_cast<std::int64_t>(r.tokens[i].size()) >= opts.max_tokens) {
        r.finish[i] = FinishReason::Length;
      } else if (static_cast<std::int64_t>(seqs[i].tokens.size()) >= model.context()) {
        r.finish[i] = FinishReason::Context;
      } else {
        live.push_back(&seqs[i]);
        next.push_back(r.tokens[i].back());
        which.push_back(i);
      }
    }
    if (live.empty()) break;
    const auto ts = Clock::now();
    const std::vector<float> all = model.decode(live, next).to_vector();
    const auto vocab = static_cast<std::size_t>(model.config().vocab);
    for (std::size_t k = 0; k < which.size(); ++k)
      sample(which[k], std::vector<float>(all.begin() + static_cast<std::ptrdiff_t>(k * vocab),
                                          all.begin() + static_cast<std::ptrdiff_t>((k + 1) * vocab)));
    r.decode_seconds += seconds_since(ts);
    r.decode_tokens += static_cast<std::int64_t>(which.size());
  }
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    // The text a Generation streams: each token's bytes, the stop token left out.
    std::size_t n = r.tokens[i].size();
    if (r.finish[i] == FinishReason::Stop && n) --n;
    for (std::size_t k = 0; k < n; ++k) r.texts[i] += model.tokenizer().token_text(r.tokens[i][k]);
  }
  return r;
}

std::string Generation::run_to_end() {
  std::string text;
  while (auto piece = next()) text += *piece;
  return text;
}

}  // namespace torsh::model
