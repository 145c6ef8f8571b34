// Loading a llama-architecture GGUF model onto a backend, and its forward pass
// through the op layer. Every op runs on the model's backend (or falls back to
// the CPU, counted), so the same code is the model on every device.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>
#include <string>
#include <variant>

#include "torsh/core/error.hpp"
#include "torsh/model/llama.hpp"
#include "torsh/ops/ops.hpp"
#include "torsh/runtime/qtensor.hpp"

namespace torsh::model {
namespace {

// A weight matrix [n, k] applied as a linear layer to f32 activations:
// quantized formats stay quantized; f16 and bf16 weights are read as stored,
// the activations rounded to their type (llama.cpp's numerics for such
// files) and the product widened back to f32.
struct Linear {
  std::variant<QTensor, Tensor> w;
  QuantActivations activations = QuantActivations::Int16;
  Tensor operator()(const Tensor& x) const {
    if (const auto* q = std::get_if<QTensor>(&w)) return ops::qmatmul(x, *q, activations);
    const Tensor& d = std::get<Tensor>(w);
    if (d.dtype() == DType::F32) return ops::gemm(x, d, 1.0f, 0.0f, std::nullopt, false, true);
    return ops::gemm(x.cast(d.dtype()), d, 1.0f, 0.0f, std::nullopt, false, true).cast(DType::F32);
  }
};

struct Layer {
  Tensor attn_norm, ffn_norm;
  Linear wq, wk, wv, wo, gate, up, down;
  Tensor k_cache, v_cache;  // [1, n_head_kv, ctx, head_dim] in LoadOptions::kv_type
};

std::optional<QuantFormat> quant_of(GgmlType t) {
  switch (t) {
    case GgmlType::Q4_0: return QuantFormat::Q4_0;
    case GgmlType::Q4_1: return QuantFormat::Q4_1;
    case GgmlType::Q8_0: return QuantFormat::Q8_0;
    default: return std::nullopt;
  }
}

std::optional<DType> float_of(GgmlType t) {
  switch (t) {
    case GgmlType::F32: return DType::F32;
    case GgmlType::F16: return DType::F16;
    case GgmlType::BF16: return DType::BF16;
    default: return std::nullopt;
  }
}

Error unsupported_type(const GgufFile& f, const GgufTensorInfo& t) {
  return Error(ErrorCode::Unsupported,
               f.path() + ": tensor " + t.name + " is " + std::string(ggml_type_name(t.type)) +
                   "; the library computes with f32, f16, bf16, q4_0, q4_1 and q8_0",
               {.op = "load_model", .dtypes = {std::string(ggml_type_name(t.type))}},
               {"Use a GGUF file quantized to Q4_0, Q4_1 or Q8_0 (or an F16/F32 one)"});
}

// Every tensor in the file must be one the forward uses: an unread one
// carries math the model would silently run without.
void refuse_unread_tensors(const GgufFile& f, const std::set<std::string>& read) {
  for (const auto& t : f.tensors()) {
    if (read.count(t.name)) continue;
    if (t.name == "rope_freqs.weight")
      throw Error(ErrorCode::Unsupported,
                  f.path() + ": rope_freqs.weight (the RoPE frequency factors of Llama 3.1 / 3.2 files) is not " +
                      "applied by this forward; running without it would give wrong tokens",
                  {.op = "load_model"}, {"Use a llama-architecture GGUF file without rope_freqs.weight"});
    throw Error(ErrorCode::Unsupported,
                f.path() + ": tensor " + t.name + " is not used by the llama forward; running without it " +
                    "would give wrong results",
                {.op = "load_model"},
                {"Use a plain llama-architecture GGUF file (attention, SwiGLU feed-forward, RMS norms)"});
  }
}

}  // namespace

struct LlamaModel::State {
  GgufFile file;
  LlamaConfig cfg;
  Tokenizer tokenizer;
  Backend backend;
  LoadOptions opts;
  MemoryEstimate estimate;
  std::variant<QTensor, Tensor> embedding;  // [vocab, n_embd]
  Tensor out_norm;
  Linear output;
  std::vector<Layer> layers;
  std::set<std::string> read;  // the tensors the forward uses (while loading)
  Tensor rope_cos, rope_sin;
  std::int64_t ctx = 0;
  // The KV cache's fill and epoch (moved on by every use; see Sequence), and
  // the lock that serializes every use of the cache.
  std::int64_t pos = 0;
  std::uint64_t epoch = 0;
  std::mutex mu;

  State(GgufFile f, LlamaConfig c, Tokenizer t, Backend b)
      : file(std::move(f)), cfg(std::move(c)), tokenizer(std::move(t)), backend(std::move(b)) {}

