// The hyper-parameters of a llama-architecture GGUF file.
#include <string>

#include "torsh/core/error.hpp"
#include "torsh/model/llama.hpp"

namespace torsh::model {
namespace {

Error bad(const GgufFile& f, const std::string& what) {
  return Error(ErrorCode::InvalidArgument, f.path() + ": " + what, {.op = "load_model"},
               {"Check that the file is a complete llama-architecture GGUF model"});
}

}  // namespace

LlamaConfig LlamaConfig::from_gguf(const GgufFile& f) {
  LlamaConfig c;
  c.architecture = f.get_string("general.architecture");
  if (c.architecture != "llama")
    throw Error(ErrorCode::Unsupported,
                f.path() + ": architecture '" + c.architecture + "' is not supported (llama is)", {.op = "load_model"},
                {"Use a llama-architecture GGUF file (Llama, SmolLM, TinyLlama, ...)"});
  const std::string a = c.architecture + ".";
  c.name = f.get_string("general.name", "");
  c.n_layers = f.get_int(a + "block_count");
  c.n_embd = f.get_int(a + "embedding_length");
  c.n_ff = f.get_int(a + "feed_forward_length");
  c.n_head = f.get_int(a + "attention.head_count");
  c.n_head_kv = f.get_int(a + "attention.head_count_kv", c.n_head);
  c.n_ctx_train = f.get_int(a + "context_length", 2048);
  c.rope_base = static_cast<float>(f.get_float(a + "rope.freq_base", 10000.0));
  c.rms_eps = static_cast<float>(f.get_float(a + "attention.layer_norm_rms_epsilon", 1e-5));
  if (c.n_layers <= 0 || c.n_embd <= 0 || c.n_ff <= 0 || c.n_head <= 0 || c.n_head_kv <= 0)
    throw bad(f, "block_count, embedding_length, feed_forward_length and the head counts must be positive");
  if (c.n_embd % c.n_head || c.n_head % c.n_head_kv)
    throw bad(f, "embedding_length " + std::to_string(c.n_embd) + " must divide by head_count " +
                     std::to_string(c.n_head) + ", which must divide by head_count_kv " + std::to_string(c.n_head_kv));
  c.head_dim = f.get_int(a + "attention.key_length", c.n_embd / c.n_head);
  if (c.head_dim * c.n_head != c.n_embd || f.get_int(a + "attention.value_length", c.head_dim) != c.head_dim)
    throw Error(ErrorCode::Unsupported, f.path() + ": key/value lengths other than embedding_length / head_count",
                {.op = "load_model"});
  c.rope_dim = f.get_int(a + "rope.dimension_count", c.head_dim);
  if (c.rope_dim <= 0 || c.rope_dim > c.head_dim || c.rope_dim % 2)
    throw bad(f, "rope.dimension_count " + std::to_string(c.rope_dim) + " must be even and at most the head size " +
                     std::to_string(c.head_dim));
  if (!(c.rope_base > 0.0f) || !(c.rms_eps > 0.0f)) throw bad(f, "rope.freq_base and the RMS epsilon must be > 0");
  const std::string scaling = f.get_string(a + "rope.scaling.type", "none");
  if (scaling != "none" && f.get_float(a + "rope.scaling.factor", 1.0) != 1.0)
    throw Error(ErrorCode::Unsupported, f.path() + ": RoPE scaling '" + scaling + "' is not implemented",
                {.op = "load_model"});
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
