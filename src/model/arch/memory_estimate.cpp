// estimate_inference_memory: what a model needs before it is loaded, so a
// context that cannot fit is refused with numbers instead of failing halfway.
#include <algorithm>
#include <cstdio>
#include <string>

#include "torsh/core/error.hpp"
#include "torsh/model/model.hpp"

namespace torsh::model {
namespace {

std::string mib(std::uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

std::string_view kv_type_name(KvType t) {
  switch (t) {
    case KvType::F16: return "f16";
    case KvType::BF16: return "bf16";
    case KvType::F32: return "f32";
    case KvType::Q8_0: return "q8_0";
  }
  return "f16";
}

std::optional<KvType> kv_type_from_name(std::string_view name) {
  for (KvType t : {KvType::F16, KvType::BF16, KvType::F32, KvType::Q8_0})
    if (kv_type_name(t) == name) return t;
  return std::nullopt;
}

std::uint64_t kv_row_bytes(KvType t, std::int64_t head_dim) {
  const auto d = static_cast<std::uint64_t>(std::max<std::int64_t>(head_dim, 0));
  switch (t) {
    case KvType::F32: return 4 * d;
    case KvType::Q8_0:
      return quant_row_bytes(QuantFormat::Q8_0,
                             static_cast<std::int64_t>((d + kQuantBlock - 1) / kQuantBlock * kQuantBlock));
    default: return 2 * d;
  }
}

std::string MemoryEstimate::to_string() const {
  return "weights " + mib(weights) + " + KV cache " + mib(kv_cache) + " + activations " + mib(activations) + " = " +
         mib(total());
}

MemoryEstimate estimate_inference_memory(const ModelConfig& c, std::uint64_t weight_bytes, std::int64_t ctx,
                                         std::int64_t batch, bool all_logits, KvType kv_type, std::int64_t sequences) {
  MemoryEstimate e;
  e.weights = weight_bytes;
  const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)); };
  // Keys and values for every layer, position and sequence slot.
  e.kv_cache = 2 * u(c.n_layers) * u(c.n_head_kv) * u(ctx) * u(sequences) * kv_row_bytes(kv_type, c.head_dim);
  const std::uint64_t s = u(std::min(batch, ctx));
  // Live f32 tensors of one layer at its widest point: the residual stream,
  // the normalised input, q/k/v, the attention output (and its transposed
  // copy), gate, up and their product, the down projection, plus the
  // activations quantized for the integer matmuls (about 1.1 bytes each).
  const std::uint64_t per_token =
      4 * (2 * u(c.n_embd) + 2 * u(std::max(c.n_embd, c.q_width())) + 2 * u(c.kv_width()) + 3 * u(c.n_ff)) +
      2 * u(std::max({c.n_embd, c.n_ff, c.q_width()}));
  const std::uint64_t logits = 4 * u(c.vocab) * (all_logits ? s : 1);
  const std::uint64_t rope = 2 * u(ctx) * u(c.rope_dim / 2) * 4;
  // The CPU attention's per-task tiles: queries, keys, values and scores of a
  // 64 x 256 block; the queries and output rounded to the cache's dtype.
  const std::uint64_t attention =
      2 * 4 * (64 * u(c.head_dim) * 2 + 256 * u(c.head_dim) * 2 + 64 * 256) + 2 * s * u(c.n_head) * u(c.head_dim) * 4;
  e.activations = s * per_token + logits + rope + attention;
  return e;
}

MemoryEstimate estimate_inference_memory(std::uint64_t hidden, std::uint64_t intermediate, std::uint64_t layers,
                                         std::uint64_t vocab, std::uint64_t heads, std::uint64_t kv_heads,
                                         std::uint64_t max_seq, std::uint64_t bytes_per_param) {
  if (!hidden || !heads || !kv_heads || hidden % heads || heads % kv_heads || !bytes_per_param)
    throw Error(ErrorCode::InvalidArgument,
                "hidden must be a multiple of heads, heads a multiple of kv_heads, all non-zero",
                {.op = "estimate_inference_memory"});
  const auto i = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
  ModelConfig c;
  c.n_embd = i(hidden);
  c.n_ff = i(intermediate);
  c.n_layers = i(layers);
  c.vocab = i(vocab);
  c.n_head = i(heads);
  c.n_head_kv = i(kv_heads);
  c.head_dim = i(hidden / heads);
  c.rope_dim = c.head_dim;
  const std::uint64_t kv_dim = hidden / heads * kv_heads;
  const std::uint64_t per_layer = 2 * hidden * hidden + 2 * hidden * kv_dim + 3 * hidden * intermediate + 2 * hidden;
  const std::uint64_t params = layers * per_layer + 2 * vocab * hidden + hidden;
  return estimate_inference_memory(c, params * bytes_per_param, i(max_seq), 1);
}

}  // namespace torsh::model
