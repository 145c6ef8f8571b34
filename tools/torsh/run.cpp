// `torsh run`: generate text from a GGUF language model on any backend,
// streamed as it is produced, ending with prompt and generation speed.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "commands.hpp"
#include "torsh/model/generation.hpp"
#include "torsh/model/model_cache.hpp"
#include "torsh/torsh.hpp"

namespace torsh::cli {
namespace {

void report_fallbacks(Backend& dev) {
  const auto fb = ops::fallback_stats();
  if (fb.ops)
    std::fprintf(stderr, "fallbacks: %llu ops ran on the CPU (%llu copies, %.1f MiB) because %s lacks them\n",
                 static_cast<unsigned long long>(fb.ops), static_cast<unsigned long long>(fb.copies),
                 static_cast<double>(fb.bytes) / (1024.0 * 1024.0), dev.name().c_str());
}

// Several sequences decoded together: printed when all are done, each under
// its number, then the aggregate decode rate.
int run_batched(model::Model& m, const std::vector<std::string>& prompts, const RunOptions& opt,
                const model::GenerationOptions& go) {
  std::vector<std::vector<std::int32_t>> ids;
  for (const auto& p : prompts) ids.push_back(model::encode_prompt(m.tokenizer(), p, opt.chat));
  const model::ParallelResult r = model::generate_parallel(m, ids, go);
  for (std::size_t i = 0; i < prompts.size(); ++i)
    std::printf("[%zu] %s%s\n", i + 1, opt.chat ? "" : prompts[i].c_str(), r.texts[i].c_str());
  std::fflush(stdout);
  std::fprintf(stderr,
               "prompts: %zu sequences, %lld tokens, %.1f tokens/s; generation: %lld tokens, %.1f tokens/s over "
               "all sequences\n",
               prompts.size(), static_cast<long long>(r.prompt_tokens),
               r.prompt_seconds > 0 ? r.prompt_tokens / r.prompt_seconds : 0.0,
               static_cast<long long>(r.generated_tokens), r.decode_tokens_per_s());
  Backend dev = m.backend();
  report_fallbacks(dev);
  return 0;
}

}  // namespace

int run(const RunOptions& opt) {
  using namespace torsh::model;
  std::string path = opt.model;
  if (path.empty()) {
    const auto cached = find_model(kSmolLM2FileName);
    if (!cached) {
      std::fprintf(stderr,
                   "torsh run: no model given and %s is not in %s\n"
                   "Fetch it with `bash scripts/fetch-model.sh`, or pass a GGUF file.\n",
                   std::string(kSmolLM2FileName).c_str(), model_cache_dir().c_str());
      return 2;
    }
    path = *cached;
  }
  const auto type = backend_from_name(opt.backend);
  if (!type) {
    std::fprintf(stderr, "torsh run: unknown backend '%s'\n", opt.backend.c_str());
    return 2;
  }
  // More threads than hardware threads: allowed (the pool sleeps rather than
  // spins when oversubscribed), but slower than one per core, so say so.
  if (const unsigned hw = std::thread::hardware_concurrency(); hw && opt.threads > static_cast<int>(hw))
    std::fprintf(stderr,
                 "torsh run: note: --threads %d is more than the %u hardware threads here; the extra threads share "
                 "cores and make each op slower (0 picks one per core)\n",
                 opt.threads, hw);
  Backend dev = *type == BackendType::Cpu && opt.threads > 0
                    ? Backend::builder().backend_type(BackendType::Cpu).num_threads(opt.threads).build()
                    : Backend::create(*type);

  GgufFile file = GgufFile::open(path);
  const ModelConfig cfg = ModelConfig::from_gguf(file);
  LoadOptions lo;
  lo.ctx = opt.ctx;
  lo.activations = quant_activations_from_name(opt.activations).value_or(QuantActivations::Int16);
  lo.kv_type = kv_type_from_name(opt.kv_type).value_or(KvType::F16);
  lo.mmap_weights = opt.mmap;
  std::vector<std::string> prompts;
  if (!opt.prompt_file.empty()) {
    std::ifstream in(opt.prompt_file);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) prompts.push_back(line);
    if (prompts.empty()) {
      std::fprintf(stderr, "torsh run: %s has no prompt (one per non-empty line)\n", opt.prompt_file.c_str());
      return 2;
    }
  } else {
    prompts.assign(static_cast<std::size_t>(opt.parallel), opt.prompt);
  }
  const bool batched = prompts.size() > 1;
  lo.sequences = static_cast<std::int64_t>(prompts.size());
  std::uint64_t weight_bytes = 0;
  for (const auto& t : file.tensors()) weight_bytes += t.nbytes;
  const std::int64_t ctx = opt.ctx > 0 ? opt.ctx : std::min<std::int64_t>(cfg.n_ctx_train, 4096);
  std::fprintf(stderr, "model: %s (%s, %lld layers, %lld-dim, vocab %lld)\n", path.c_str(), cfg.name.c_str(),
               static_cast<long long>(cfg.n_layers), static_cast<long long>(cfg.n_embd),
               static_cast<long long>(cfg.vocab));
  std::fprintf(stderr, "memory: %s (ctx %lld x %lld sequences, %s KV cache)\n",
               estimate_inference_memory(cfg, weight_bytes, ctx, lo.max_batch, false, lo.kv_type, lo.sequences)
                   .to_string()
                   .c_str(),
               static_cast<long long>(ctx), static_cast<long long>(lo.sequences), opt.kv_type.c_str());
  std::fprintf(stderr, "device: %s%s\n", dev.name().c_str(), *type == BackendType::Auto ? " [auto-selected]" : "");
  Model m = Model::load(std::move(file), dev, lo);

  GenerationOptions go;
  go.max_tokens = opt.max_tokens;
  go.sampling = SamplingParams{static_cast<float>(opt.temperature), opt.top_k, static_cast<float>(opt.top_p), opt.seed};
  ops::reset_fallback_stats();
  if (batched) return run_batched(m, prompts, opt, go);
  std::vector<std::int32_t> ids = encode_prompt(m.tokenizer(), opt.prompt, opt.chat);
  Generation gen(m, std::move(ids), go);
  if (!opt.chat) std::fputs(opt.prompt.c_str(), stdout);
  while (auto piece = gen.next()) {
    std::fputs(piece->c_str(), stdout);
    std::fflush(stdout);
  }
  std::fputs("\n", stdout);
  std::fflush(stdout);
  const GenerationStats& st = gen.stats();
  std::fprintf(stderr, "prompt: %lld tokens, %.1f tokens/s; generation: %lld tokens, %.1f tokens/s (%s)\n",
               static_cast<long long>(st.prompt_tokens), st.prompt_tokens_per_s(),
               static_cast<long long>(st.generated_tokens), st.generation_tokens_per_s(),
               finish_reason_name(gen.finish_reason()));
  report_fallbacks(dev);
  return 0;
}

}  // namespace torsh::cli
