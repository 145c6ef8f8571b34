#pragma once
// Decoder language models from GGUF files, run through the op layer (so on
// any backend). One forward pass serves every architecture of the table in
// src/model/arch/architecture.cpp (llama incl. Llama 3.x's frequency factors,
// qwen2, qwen3, gemma2, gemma3, phi3): RMSNorm, RoPE (adjacent pairs or NeoX
// halves, frequency factors, linear scaling), grouped-query attention over a
// KV cache allocated from the backend's pool (f16 by default, as llama.cpp's)
// with sliding-window layers and logit soft-caps where the architecture has
// them, optional Q/K/V/output biases, fused QKV and gate-up tensors read as
// views, optional RMSNorm over each query and key head, SwiGLU or GeGLU,
// Gemma's post norms and scaled embeddings, tied or separate output embeddings.
// Quantized weights stay quantized (weight_types_supported()); F16 and BF16
// weights stay in their type (the activations are rounded to it for those
// products, as llama.cpp does), F32 weights compute in f32.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "torsh/core/quant.hpp"
#include "torsh/model/gguf.hpp"
#include "torsh/model/tokenizer.hpp"
#include "torsh/ops/ops.hpp"
#include "torsh/runtime/backend.hpp"
#include "torsh/runtime/tensor.hpp"