  // Raw tensor bytes as a U8 tensor on the backend: the mapping itself on the
  // CPU (copy-on-write pages: nothing is read until used), one copy elsewhere.
  Tensor bytes_of(const GgufTensorInfo& t, std::int64_t rows, std::int64_t row_bytes) {
    const auto data = file.tensor_data(t);
    void* p = const_cast<std::byte*>(data.data());
    if (backend.type() == BackendType::Cpu)
      return Tensor::wrap_host(p, DType::U8, Shape{rows, row_bytes}, file.keepalive());
    return backend.from_host(p, Shape{rows, row_bytes}, DType::U8);
  }

  std::variant<QTensor, Tensor> matrix(const std::string& name, std::int64_t rows, std::int64_t cols) {
    const GgufTensorInfo& t = file.tensor(name);
    read.insert(name);
    if (t.dims.size() != 2 || t.dims[0] != cols || t.dims[1] != rows)
      throw Error(ErrorCode::InvalidArgument,
                  file.path() + ": tensor " + name + " should be [" + std::to_string(rows) + ", " +
                      std::to_string(cols) + "] (ggml dims {" + std::to_string(cols) + ", " + std::to_string(rows) +
                      "})",
                  {.op = "load_model"});
    if (auto q = quant_of(t.type)) {
      const auto rb = static_cast<std::int64_t>(quant_row_bytes(*q, cols));
      QTensor w(bytes_of(t, rows, rb), *q, rows, cols);
      if (opts.f32_weights) return ops::dequantize(w, DType::F32);
      return w;
    }
    if (auto d = float_of(t.type)) {
      Tensor raw = bytes_of(t, rows, cols * static_cast<std::int64_t>(dtype_size(*d)));
      return Tensor(raw.buffer(), *d, Shape{rows, cols}, contiguous_strides(Shape{rows, cols}));
    }
    throw unsupported_type(file, t);
  }

  Linear linear(const std::string& name, std::int64_t rows, std::int64_t cols) {
    return Linear{matrix(name, rows, cols), opts.activations};
  }

  Tensor vector(const std::string& name, std::int64_t n) {
    const GgufTensorInfo& t = file.tensor(name);
    read.insert(name);
    if (t.dims.size() != 1 || t.dims[0] != n)
      throw Error(ErrorCode::InvalidArgument,
                  file.path() + ": tensor " + name + " should be a vector of " + std::to_string(n),
                  {.op = "load_model"});
    auto d = float_of(t.type);
    if (!d) throw unsupported_type(file, t);
    Tensor raw = bytes_of(t, 1, n * static_cast<std::int64_t>(dtype_size(*d)));
    Tensor typed(raw.buffer(), *d, Shape{n}, contiguous_strides(Shape{n}));
    return *d == DType::F32 ? typed : typed.cast(DType::F32);
  }

