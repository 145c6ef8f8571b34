// Language models from GGUF files: tb.Model (load, generate, logits),
// tb.Tokenizer, tb.estimate_inference_memory. Forward passes release the GIL.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"
#include "torsh/model/generation.hpp"
#include "torsh/model/model_cache.hpp"

namespace torsh::py {
namespace {

using namespace torsh::model;

nb::dict memory_dict(const MemoryEstimate& e) {
  nb::dict d;
  d["weights"] = e.weights;
  d["kv_cache"] = e.kv_cache;
  d["activations"] = e.activations;
  d["total"] = e.total();
  return d;
}

nb::dict config_dict(const ModelConfig& c) {
  nb::dict d;
  d["architecture"] = c.architecture;
  d["name"] = text(c.name);
  d["n_layers"] = c.n_layers;
  d["n_embd"] = c.n_embd;
  d["n_ff"] = c.n_ff;
  d["n_head"] = c.n_head;
  d["n_head_kv"] = c.n_head_kv;
  d["head_dim"] = c.head_dim;
  d["vocab"] = c.vocab;
  d["n_ctx_train"] = c.n_ctx_train;
  d["rope_dim"] = c.rope_dim;
  d["rope_base"] = c.rope_base;
  d["rms_eps"] = c.rms_eps;
  d["tied_embeddings"] = c.tied_embeddings;
  d["rope_style"] = c.rope_style == ops::RopeStyle::NeoX ? "neox" : "gptj";
  d["qk_norm"] = c.qk_norm;
  d["rope_freq_factors"] = c.rope_freq_factors;
  d["rope_scale"] = c.rope_scale;
  d["attn_scale"] = c.attn_scale;
  d["gemma"] = c.gemma;
  d["embed_scale"] = c.embed_scale;
  d["sliding_window"] = c.sliding_window;
  d["local_layers"] = std::vector<bool>(c.local_layers.begin(), c.local_layers.end());
  d["rope_base_local"] = c.rope_base_local;
  d["rope_scale_local"] = c.rope_scale_local;
  d["attn_softcap"] = c.attn_softcap;
  d["final_softcap"] = c.final_softcap;
  return d;
}

std::string model_path(const std::optional<std::string>& path) {
  if (path) return *path;
  if (auto p = find_model(kSmolLM2FileName)) return *p;
  throw Error(ErrorCode::InvalidArgument,
              std::string(kSmolLM2FileName) + " is not in " + model_cache_dir() + " and no path was given",
              {.op = "Model.load"}, {"Run scripts/fetch-model.sh, or pass the path of a GGUF file"});
}

std::vector<std::int32_t> to_ids(nb::handle tokens) {
  std::vector<std::int32_t> ids;
  for (std::int64_t v : to_int_list(tokens, "tokens")) {
    if (v < INT32_MIN || v > INT32_MAX)
      throw Error(ErrorCode::OutOfRange, "token id " + std::to_string(v) + " does not fit in 32 bits",
                  {.op = "tokens"});
    ids.push_back(static_cast<std::int32_t>(v));
  }
  return ids;
}

}  // namespace

void bind_model(nb::module_& m) {
  nb::class_<Tokenizer>(m, "Tokenizer",
                        "A tokenizer built from a GGUF file's metadata (byte-level BPE or SentencePiece-style).")
      .def_static(
          "from_gguf", [](const std::string& path) { return Tokenizer::from_gguf(GgufFile::open(path)); },
          nb::arg("path"), "Reads the tokenizer of a GGUF file (no weights are loaded).")
      .def(
          "encode",
          [](const Tokenizer& t, const std::string& s, bool special, std::optional<bool> bos) {
            return t.encode(s, special, bos);
          },
          nb::arg("text"), nb::arg("parse_special") = true, nb::arg("add_bos") = nb::none(),
          "Token ids of `text`; special tokens such as <|im_start|> are matched when parse_special.")
      .def(
          "decode",
          [](const Tokenizer& t, nb::handle ids, bool keep) {
            const std::string s = t.decode(to_ids(ids), keep);
            return nb::bytes(s.data(), s.size());
          },
          nb::arg("ids"), nb::arg("keep_special") = false,
          "The bytes of the decoded text (UTF-8 unless the ids cut a character; use .decode('utf-8', 'replace')).")
      .def(
          "apply_chat_template",
          [](const Tokenizer& t, const std::vector<std::pair<std::string, std::string>>& msgs, bool gen) {
            std::vector<ChatMessage> v;
            for (auto& [role, content] : msgs) v.push_back({role, content});
            return t.apply_chat_template(v, gen);
          },
          nb::arg("messages"), nb::arg("add_generation_prompt") = true,
          "The model's chat prompt for [(role, content), ...].")
      .def_prop_ro("vocab_size", &Tokenizer::vocab_size, "Number of tokens.")
      .def_prop_ro("bos", &Tokenizer::bos, "Beginning-of-sequence id (-1: none).")
      .def_prop_ro("eos", &Tokenizer::eos, "End-of-sequence id (-1: none).")
      .def_prop_ro("stop_tokens", &Tokenizer::stop_tokens, "Ids that end generation (eos, end of turn).");

  nb::class_<Generation>(m, "Generation", "An iterator of text pieces from Model.generate().")
      .def(
          "__iter__", [](nb::handle self) { return nb::borrow(self); }, "The generation itself.")
      .def(
          "__next__",
          [](Generation& g) {
            std::optional<std::string> piece;
            {
              nb::gil_scoped_release unlocked;
              piece = g.next();
            }
            if (!piece) throw nb::stop_iteration();
            // A piece is whole UTF-8 sequences unless the model produced invalid bytes.
            return text(*piece);
          },
          "The next piece of text.")
      .def_prop_ro("tokens", &Generation::tokens, "The ids generated so far.")
      .def_prop_ro(
          "finish_reason", [](const Generation& g) { return finish_reason_name(g.finish_reason()); },
          "'none' while running, then 'stop' (a stop token), 'length' (max_tokens) or 'context'.")
      .def_prop_ro(
          "stats",
          [](const Generation& g) {
            const auto& s = g.stats();
            nb::dict d;
            d["prompt_tokens"] = s.prompt_tokens;
            d["generated_tokens"] = s.generated_tokens;
            d["prompt_seconds"] = s.prompt_seconds;
            d["generation_seconds"] = s.generation_seconds;
            d["prompt_tokens_per_s"] = s.prompt_tokens_per_s();
            d["generation_tokens_per_s"] = s.generation_tokens_per_s();
            return d;
          },
          "Token counts, seconds and tokens/s of the prompt and the generation.");

  nb::class_<Model>(m, "Model",
                    "A GGUF decoder language model (llama, qwen2, qwen3, gemma2, gemma3, phi3) on one backend.")
      .def_static(
          "load",
          [](std::optional<std::string> path, const DeviceArg& backend, std::int64_t ctx, std::int64_t max_batch,
             bool f32_weights, const std::string& activations, const std::string& kv_type, std::int64_t sequences,
             bool mmap) {
            const std::string p = model_path(path);
            Backend b = to_backend(backend);
            LoadOptions o;
            o.ctx = ctx;
            o.max_batch = max_batch;
            o.f32_weights = f32_weights;
            o.sequences = sequences;
            o.mmap_weights = mmap;
            const auto width = quant_activations_from_name(activations);
            if (!width)
              throw Error(ErrorCode::InvalidArgument,
                          "Model.load: activations must be 'int16' or 'int8', got '" + activations + "'",
                          {.op = "Model.load"}, {"int16 (the default) is accurate; int8 is llama.cpp's numerics"});
            o.activations = *width;
            const auto kv = kv_type_from_name(kv_type);
            if (!kv)
              throw Error(ErrorCode::InvalidArgument,
                          "Model.load: kv_type must be 'f16', 'bf16', 'f32' or 'q8_0', got '" + kv_type + "'",
                          {.op = "Model.load"},
                          {"f16 (the default) is llama.cpp's; f32 doubles the cache, q8_0 about halves it"});
            o.kv_type = *kv;
            nb::gil_scoped_release unlocked;
            return Model::load(p, b, o);
          },
          nb::arg("path") = nb::none(), nb::arg("backend") = nb::none(), nb::arg("ctx") = 0, nb::arg("max_batch") = 256,
          nb::arg("f32_weights") = false, nb::arg("activations") = "int16", nb::arg("kv_type") = "f16",
          nb::arg("sequences") = 1, nb::arg("mmap") = false,
          "Loads a GGUF model (default: the cached SmolLM2-135M-Instruct) onto a backend (default: the CPU). "
          "The integer kernels quantize activations per 32-block to `activations` levels: 'int16' (logits "
          "within 1e-3 of an f32 forward) or 'int8' (llama.cpp's numerics: faster prompts, logits off by a "
          "few percent). f32_weights dequantizes Q4/Q8 weights once and computes in f32 (5-7x the memory). "
          "kv_type is the KV cache's element type: 'f16' (the default, llama.cpp's), 'bf16', 'f32' or 'q8_0' (CPU "
          "only). sequences is "
          "how many sequences the cache holds at once (generate_parallel decodes that many together). mmap "
          "computes on the file's mapped pages on the CPU instead of reading the weights into huge pages "
          "(slower decode, pages shared with other processes). Refuses with OutOfMemory, with the numbers, when it "
          "would not fit.")
      .def(
          "generate",
          [](Model& self, const std::string& prompt, std::int64_t max_tokens, float temperature, std::int32_t top_k,
             float top_p, std::uint64_t seed, bool chat) {
            GenerationOptions o;
            o.max_tokens = max_tokens;
            o.sampling = SamplingParams{temperature, top_k, top_p, seed};
            return Generation(self, encode_prompt(self.tokenizer(), prompt, chat), o);
          },
          nb::arg("prompt"), nb::arg("max_tokens") = 128, nb::arg("temperature") = 0.0f, nb::arg("top_k") = 0,
          nb::arg("top_p") = 1.0f, nb::arg("seed") = 0, nb::arg("chat") = false,
          "A Generation: iterate it for text pieces (temperature 0 is greedy); chat wraps the prompt in the chat "
          "template.")
      .def(
          "generate_parallel",
          [](Model& self, const std::vector<std::string>& prompts, std::int64_t max_tokens, float temperature,
             std::int32_t top_k, float top_p, std::uint64_t seed, bool chat) {
            GenerationOptions o;
            o.max_tokens = max_tokens;
            o.sampling = SamplingParams{temperature, top_k, top_p, seed};
            std::vector<std::vector<std::int32_t>> ids;
            for (const auto& p : prompts) ids.push_back(encode_prompt(self.tokenizer(), p, chat));
            ParallelResult r;
            {
              nb::gil_scoped_release unlocked;
              r = generate_parallel(self, ids, o);
            }
            nb::dict stats;
            stats["prompt_tokens"] = r.prompt_tokens;
            stats["generated_tokens"] = r.generated_tokens;
            stats["prompt_seconds"] = r.prompt_seconds;
            stats["decode_seconds"] = r.decode_seconds;
            stats["decode_tokens_per_s"] = r.decode_tokens_per_s();
            nb::list reasons;
            for (auto f : r.finish) reasons.append(finish_reason_name(f));
            return nb::make_tuple(r.texts, reasons, stats);
          },
          nb::arg("prompts"), nb::arg("max_tokens") = 128, nb::arg("temperature") = 0.0f, nb::arg("top_k") = 0,
          nb::arg("top_p") = 1.0f, nb::arg("seed") = 0, nb::arg("chat") = false,
          "Continuations of every prompt, decoded together (one forward pass per step for all of them; prompt i "
          "sampled with seed + i): (texts, finish reasons, stats with the aggregate decode_tokens_per_s). The model "
          "must hold len(prompts) sequences (load(sequences=...)).")
      .def(
          "logits",
          [](Model& self, nb::handle tokens) {
            const std::vector<std::int32_t> ids = to_ids(tokens);
            Tensor l;
            {
              nb::gil_scoped_release unlocked;
              // A sequence of its own: from position 0, whatever else uses the model meanwhile.
              Model::Sequence fresh;
              l = self.extend(fresh, ids, true);
            }
            if (l.device().type != BackendType::Cpu) {
              Backend cpu = cpu_backend();
              l = l.to(cpu);
            }
            return numpy_view(l);
          },
          nb::arg("tokens"),
          "Logits [len(tokens), vocab] (f32 NumPy array sharing the result's memory on the CPU) of the tokens from "
          "position 0.")
      .def_prop_ro("tokenizer", &Model::tokenizer, "The model's tokenizer.")
      .def_prop_ro(
          "config", [](const Model& self) { return config_dict(self.config()); }, "Hyper-parameters.")
      .def_prop_ro(
          "memory_estimate", [](const Model& self) { return memory_dict(self.memory_estimate()); },
          "Bytes of weights, KV cache and activations (estimate_inference_memory at load).")
      .def_prop_ro("context", &Model::context, "KV cache length in tokens (per sequence).")
      .def_prop_ro("sequences", &Model::sequences, "Sequences the KV cache holds at once.")
      .def_prop_ro("backend", &Model::backend, "Where the model runs.");

  m.def(
      "estimate_inference_memory",
      [](std::optional<std::string> path, std::int64_t ctx, std::int64_t batch) {
        GgufFile f = GgufFile::open(model_path(path));
        const ModelConfig c = ModelConfig::from_gguf(f);
        std::uint64_t w = 0;
        for (const auto& t : f.tensors()) w += t.nbytes;
        return memory_dict(
            estimate_inference_memory(c, w, ctx > 0 ? ctx : std::min<std::int64_t>(c.n_ctx_train, 4096), batch));
      },
      nb::arg("path") = nb::none(), nb::arg("ctx") = 0, nb::arg("batch") = 256,
      "Bytes a GGUF model needs (weights, KV cache for ctx tokens, activations for a batch), before loading it.");
  m.def("model_cache_dir", &model_cache_dir, "Where models are cached ($TORSH_MODEL_DIR or ~/.cache/torsh/models).");
}

}  // namespace torsh::py