namespace torsh::model {

struct ModelConfig {
  std::string architecture;  // general.architecture (supported_architectures())
  std::string name;          // general.name
  // head_dim: of each query, key and value head ({arch}.attention.key_length,
  // n_embd / n_head without it); the queries are n_head * head_dim wide.
  std::int64_t n_layers = 0, n_embd = 0, n_ff = 0, n_head = 0, n_head_kv = 0, head_dim = 0, vocab = 0;
  std::int64_t n_ctx_train = 0;  // the context the model was trained for
  std::int64_t n_ctx_orig =
      0;  // before RoPE scaling (rope.scaling.original_context_length): Phi-3's short factors' reach
  std::int64_t rope_dim = 0;  // rotated dimensions per head (<= head_dim)
  float rope_base = 10000.0f;
  float rms_eps = 1e-5f;
  bool tied_embeddings = false;  // no output.weight: the token embedding is the output layer
  // What the architecture changes in the forward:
  ops::RopeStyle rope_style = ops::RopeStyle::GptJ;  // GptJ: adjacent pairs (llama); NeoX: halves (qwen2, qwen3)
  bool qk_norm = false;                              // RMSNorm over each query and key head before RoPE (qwen3)
  // rope_freqs.weight divides each RoPE frequency (Llama 3.1 / 3.2); also Phi-3's
  // LongRoPE factors (the short ones while the context is at most n_ctx_orig).
  bool rope_freq_factors = false;
  float rope_scale = 1.0f;  // linear RoPE scaling ({arch}.rope.scaling.factor): positions / it
  float attn_scale = 0.0f;  // the scores' scale: 1 / sqrt(head_dim) unless the architecture says
  // Gemma (gemma2, gemma3): embeddings times embed_scale (sqrt(n_embd)), GeGLU
  // (tanh GELU) for SwiGLU, RMSNorm on the attention's and the feed-forward's
  // outputs before the residual.
  bool gemma = false;
  float embed_scale = 1.0f;
  // Sliding-window attention: local_layers[i] says whether layer i's queries
  // see only the last sliding_window keys (with RoPE base rope_base_local and
  // scale rope_scale_local); empty: none.
  std::int64_t sliding_window = 0;
  std::vector<bool> local_layers;
  float rope_base_local = 10000.0f, rope_scale_local = 1.0f;
  // Logit soft-caps (Gemma 2): attention scores and output logits become
  // cap * tanh(x / cap); 0: none.
  float attn_softcap = 0.0f, final_softcap = 0.0f;
  std::int64_t q_width() const { return n_head * head_dim; }
  std::int64_t kv_width() const { return n_head_kv * head_dim; }
  // Reads `{arch}.*` keys; InvalidArgument for missing or inconsistent values,
  // Unsupported for an architecture not in the table, RoPE scaling, or a key
  // that would change the math unread.
  static ModelConfig from_gguf(const GgufFile& file);
};

// The architectures the forward runs, with the models each covers.
std::string supported_architectures();

// Whether the forward computes with weights of GGML type `t` (quantized
// formats with qmatmul kernels, and f32/f16/bf16); a file holding a tensor of
// another type is refused at load, naming it. weight_types_supported() lists
// them, "f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0 and bf16".
bool weight_type_supported(GgmlType t);
std::string weight_types_supported();

// The KV cache's element type (LoadOptions::kv_type): f16 (llama.cpp's
// default), bf16, f32, or q8_0 blocks (32 int8 and an f16 scale: 1.06 bytes
// a value; the CPU backend only).
enum class KvType { F16, BF16, F32, Q8_0 };
std::string_view kv_type_name(KvType t);  // "f16", "bf16", "f32", "q8_0"
std::optional<KvType> kv_type_from_name(std::string_view name);
// Bytes of one cached key or value row of head_dim values.
std::uint64_t kv_row_bytes(KvType t, std::int64_t head_dim);

// What running a model needs, in bytes, before anything is allocated.
struct MemoryEstimate {
  std::uint64_t weights = 0;      // as stored on the device (mapped in place on the CPU)
  std::uint64_t kv_cache = 0;     // keys and values for the whole context, in the cache's dtype
  std::uint64_t activations = 0;  // the largest step (a prefill batch), scratch and logits included
  std::uint64_t total() const { return weights + kv_cache + activations; }
  std::string to_string() const;  // "weights 92.1 MiB + KV cache 45.0 MiB (ctx 2048) + ... = ..."
};
// ctx: context length; batch: the most tokens one forward step takes (prefill
// chunk); kv_type: the KV cache's element type (LoadOptions::kv_type);
// sequences: the cache's slots of ctx tokens each (LoadOptions::sequences).
MemoryEstimate estimate_inference_memory(const ModelConfig& cfg, std::uint64_t weight_bytes, std::int64_t ctx,
                                         std::int64_t batch, bool all_logits = false, KvType kv_type = KvType::F16,
                                         std::int64_t sequences = 1);
// The same for a shape given as numbers, before any file exists: the weights
// of a llama-style decoder (q/o hidden x hidden, k/v hidden x kv width, a
// gated MLP, two norms per layer, embeddings, output and final norm) at
// bytes_per_param each, one token per step, an f16 KV cache. InvalidArgument
// unless hidden is a multiple of heads and heads of kv_heads, all non-zero.
MemoryEstimate estimate_inference_memory(std::uint64_t hidden, std::uint64_t intermediate, std::uint64_t layers,
                                         std::uint64_t vocab, std::uint64_t heads, std::uint64_t kv_heads,
                                         std::uint64_t max_seq, std::uint64_t bytes_per_param);

struct LoadOptions {
  std::int64_t ctx = 0;          // context length; 0: min(n_ctx_train, 4096)
  std::int64_t max_batch = 256;  // the most tokens one forward step takes; longer prompts go in chunks
  // Refuse (OutOfMemory, with the numbers) when the estimate exceeds the device's
  // free memory; off only for tests that want to see the allocation fail.
  bool check_memory = true;
  // How the integer kernels quantize activations per 32-block: Int16 keeps the
  // logits within 1e-3 relative of an f32 forward; Int8 (llama.cpp's numerics)
  // runs prompts faster and moves logits by a few percent.
  QuantActivations activations = QuantActivations::Int16;
  // Dequantize quantized weights to f32 once at load and compute in f32
  // (gemm): f32 numerics throughout, at 5-7x the weight memory.
  bool f32_weights = false;
  // The KV cache's element type: F16 (the default, llama.cpp's), BF16, F32
  // or Q8_0 (CPU only, head sizes a multiple of 32). Attention reads the
  // cache as stored (queries rounded to a float cache's dtype, f32
  // accumulation); f32 costs twice f16's memory and cache bandwidth, q8_0
  // about half.
  KvType kv_type = KvType::F16;
  // Sequences the KV cache holds at once, ctx tokens each: that many
  // generations keep their tokens in the cache side by side, and decode()
  // advances them together in one forward pass.
  std::int64_t sequences = 1;
  // CPU: compute on the file's own pages (mapped, read on first use, shared
  // with other processes mapping the file) instead of reading the weights into
  // memory of the library's own at load. That memory comes in 2 MiB pages,
  // which the hardware prefetchers stream through without stopping every
  // 4 KiB: F16 weights decode ~35% faster than from the mapping (Zen 4);
  // quantized ones about the same. Both hold the weights once.
  bool mmap_weights = false;
};

class Model {
 public:
  // Maps the file, checks the estimate against `backend`'s free memory, then
  // uses the weights in place (CPU) or copies them once into the backend's pool.
  static Model load(const std::string& path, Backend backend, const LoadOptions& opts = {});
  static Model load(GgufFile file, Backend backend, const LoadOptions& opts = {});