  Tensor forward(std::span<const std::int32_t> tokens, bool all_logits);
  Tensor step(std::span<const std::int32_t> tokens, bool all_logits);
};

LlamaModel LlamaModel::load(const std::string& path, Backend backend, const LoadOptions& opts) {
  return load(GgufFile::open(path), std::move(backend), opts);
}

LlamaModel LlamaModel::load(GgufFile file, Backend backend, const LoadOptions& opts) {
  LlamaConfig cfg = LlamaConfig::from_gguf(file);
  Tokenizer tok = Tokenizer::from_gguf(file);
  if (tok.vocab_size() != cfg.vocab)
    throw Error(ErrorCode::InvalidArgument,
                file.path() + ": the tokenizer has " + std::to_string(tok.vocab_size()) +
                    " tokens but the embedding has " + std::to_string(cfg.vocab) + " rows",
                {.op = "load_model"});
  if (opts.ctx < 0 || opts.max_batch <= 0)
    throw Error(ErrorCode::InvalidArgument, "ctx must be >= 0 (0: the default) and max_batch > 0",
                {.op = "load_model"});
  if (opts.kv_type != DType::F16 && opts.kv_type != DType::BF16 && opts.kv_type != DType::F32)
    throw Error(ErrorCode::InvalidArgument,
                "a KV cache of " + std::string(dtype_name(opts.kv_type)) + " is not supported",
                {.op = "load_model", .dtypes = {std::string(dtype_name(opts.kv_type))}},
                {"Use kv_type f16 (the default), bf16 or f32"});
  const std::int64_t ctx = opts.ctx > 0 ? opts.ctx : std::min<std::int64_t>(cfg.n_ctx_train, 4096);
  std::uint64_t weight_bytes = 0;
  for (const auto& t : file.tensors())
    weight_bytes += opts.f32_weights && quant_of(t.type) ? static_cast<std::uint64_t>(t.numel()) * 4 : t.nbytes;

  LlamaModel m;
  m.s_ = std::make_shared<State>(std::move(file), std::move(cfg), std::move(tok), std::move(backend));
  State& s = *m.s_;
  s.opts = opts;
  s.ctx = ctx;
  s.estimate = estimate_inference_memory(s.cfg, weight_bytes, ctx, opts.max_batch, false, opts.kv_type);
  const DeviceInfo& info = s.backend.info();
  const std::uint64_t free = info.free_memory.value_or(info.total_memory);
  if (opts.check_memory && free > 0 && s.estimate.total() > free)
    throw Error(ErrorCode::OutOfMemory,
                "the model needs " + s.estimate.to_string() + " but " + s.backend.name() + " has " +
                    std::to_string(free / (1024 * 1024)) + " MiB free",
                {.op = "load_model", .device = s.backend.device().to_string()},
                {"Use a smaller context (ctx " + std::to_string(ctx) + " now)", "Use a smaller max_batch",
                 "Pick a device with more free memory"});

  const LlamaConfig& c = s.cfg;
  s.embedding = s.matrix("token_embd.weight", c.vocab, c.n_embd);
  s.out_norm = s.vector("output_norm.weight", c.n_embd);
  s.output = c.tied_embeddings ? Linear{s.embedding, opts.activations} : s.linear("output.weight", c.vocab, c.n_embd);
  const std::int64_t kv = c.n_head_kv * c.head_dim;
  s.layers.resize(static_cast<std::size_t>(c.n_layers));
  for (std::int64_t i = 0; i < c.n_layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    Layer& l = s.layers[static_cast<std::size_t>(i)];
    l.attn_norm = s.vector(p + "attn_norm.weight", c.n_embd);
    l.ffn_norm = s.vector(p + "ffn_norm.weight", c.n_embd);
    l.wq = s.linear(p + "attn_q.weight", c.n_embd, c.n_embd);
    l.wk = s.linear(p + "attn_k.weight", kv, c.n_embd);
    l.wv = s.linear(p + "attn_v.weight", kv, c.n_embd);
    l.wo = s.linear(p + "attn_output.weight", c.n_embd, c.n_embd);
    l.gate = s.linear(p + "ffn_gate.weight", c.n_ff, c.n_embd);
    l.up = s.linear(p + "ffn_up.weight", c.n_ff, c.n_embd);
    l.down = s.linear(p + "ffn_down.weight", c.n_embd, c.n_ff);
    l.k_cache = s.backend.empty(Shape{1, c.n_head_kv, ctx, c.head_dim}, opts.kv_type);
    l.v_cache = s.backend.empty(Shape{1, c.n_head_kv, ctx, c.head_dim}, opts.kv_type);
  }
  refuse_unread_tensors(s.file, s.read);
  s.read.clear();
  std::tie(s.rope_cos, s.rope_sin) = ops::rope_cache(s.backend, ctx, c.rope_dim, c.rope_base);
  return m;
}

const LlamaConfig& LlamaModel::config() const { return s_->cfg; }
const Tokenizer& LlamaModel::tokenizer() const { return s_->tokenizer; }
const GgufFile& LlamaModel::file() const { return s_->file; }
Backend LlamaModel::backend() const { return s_->backend; }
const MemoryEstimate& LlamaModel::memory_estimate() const { return s_->estimate; }
std::int64_t LlamaModel::context() const { return s_->ctx; }
std::int64_t LlamaModel::position() const {
  std::lock_guard lock(s_->mu);
  return s_->pos;
}

void LlamaModel::reset() {
  std::lock_guard lock(s_->mu);
  s_->pos = 0;
  ++s_->epoch;
}

void LlamaModel::truncate(std::int64_t position) {
  std::lock_guard lock(s_->mu);
  ++s_->epoch;
  if (position < 0 || position > s_->pos)
    throw Error(
        ErrorCode::OutOfRange,
        "truncate to " + std::to_string(position) + " but the cache holds " + std::to_string(s_->pos) + " tokens",
        {.op = "truncate"});
  s_->pos = position;
}

Tensor LlamaModel::forward(std::span<const std::int32_t> tokens, bool all_logits) {
  std::lock_guard lock(s_->mu);
  ++s_->epoch;
  return s_->forward(tokens, all_logits);
}

Tensor LlamaModel::extend(Sequence& seq, std::span<const std::int32_t> tokens, bool all_logits) {
  State& s = *s_;
  std::lock_guard lock(s.mu);
  if (seq.epoch != s.epoch) {
    // Another sequence or a direct forward/reset/truncate used the cache since:
    // put this sequence's tokens back first.
    ++s.epoch;
    s.pos = 0;
    if (!seq.tokens.empty()) s.forward(seq.tokens, false);
  }
  ++s.epoch;
  Tensor logits = s.forward(tokens, all_logits);
  seq.tokens.insert(seq.tokens.end(), tokens.begin(), tokens.end());
  seq.epoch = s.epoch;
  return logits;
}

Tensor LlamaModel::State::forward(std::span<const std::int32_t> tokens, bool all_logits) {
  State& s = *this;
  const auto n = static_cast<std::int64_t>(tokens.size());
  if (n == 0) throw Error(ErrorCode::InvalidArgument, "forward needs at least one token", {.op = "forward"});
  if (n > s.ctx - s.pos)
    throw Error(ErrorCode::OutOfRange,
                std::to_string(n) + " tokens at position " + std::to_string(s.pos) + " overflow the context of " +
                    std::to_string(s.ctx),
                {.op = "forward"}, {"Load the model with a larger ctx, or reset() / truncate() the cache"});
  for (std::int32_t t : tokens)
    if (t < 0 || t >= s.cfg.vocab)
      throw Error(
          ErrorCode::InvalidArgument,
          "token id " + std::to_string(t) + " is outside the vocabulary [0, " + std::to_string(s.cfg.vocab) + ")",
          {.op = "forward"});
  std::vector<Tensor> parts;
  for (std::int64_t i = 0; i < n; i += s.opts.max_batch) {
    const std::int64_t len = std::min(s.opts.max_batch, n - i);
    const bool last = i + len == n;
    Tensor l = s.step(tokens.subspan(static_cast<std::size_t>(i), static_cast<std::size_t>(len)), all_logits);
    if (all_logits)
      parts.push_back(l);
    else if (last)
      return l.reshape({s.cfg.vocab});
  }
  if (parts.size() == 1) return parts[0];
  Tensor out = s.backend.empty(Shape{n, s.cfg.vocab}, DType::F32);
  std::int64_t row = 0;
  for (auto& p : parts) {
    Tensor dst = out.slice(0, row, row + p.shape()[0]);
    ops::copy_into(p, dst);
    row += p.shape()[0];
  }
  return out;
}

// One chunk of tokens at positions pos .. pos + S - 1.
Tensor LlamaModel::State::step(std::span<const std::int32_t> tokens, bool all_logits) {
  const LlamaConfig& c = cfg;
  const auto S = static_cast<std::int64_t>(tokens.size());
  const std::int64_t p = pos;
  const Tensor ids = backend.from_host(tokens.data(), Shape{S}, DType::I32);
  Tensor x;
  if (const auto* q = std::get_if<QTensor>(&embedding)) {
    x = ops::embedding(*q, ids);
  } else {
    x = ops::embedding(std::get<Tensor>(embedding), ids);
    if (x.dtype() != DType::F32) x = x.cast(DType::F32);
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  for (Layer& l : layers) {
    Tensor h = ops::rms_norm(x, l.attn_norm, c.rms_eps);
    Tensor q = l.wq(h).reshape({1, S, c.n_head, c.head_dim});
    Tensor k = l.wk(h).reshape({1, S, c.n_head_kv, c.head_dim});
    Tensor v = l.wv(h).reshape({1, S, c.n_head_kv, c.head_dim});
    q = ops::rope(q, rope_cos, rope_sin, ops::RopeStyle::GptJ, p, c.rope_dim);
    k = ops::rope(k, rope_cos, rope_sin, ops::RopeStyle::GptJ, p, c.rope_dim);
    Tensor kdst = l.k_cache.slice(2, p, p + S), vdst = l.v_cache.slice(2, p, p + S);
    ops::copy_into(k.permute({0, 2, 1, 3}), kdst);
    ops::copy_into(v.permute({0, 2, 1, 3}), vdst);
    // The queries in the cache's dtype: the attention reads K and V as stored.
    Tensor qh = q.permute({0, 2, 1, 3});
    if (qh.dtype() != l.k_cache.dtype()) qh = qh.cast(l.k_cache.dtype());
    Tensor o = ops::attention(qh, l.k_cache.slice(2, 0, p + S), l.v_cache.slice(2, 0, p + S), true, scale,
                              ops::CausalAlign::BottomRight);
    Tensor attn = backend.empty(Shape{1, S, c.n_head, c.head_dim}, DType::F32);
    ops::copy_into(o.permute({0, 2, 1, 3}), attn);
    attn = attn.reshape({S, c.n_embd});
    ops::binary_(rt::BinaryOp::Add, x, l.wo(attn));
    h = ops::rms_norm(x, l.ffn_norm, c.rms_eps);
    Tensor g = l.gate(h);
    ops::unary_out(rt::UnaryOp::Silu, g, g);
    ops::binary_(rt::BinaryOp::Mul, g, l.up(h));
    ops::binary_(rt::BinaryOp::Add, x, l.down(g));
  }
  pos = p + S;
  Tensor last = all_logits ? x : x.slice(0, S - 1, S);
  return output(ops::rms_norm(last, out_norm, c.rms_eps));
}

}  // namespace torsh::model
