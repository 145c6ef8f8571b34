// The hyper-parameters of a decoder GGUF file of an architecture in the table.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <string_view>

#include "architecture.hpp"
#include "torsh/core/error.hpp"
#include "torsh/model/model.hpp"

namespace torsh::model {
namespace {

Error bad(const GgufFile& f, const std::string& what) {
  return Error(ErrorCode::InvalidArgument, f.path() + ": " + what, {.op = "load_model"},
               {"Check that the file is a complete GGUF model"});
}

// The `{arch}.*` keys this forward reads, or checks and may leave at their
// meaning (a key outside the list may change the math, so the file is refused).
constexpr std::string_view kKnownKeys[] = {"block_count",
                                           "embedding_length",
                                           "feed_forward_length",
                                           "attention.head_count",
                                           "attention.head_count_kv",
                                           "context_length",
                                           "rope.freq_base",
                                           "attention.layer_norm_rms_epsilon",
                                           "attention.key_length",
                                           "attention.value_length",
                                           "rope.dimension_count",
                                           "rope.scaling.type",
                                           "rope.scaling.factor",
                                           "rope.scaling.original_context_length",
                                           "rope.scaling.finetuned",
                                           "rope.scaling.attn_factor",
                                           "vocab_size",
                                           "expert_count",
                                           "expert_used_count"};

// Keys that change the math unless they hold their neutral value.
void refuse_unknown_keys(const GgufFile& f, const std::string& prefix, const Architecture& arch) {
  for (const auto& [key, value] : f.metadata()) {
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string_view rest = std::string_view(key).substr(prefix.size());
    if (std::find(std::begin(kKnownKeys), std::end(kKnownKeys), rest) == std::end(kKnownKeys) &&
        std::find(arch.keys.begin(), arch.keys.end(), rest) == arch.keys.end())
      throw Error(ErrorCode::Unsupported,
                  f.path() + ": metadata key '" + key + "' is not understood by the " +
                      prefix.substr(0, prefix.size() - 1) +
                      " forward, and it may change the math; refusing rather than running the model without it",
                  {.op = "load_model"}, {"Report the key if the model should load"});
  }
  for (const char* moe : {"expert_count", "expert_used_count"})
    if (f.get_int(prefix + moe, 0) != 0)
      throw Error(ErrorCode::Unsupported,
                  f.path() + ": " + prefix + moe + " = " + std::to_string(f.get_int(prefix + moe)) +
                      ": mixture-of-experts layers are not implemented",
                  {.op = "load_model"}, {"Use a dense (non-MoE) model"});
}

}  // namespace

ModelConfig ModelConfig::from_gguf(const GgufFile& f) {
  ModelConfig c;
  c.architecture = f.get_string("general.architecture");
  const Architecture* arch = find_architecture(c.architecture);
  if (!arch)
    throw Error(ErrorCode::Unsupported,
                f.path() + ": architecture '" + c.architecture + "' is not supported; the forward runs " +
                    supported_architectures(),
                {.op = "load_model"}, {"Use a GGUF file of one of those architectures"});
  c.rope_style = arch->rope;
  c.qk_norm = arch->qk_norm;
  c.rope_freq_factors =
      arch->rope_freqs && (f.find_tensor("rope_freqs.weight") || f.find_tensor("rope_factors_short.weight") ||
                           f.find_tensor("rope_factors_long.weight"));
  const std::string a = c.architecture + ".";
  c.name = f.get_string("general.name", "");
  c.n_layers = f.get_int(a + "block_count");
  c.n_embd = f.get_int(a + "embedding_length");
  c.n_ff = f.get_int(a + "feed_forward_length");
  c.n_head = f.get_int(a + "attention.head_count");
  c.n_head_kv = f.get_int(a + "attention.head_count_kv", c.n_head);
  refuse_unknown_keys(f, a, *arch);
  c.n_ctx_train = f.get_int(a + "context_length", 2048);
  if (c.n_ctx_train <= 0)
    throw bad(f, a + "context_length is " + std::to_string(c.n_ctx_train) + "; the trained context must be positive");
  c.rope_base = static_cast<float>(f.get_float(a + "rope.freq_base", 10000.0));
  c.rms_eps = static_cast<float>(f.get_float(a + "attention.layer_norm_rms_epsilon", 1e-5));
  if (c.n_layers <= 0 || c.n_embd <= 0 || c.n_ff <= 0 || c.n_head <= 0 || c.n_head_kv <= 0)
    throw bad(f, "block_count, embedding_length, feed_forward_length and the head counts must be positive");
  if (c.n_head % c.n_head_kv)
    throw bad(
        f, "head_count " + std::to_string(c.n_head) + " must divide by head_count_kv " + std::to_string(c.n_head_kv));
  if (!f.find(a + "attention.key_length") && c.n_embd % c.n_head)
    throw bad(f, "embedding_length " + std::to_string(c.n_embd) + " must divide by head_count " +
                     std::to_string(c.n_head) + " when attention.key_length does not give the head size");
  c.head_dim = f.get_int(a + "attention.key_length", c.n_embd / c.n_head);
  if (c.head_dim <= 0) throw bad(f, "attention.key_length must be positive");
  if (f.get_int(a + "attention.value_length", c.head_dim) != c.head_dim)
    throw Error(ErrorCode::Unsupported,
                f.path() + ": value heads of " + std::to_string(f.get_int(a + "attention.value_length")) +
                    " but key heads of " + std::to_string(c.head_dim) + "; the attention takes one head size",
                {.op = "load_model"});
  c.rope_dim = f.get_int(a + "rope.dimension_count", c.head_dim);
  if (c.rope_dim <= 0 || c.rope_dim > c.head_dim || c.rope_dim % 2)
    throw bad(f, "rope.dimension_count " + std::to_string(c.rope_dim) + " must be even and at most the head size " +
                     std::to_string(c.head_dim));
  if (!(c.rope_base > 0.0f) || !(c.rms_eps > 0.0f)) throw bad(f, "rope.freq_base and the RMS epsilon must be > 0");
  const std::string scaling = f.get_string(a + "rope.scaling.type", "none");
  const double factor = f.get_float(a + "rope.scaling.factor", 1.0);
  if (scaling == "linear") {
    if (!(factor > 0.0) || !std::isfinite(factor))
      throw bad(f, a + "rope.scaling.factor " + std::to_string(factor) + " must be finite and > 0");
    c.rope_scale = static_cast<float>(factor);
  } else if (scaling != "none" && factor != 1.0) {
    throw Error(ErrorCode::Unsupported, f.path() + ": RoPE scaling '" + scaling + "' is not implemented (linear is)",
                {.op = "load_model"});
  }
  c.attn_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  // RoPE's attention factor scales the rotated queries and keys (llama.cpp's
  // rope mscale), so the scores by its square.
  const double attn_factor = f.get_float(a + "rope.scaling.attn_factor", 1.0);
  if (!(attn_factor > 0.0) || !std::isfinite(attn_factor))
    throw bad(f, a + "rope.scaling.attn_factor must be finite and > 0");
  c.attn_scale *= static_cast<float>(attn_factor * attn_factor);
  c.n_ctx_orig = f.get_int(a + "rope.scaling.original_context_length", c.n_ctx_train);
  c.rope_base_local = c.rope_base;
  c.rope_scale_local = c.rope_scale;
  if (arch->gemma) {
    c.gemma = true;
    c.embed_scale = std::sqrt(static_cast<float>(c.n_embd));
    // As llama.cpp (after gemma_pytorch's config): the 27B models scale the
    // scores by n_embd / n_head, known there by their layer count.
    if ((c.architecture == "gemma2" && c.n_layers == 46) || (c.architecture == "gemma3" && c.n_layers == 62))
      c.attn_scale = 1.0f / std::sqrt(static_cast<float>(c.n_embd / c.n_head));
    c.attn_softcap = static_cast<float>(f.get_float(a + "attn_logit_softcapping", arch->default_attn_softcap));
    c.final_softcap = static_cast<float>(f.get_float(a + "final_logit_softcapping", arch->default_final_softcap));
    if (!(c.attn_softcap >= 0.0f) || !(c.final_softcap >= 0.0f) || !std::isfinite(c.attn_softcap) ||
        !std::isfinite(c.final_softcap))
      throw bad(f, "the logit soft-caps must be finite and >= 0");
  }
  if (arch->swa_pattern > 0) {
    c.sliding_window = f.get_int(a + "attention.sliding_window", arch->default_window);
    if (c.sliding_window < 0) throw bad(f, a + "attention.sliding_window must be >= 0");
  }
  if (c.sliding_window > 0) {
    // Gemma 3's local layers: RoPE base 10000 and no scaling unless the file says; Gemma 2's: the global ones'.
    if (c.architecture == "gemma3") c.rope_base_local = 10000.0f, c.rope_scale_local = 1.0f;
    c.rope_base_local = static_cast<float>(f.get_float(a + "rope.freq_base_swa", c.rope_base_local));
    if (!(c.rope_base_local > 0.0f)) throw bad(f, a + "rope.freq_base_swa must be > 0");
    c.local_layers.assign(static_cast<std::size_t>(c.n_layers), false);
    const GgufValue* pattern = f.find(a + "attention.sliding_window_pattern");
    if (pattern && !pattern->array.empty()) {  // one flag per layer
      if (static_cast<std::int64_t>(pattern->array.size()) != c.n_layers)
        throw bad(f, a + "attention.sliding_window_pattern has " + std::to_string(pattern->array.size()) +
                         " flags for " + std::to_string(c.n_layers) + " layers");
      for (std::size_t i = 0; i < pattern->array.size(); ++i) c.local_layers[i] = pattern->array[i].as_int() != 0;
    } else {
      const std::int64_t n = pattern ? pattern->as_int() : arch->swa_pattern;
      if (n < 0) throw bad(f, a + "attention.sliding_window_pattern must be >= 0");
      for (std::int64_t i = 0; i < c.n_layers; ++i)
        c.local_layers[static_cast<std::size_t>(i)] = n == 0 || i % n < n - 1;
    }
  }
  if (const GgufValue* v = f.find(a + "vocab_size")) {
    c.vocab = v->as_int();
  } else if (const GgufValue* t = f.find("tokenizer.ggml.tokens")) {
    c.vocab = static_cast<std::int64_t>(t->array.size());
  }
  const GgufTensorInfo& emb = f.tensor("token_embd.weight");
  if (emb.dims.size() != 2 || emb.dims[0] != c.n_embd)
    throw bad(f, "token_embd.weight must be [vocab, " + std::to_string(c.n_embd) + "]");
  if (c.vocab == 0) c.vocab = emb.dims[1];
  if (emb.dims[1] != c.vocab)
    throw bad(f, "token_embd.weight has " + std::to_string(emb.dims[1]) + " rows but the vocabulary has " +
                     std::to_string(c.vocab) + " tokens");
  c.tied_embeddings = f.find_tensor("output.weight") == nullptr;
  return c;
}

}  // namespace torsh::model