  const ModelConfig& config() const;
  const Tokenizer& tokenizer() const;
  const GgufFile& file() const;
  Backend backend() const;
  const MemoryEstimate& memory_estimate() const;
  std::int64_t context() const;    // tokens per sequence slot of the KV cache
  std::int64_t sequences() const;  // slots (LoadOptions::sequences)
  std::int64_t position() const;   // tokens already in slot 0 (forward's)

  // Appends `tokens` at position() in slot 0 (in chunks of max_batch) and
  // returns the logits: f32 [vocab] of the last token, or [tokens.size(),
  // vocab] with all_logits. OutOfRange when the context would overflow;
  // InvalidArgument for ids outside the vocabulary.
  Tensor forward(std::span<const std::int32_t> tokens, bool all_logits = false);
  void reset();                          // empties slot 0 (position 0)
  void truncate(std::int64_t position);  // forgets slot 0's tokens from `position` on

  // One sequence's tokens in a slot of the KV cache. Every use of a slot
  // (forward, reset, truncate on slot 0; another sequence taking it) moves the
  // slot's epoch on; extend() and decode() find a sequence's slot moved since
  // it last used it and first recompute its tokens into a slot (the least
  // recently used one). With no more live sequences than slots each keeps its
  // own; with more, interleaved or concurrent generations (calls are
  // serialized) still each get exactly what they would have alone.
  struct Sequence {
    std::vector<std::int32_t> tokens;  // what this sequence has put in the cache
    std::int64_t slot = -1;            // where they are (-1: nowhere yet)
    std::uint64_t epoch = 0;           // the slot's epoch right after this sequence's last use
  };
  // Appends `tokens` to `seq` and returns the logits of the last one (f32 [vocab]),
  // or of every one ([tokens.size(), vocab]) with all_logits.
  Tensor extend(Sequence& seq, std::span<const std::int32_t> tokens, bool all_logits = false);
  // Appends tokens[i] to *seqs[i] for every i in one forward pass (one
  // matrix product of seqs.size() rows per weight, each sequence attending to
  // its own slot) and returns f32 [seqs.size(), vocab], row i the logits of
  // sequence i. The sequences must be distinct and no more than sequences();
  // each gets what extend() would give it alone, up to the rounding of the
  // wider products.
  Tensor decode(std::span<Sequence* const> seqs, std::span<const std::int32_t> tokens);
  // Forgets seq's tokens from `position` on (OutOfRange past its length).
  void truncate(Sequence& seq, std::int64_t position);

 private:
  struct State;
  std::shared_ptr<State> s_;
};

}  // namespace torsh::model
