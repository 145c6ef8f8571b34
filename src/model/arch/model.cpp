// Loading a GGUF decoder model onto a backend, and its forward pass through
// the op layer (ModelConfig says what its architecture changes). Every op runs on the model's backend (or falls back to
// the CPU, counted), so the same code is the model on every device.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>
#include <string>
#include <variant>

#include "torsh/core/error.hpp"
#include "torsh/model/model.hpp"
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
  Tensor bias;  // [rows] in input_dtype(), added to the product; undefined: none
  // The dtype of the activations this weight multiplies, and of its product:
  // f32, or the weight's own f16 / bf16.
  DType input_dtype() const {
    const auto* d = std::get_if<Tensor>(&w);
    return d ? d->dtype() : DType::F32;
  }
  // x already in input_dtype() (one cast serves every weight that reads it).
  Tensor apply(const Tensor& x) const {
    Tensor y = std::holds_alternative<QTensor>(w)
                   ? ops::qmatmul(x, std::get<QTensor>(w), activations)
                   : ops::gemm(x, std::get<Tensor>(w), 1.0f, 0.0f, std::nullopt, false, true);
    if (bias.defined()) ops::binary_(rt::BinaryOp::Add, y, bias);
    return y;
  }
  // f32 in, f32 out.
  Tensor operator()(const Tensor& x) const {
    const DType d = input_dtype();
    Tensor y = apply(x.dtype() == d ? x : x.cast(d));
    return y.dtype() == DType::F32 ? y : y.cast(DType::F32);
  }
};

Tensor as_dtype(const Tensor& x, DType d) { return x.dtype() == d ? x : x.cast(d); }

struct Layer {
  Tensor attn_norm, ffn_norm;
  Tensor q_norm, k_norm;                 // [head_dim] (ModelConfig::qk_norm)
  Tensor attn_post_norm, ffn_post_norm;  // [n_embd] (ModelConfig::gemma)
  bool local = false;                    // a sliding-window layer (ModelConfig::local_layers)
  Linear wq, wk, wv, wo, gate, up, down;
  // [sequences, n_head_kv, ctx, head_dim] in a float kv_type; q8_0: U8 rows of
  // kv_row_bytes(Q8_0, head_dim).
  Tensor k_cache, v_cache;
};

std::optional<QuantFormat> quant_of(GgmlType t) {
  switch (t) {
    case GgmlType::Q4_0: return QuantFormat::Q4_0;
    case GgmlType::Q4_1: return QuantFormat::Q4_1;
    case GgmlType::Q8_0: return QuantFormat::Q8_0;
    case GgmlType::Q5_0: return QuantFormat::Q5_0;
    case GgmlType::Q5_1: return QuantFormat::Q5_1;
    case GgmlType::Q4_K: return QuantFormat::Q4_K;
    case GgmlType::Q5_K: return QuantFormat::Q5_K;
    case GgmlType::Q6_K: return QuantFormat::Q6_K;
    case GgmlType::IQ4_NL: return QuantFormat::IQ4_NL;
    case GgmlType::IQ4_XS: return QuantFormat::IQ4_XS;
    case GgmlType::Q2_K: return QuantFormat::Q2_K;
    case GgmlType::Q3_K: return QuantFormat::Q3_K;
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
                   "; the library computes with " + weight_types_supported(),
               {.op = "load_model", .dtypes = {std::string(ggml_type_name(t.type))}},
               {"Use a GGUF file quantized to Q4_K_M, Q5_K_M, Q6_K, Q8_0, Q4_0 or Q5_x (or an F16/F32 one)"});
}

// Every tensor in the file must be one the forward uses: an unread one
// carries math the model would silently run without.
void refuse_unread_tensors(const GgufFile& f, const std::set<std::string>& read) {
  for (const auto& t : f.tensors()) {
    if (read.count(t.name)) continue;
    throw Error(ErrorCode::Unsupported,
                f.path() + ": tensor " + t.name + " is not used by the " + f.get_string("general.architecture") +
                    " forward; running without it would give wrong results",
                {.op = "load_model"},
                {"Report the tensor if the model should load; the forward runs " + supported_architectures()});
  }
}

}  // namespace

bool weight_type_supported(GgmlType t) { return quant_of(t) || float_of(t); }

std::string weight_types_supported() {
  std::vector<std::string> names;
  for (std::uint32_t id = 0; id < 64; ++id)
    if (ggml_type_block(id) && weight_type_supported(static_cast<GgmlType>(id)))
      names.emplace_back(ggml_type_name(static_cast<GgmlType>(id)));
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

struct Model::State {
  GgufFile file;
  ModelConfig cfg;
  Tokenizer tokenizer;
  Backend backend;
  LoadOptions opts;
  MemoryEstimate estimate;
  std::variant<QTensor, Tensor> embedding;  // [vocab, n_embd]
  Tensor out_norm;
  Linear output;
  std::vector<Layer> layers;
  // CPU, unless LoadOptions::mmap_weights: the file's data section, read into
  // one buffer (huge pages, tensors at their file offsets) as the tensors are.
  Tensor weights;
  std::set<std::string> read;  // the tensors the forward uses (while loading)
  Tensor rope_cos, rope_sin;
  Tensor rope_cos_local, rope_sin_local;  // the sliding-window layers' (ModelConfig::rope_base_local)
  // One-element f32 factors: the embeddings' scale, the final soft-cap's 1 / cap and cap.
  Tensor embed_scale, cap_in, cap_out;
  std::int64_t ctx = 0;
  // Per slot of the KV cache: its fill, its epoch (moved on by every use; see
  // Sequence) and when it was last used; the lock serializes every use.
  std::vector<std::int64_t> pos;
  std::vector<std::uint64_t> epoch, last_use;
  std::uint64_t clock = 0;
  std::mutex mu;

  State(GgufFile f, ModelConfig c, Tokenizer t, Backend b)
      : file(std::move(f)), cfg(std::move(c)), tokenizer(std::move(t)), backend(std::move(b)) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  // The weights read at load go back to the system with the model, as a
  // mapping would, not into the pool's cache (where a model loaded next would
  // find a segment too small for its own and add to it).
  ~State() {
    if (!weights.defined()) return;
    layers.clear();
    embedding = Tensor();
    out_norm = Tensor();
    output = Linear{};
    weights = Tensor();
    backend.empty_cache();
  }

  // Raw tensor bytes as a U8 tensor on the backend. CPU: read into `weights`
  // (LoadOptions::mmap_weights says why), or the mapping itself with
  // mmap_weights (copy-on-write pages: nothing is read until used). Other
  // backends: one copy, read from the file through a host buffer, so the
  // mapping's pages never become this process's memory.
  Tensor bytes_of(const GgufTensorInfo& t, std::int64_t rows, std::int64_t row_bytes) {
    const Shape shape{rows, row_bytes};
    if (backend.type() == BackendType::Cpu && opts.mmap_weights) {
      void* p = const_cast<std::byte*>(file.tensor_data(t).data());
      return Tensor::wrap_host(p, DType::U8, shape, file.keepalive());
    }
    if (backend.type() == BackendType::Cpu) {
      if (!weights.defined())
        weights = backend.empty(Shape{static_cast<std::int64_t>(file.file_size() - file.data_offset())}, DType::U8);
      file.read_tensor_data(t, static_cast<std::byte*>(weights.buffer().host_ptr()) + t.offset);
      return Tensor(weights.buffer(), DType::U8, shape, contiguous_strides(shape), static_cast<std::int64_t>(t.offset));
    }
    std::vector<std::byte> host(t.nbytes);
    file.read_tensor_data(t, host.data());
    return backend.from_host(host.data(), shape, DType::U8);
  }

  // The bytes of `raw` as `d` elements of `shape`: a view, or a copy where a
  // file aligned to less than the element size put them between elements.
  Tensor typed(const Tensor& raw, DType d, const Shape& shape) {
    const auto size = static_cast<std::int64_t>(dtype_size(d));
    if (raw.offset() % size == 0) return Tensor(raw.buffer(), d, shape, contiguous_strides(shape), raw.offset() / size);
    Tensor out = backend.empty(shape, d);
    out.copy_from_host(static_cast<const std::byte*>(raw.buffer().host_ptr()) + raw.offset(), raw.nbytes());
    return out;
  }

  std::variant<QTensor, Tensor> matrix(const std::string& name, std::int64_t rows, std::int64_t cols) {
    const GgufTensorInfo& t = file.tensor(name);
    read.insert(name);
    if (t.dims.size() != 2 || t.dims[0] != cols || t.dims[1] != rows)
      throw Error(ErrorCode::InvalidArgument,
                  file.path() + ": tensor " + name + " should be [" + std::to_string(rows) + ", " +
                      std::to_string(cols) + "] (ggml dims {" + std::to_string(cols) + ", " + std::to_string(rows) +
                      "})",
                  {.op = "load_model"}, {"The file is damaged or its metadata does not match its tensors"});
    if (auto q = quant_of(t.type)) {
      const auto rb = static_cast<std::int64_t>(quant_row_bytes(*q, cols));
      QTensor w(bytes_of(t, rows, rb), *q, rows, cols);
      if (opts.f32_weights) return ops::dequantize(w, DType::F32);
      return w;
    }
    if (auto d = float_of(t.type)) {
      return typed(bytes_of(t, rows, cols * static_cast<std::int64_t>(dtype_size(*d))), *d, Shape{rows, cols});
    }
    throw unsupported_type(file, t);
  }

  // `prefix`.weight, and `prefix`.bias where the file has one.
  Linear linear(const std::string& prefix, std::int64_t rows, std::int64_t cols) {
    Linear l{matrix(prefix + ".weight", rows, cols), opts.activations};
    if (file.find_tensor(prefix + ".bias")) l.bias = as_dtype(vector(prefix + ".bias", rows), l.input_dtype());
    return l;
  }

  // A fused `prefix`.weight (and .bias) whose rows are the given layers' one
  // after another (Phi-3's attn_qkv, its gate-then-up ffn_up): each layer a view
  // of its rows, so nothing is copied and each product is the unfused one's.
  std::vector<Linear> fused(const std::string& prefix, const std::vector<std::int64_t>& rows, std::int64_t cols) {
    std::int64_t total = 0;
    for (std::int64_t r : rows) total += r;
    const std::variant<QTensor, Tensor> w = matrix(prefix + ".weight", total, cols);
    Tensor bias;
    if (file.find_tensor(prefix + ".bias")) bias = vector(prefix + ".bias", total);
    std::vector<Linear> out;
    std::int64_t r0 = 0;
    for (std::int64_t r : rows) {
      Linear l;
      l.activations = opts.activations;
      if (const auto* q = std::get_if<QTensor>(&w))
        l.w = QTensor(q->blocks().slice(0, r0, r0 + r), q->format(), r, cols);
      else
        l.w = std::get<Tensor>(w).slice(0, r0, r0 + r);
      if (bias.defined()) l.bias = as_dtype(bias.slice(0, r0, r0 + r), l.input_dtype());
      out.push_back(std::move(l));
      r0 += r;
    }
    return out;
  }

  Tensor vector(const std::string& name, std::int64_t n) {
    const GgufTensorInfo& t = file.tensor(name);
    read.insert(name);
    if (t.dims.size() != 1 || t.dims[0] != n)
      throw Error(ErrorCode::InvalidArgument,
                  file.path() + ": tensor " + name + " should be a vector of " + std::to_string(n),
                  {.op = "load_model"}, {"The file is damaged or its metadata does not match its tensors"});
    auto d = float_of(t.type);
    if (!d) throw unsupported_type(file, t);
    const Tensor v = typed(bytes_of(t, 1, n * static_cast<std::int64_t>(dtype_size(*d))), *d, Shape{n});
    return *d == DType::F32 ? v : v.cast(DType::F32);
  }

  // A run of tokens appended to one slot in a forward step.
  struct Part {
    std::int64_t slot;
    std::span<const std::int32_t> tokens;
  };
  void check_tokens(std::span<const std::int32_t> tokens, const char* op) const;
  Tensor forward(std::int64_t slot, std::span<const std::int32_t> tokens, bool all_logits);
  Tensor step(std::span<const Part> parts, bool all_logits);
  void touch(std::int64_t slot) {
    ++epoch[static_cast<std::size_t>(slot)];
    last_use[static_cast<std::size_t>(slot)] = ++clock;
  }
  // Puts `seq` in a slot where its tokens are, recomputing them into the
  // least recently used slot outside `busy` when its own moved on.
  std::int64_t place(Model::Sequence& seq, const std::vector<std::int64_t>& busy);
};

Model Model::load(const std::string& path, Backend backend, const LoadOptions& opts) {
  return load(GgufFile::open(path), std::move(backend), opts);
}

Model Model::load(GgufFile file, Backend backend, const LoadOptions& opts) {
  ModelConfig cfg = ModelConfig::from_gguf(file);
  Tokenizer tok = Tokenizer::from_gguf(file);
  if (tok.vocab_size() != cfg.vocab)
    throw Error(ErrorCode::InvalidArgument,
                file.path() + ": the tokenizer has " + std::to_string(tok.vocab_size()) +
                    " tokens but the embedding has " + std::to_string(cfg.vocab) + " rows",
                {.op = "load_model"});
  if (opts.ctx < 0 || opts.max_batch <= 0 || opts.sequences <= 0)
    throw Error(ErrorCode::InvalidArgument, "ctx must be >= 0 (0: the default), max_batch and sequences > 0",
                {.op = "load_model"});
  if (opts.kv_type == KvType::Q8_0 && cfg.head_dim % kQuantBlock != 0)
    throw Error(ErrorCode::Unsupported,
                file.path() + ": a q8_0 KV cache needs head sizes that are a multiple of 32, this model's is " +
                    std::to_string(cfg.head_dim),
                {.op = "load_model"}, {"Use kv_type f16 (the default), bf16 or f32"});
  if (opts.kv_type == KvType::Q8_0 && backend.type() != BackendType::Cpu)
    throw Error(ErrorCode::Unsupported,
                "a q8_0 KV cache is read by the CPU backend's attention only, not on " + backend.name(),
                {.op = "load_model", .device = backend.device().to_string()},
                {"Use kv_type f16 (the default) on this device, or run on the CPU"});
  const std::int64_t ctx = opts.ctx > 0 ? opts.ctx : std::min<std::int64_t>(cfg.n_ctx_train, 4096);
  std::uint64_t weight_bytes = 0;
  for (const auto& t : file.tensors())
    weight_bytes += opts.f32_weights && quant_of(t.type) ? static_cast<std::uint64_t>(t.numel()) * 4 : t.nbytes;

  Model m;
  m.s_ = std::make_shared<State>(std::move(file), std::move(cfg), std::move(tok), std::move(backend));
  State& s = *m.s_;
  s.opts = opts;
  s.ctx = ctx;
  s.estimate = estimate_inference_memory(s.cfg, weight_bytes, ctx, opts.max_batch, false, opts.kv_type, opts.sequences);
  const auto slots = static_cast<std::size_t>(opts.sequences);
  s.pos.assign(slots, 0);
  s.epoch.assign(slots, 0);
  s.last_use.assign(slots, 0);
  const DeviceInfo& info = s.backend.info();
  const std::uint64_t free = info.free_memory.value_or(info.total_memory);
  if (opts.check_memory && free > 0 && s.estimate.total() > free)
    throw Error(ErrorCode::OutOfMemory,
                "the model needs " + s.estimate.to_string() + " but " + s.backend.name() + " has " +
                    std::to_string(free / (1024 * 1024)) + " MiB free",
                {.op = "load_model", .device = s.backend.device().to_string()},
                {"Use a smaller context (ctx " + std::to_string(ctx) + " now)", "Use a smaller max_batch",
                 "Pick a device with more free memory"});

  const ModelConfig& c = s.cfg;
  s.embedding = s.matrix("token_embd.weight", c.vocab, c.n_embd);
  s.out_norm = s.vector("output_norm.weight", c.n_embd);
  s.output = c.tied_embeddings ? Linear{s.embedding, opts.activations} : s.linear("output", c.vocab, c.n_embd);
  const std::int64_t kv = c.kv_width();
  s.layers.resize(static_cast<std::size_t>(c.n_layers));
  for (std::int64_t i = 0; i < c.n_layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    Layer& l = s.layers[static_cast<std::size_t>(i)];
    l.attn_norm = s.vector(p + "attn_norm.weight", c.n_embd);
    l.ffn_norm = s.vector(p + "ffn_norm.weight", c.n_embd);
    if (s.file.find_tensor(p + "attn_qkv.weight")) {
      auto qkv = s.fused(p + "attn_qkv", {c.q_width(), kv, kv}, c.n_embd);
      l.wq = std::move(qkv[0]), l.wk = std::move(qkv[1]), l.wv = std::move(qkv[2]);
    } else {
      l.wq = s.linear(p + "attn_q", c.q_width(), c.n_embd);
      l.wk = s.linear(p + "attn_k", kv, c.n_embd);
      l.wv = s.linear(p + "attn_v", kv, c.n_embd);
    }
    l.wo = s.linear(p + "attn_output", c.n_embd, c.q_width());
    if (c.qk_norm) {
      l.q_norm = s.vector(p + "attn_q_norm.weight", c.head_dim);
      l.k_norm = s.vector(p + "attn_k_norm.weight", c.head_dim);
    }
    if (c.gemma) {
      l.attn_post_norm = s.vector(p + "post_attention_norm.weight", c.n_embd);
      l.ffn_post_norm = s.vector(p + "post_ffw_norm.weight", c.n_embd);
    }
    l.local = !c.local_layers.empty() && c.local_layers[static_cast<std::size_t>(i)];
    if (!s.file.find_tensor(p + "ffn_gate.weight")) {  // ffn_up holds the gate's rows, then the up projection's
      auto gate_up = s.fused(p + "ffn_up", {c.n_ff, c.n_ff}, c.n_embd);
      l.gate = std::move(gate_up[0]), l.up = std::move(gate_up[1]);
    } else {
      l.gate = s.linear(p + "ffn_gate", c.n_ff, c.n_embd);
      l.up = s.linear(p + "ffn_up", c.n_ff, c.n_embd);
    }
    l.down = s.linear(p + "ffn_down", c.n_embd, c.n_ff);
    const bool q8 = opts.kv_type == KvType::Q8_0;
    const Shape cache{opts.sequences, c.n_head_kv, ctx,
                      q8 ? static_cast<std::int64_t>(kv_row_bytes(KvType::Q8_0, c.head_dim)) : c.head_dim};
    const DType cache_dtype = q8                             ? DType::U8
                              : opts.kv_type == KvType::F32  ? DType::F32
                              : opts.kv_type == KvType::BF16 ? DType::BF16
                                                             : DType::F16;
    l.k_cache = s.backend.empty(cache, cache_dtype);
    l.v_cache = s.backend.empty(cache, cache_dtype);
  }
  std::vector<float> freq_factors;
  if (c.rope_freq_factors) {
    // Llama 3.1's one set, or Phi-3's LongRoPE pair: the short factors while
    // the context stays within the original one, else the long ones (as llama.cpp).
    const bool phi = !s.file.find_tensor("rope_freqs.weight");
    const std::string name = !phi                 ? "rope_freqs.weight"
                             : ctx > c.n_ctx_orig ? "rope_factors_long.weight"
                                                  : "rope_factors_short.weight";
    freq_factors = s.vector(name, c.rope_dim / 2).to_host<float>();
    for (const char* other : {"rope_factors_short.weight", "rope_factors_long.weight"})
      if (phi && s.file.find_tensor(other)) s.vector(other, c.rope_dim / 2);  // read (and checked) either way
    for (float f : freq_factors)
      if (!(f > 0.0f) || !std::isfinite(f))
        throw Error(ErrorCode::InvalidArgument,
                    s.file.path() + ": " + name + " holds " + std::to_string(f) +
                        "; each RoPE frequency factor divides an angle, so must be finite and > 0",
                    {.op = "load_model"}, {"The file is damaged: convert the model again"});
  }
  refuse_unread_tensors(s.file, s.read);
  s.read.clear();
  // Linear RoPE scaling divides every angle by the factor: a frequency factor on each pair.
  const auto tables = [&](float base, float scale) {
    std::vector<float> f = freq_factors;
    if (scale != 1.0f) {
      f.resize(static_cast<std::size_t>(c.rope_dim / 2), 1.0f);
      for (float& x : f) x *= scale;
    }
    return ops::rope_cache(s.backend, ctx, c.rope_dim, base, f);
  };
  std::tie(s.rope_cos, s.rope_sin) = tables(c.rope_base, c.rope_scale);
  if (c.rope_base_local != c.rope_base || c.rope_scale_local != c.rope_scale)
    std::tie(s.rope_cos_local, s.rope_sin_local) = tables(c.rope_base_local, c.rope_scale_local);
  else
    s.rope_cos_local = s.rope_cos, s.rope_sin_local = s.rope_sin;
  const auto scalar = [&](float v) { return s.backend.from_host(&v, Shape{1}, DType::F32); };
  if (c.gemma) s.embed_scale = scalar(c.embed_scale);
  if (c.final_softcap > 0.0f) s.cap_in = scalar(1.0f / c.final_softcap), s.cap_out = scalar(c.final_softcap);
  return m;
}

const ModelConfig& Model::config() const { return s_->cfg; }
const Tokenizer& Model::tokenizer() const { return s_->tokenizer; }
const GgufFile& Model::file() const { return s_->file; }
Backend Model::backend() const { return s_->backend; }
const MemoryEstimate& Model::memory_estimate() const { return s_->estimate; }
std::int64_t Model::context() const { return s_->ctx; }
std::int64_t Model::sequences() const { return s_->opts.sequences; }
std::int64_t Model::position() const {
  std::lock_guard lock(s_->mu);
  return s_->pos[0];
}

void Model::reset() {
  std::lock_guard lock(s_->mu);
  s_->pos[0] = 0;
  s_->touch(0);
}

void Model::truncate(std::int64_t position) {
  std::lock_guard lock(s_->mu);
  s_->touch(0);
  if (position < 0 || position > s_->pos[0])
    throw Error(
        ErrorCode::OutOfRange,
        "truncate to " + std::to_string(position) + " but the cache holds " + std::to_string(s_->pos[0]) + " tokens",
        {.op = "truncate"});
  s_->pos[0] = position;
}

Tensor Model::forward(std::span<const std::int32_t> tokens, bool all_logits) {
  std::lock_guard lock(s_->mu);
  s_->touch(0);
  return s_->forward(0, tokens, all_logits);
}

std::int64_t Model::State::place(Model::Sequence& seq, const std::vector<std::int64_t>& busy) {
  const auto n = static_cast<std::int64_t>(pos.size());
  if (seq.slot >= 0 && seq.slot < n && epoch[static_cast<std::size_t>(seq.slot)] == seq.epoch &&
      std::find(busy.begin(), busy.end(), seq.slot) == busy.end())
    return seq.slot;
  // Its slot moved on since (another sequence, or forward/reset/truncate on
  // slot 0): put its tokens back, in the slot used least recently.
  std::int64_t pick = -1;
  for (std::int64_t i = 0; i < n; ++i)
    if (std::find(busy.begin(), busy.end(), i) == busy.end() &&
        (pick < 0 || last_use[static_cast<std::size_t>(i)] < last_use[static_cast<std::size_t>(pick)]))
      pick = i;
  touch(pick);
  pos[static_cast<std::size_t>(pick)] = 0;
  if (!seq.tokens.empty()) forward(pick, seq.tokens, false);
  seq.slot = pick;
  seq.epoch = epoch[static_cast<std::size_t>(pick)];
  return pick;
}

Tensor Model::extend(Sequence& seq, std::span<const std::int32_t> tokens, bool all_logits) {
  State& s = *s_;
  std::lock_guard lock(s.mu);
  const std::int64_t slot = s.place(seq, {});
  s.touch(slot);
  Tensor logits = s.forward(slot, tokens, all_logits);
  seq.tokens.insert(seq.tokens.end(), tokens.begin(), tokens.end());
  seq.epoch = s.epoch[static_cast<std::size_t>(slot)];
  return logits;
}

Tensor Model::decode(std::span<Sequence* const> seqs, std::span<const std::int32_t> tokens) {
  State& s = *s_;
  const auto n = static_cast<std::int64_t>(seqs.size());
  if (n == 0 || tokens.size() != seqs.size())
    throw Error(ErrorCode::InvalidArgument,
                "decode takes one token per sequence: " + std::to_string(seqs.size()) + " sequences and " +
                    std::to_string(tokens.size()) + " tokens",
                {.op = "decode"});
  if (n > s.opts.sequences)
    throw Error(
        ErrorCode::InvalidArgument,
        std::to_string(n) + " sequences in one decode, but the KV cache holds " + std::to_string(s.opts.sequences),
        {.op = "decode"}, {"Load the model with LoadOptions::sequences >= " + std::to_string(n)});
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    if (!seqs[i]) throw Error(ErrorCode::InvalidArgument, "decode was given a null sequence", {.op = "decode"});
    if (std::find(seqs.begin(), seqs.begin() + static_cast<std::ptrdiff_t>(i), seqs[i]) !=
        seqs.begin() + static_cast<std::ptrdiff_t>(i))
      throw Error(ErrorCode::InvalidArgument, "decode needs distinct sequences (one token each)", {.op = "decode"});
  }
  std::lock_guard lock(s.mu);
  s.check_tokens(tokens, "decode");
  for (Sequence* q : seqs)
    if (static_cast<std::int64_t>(q->tokens.size()) >= s.ctx)
      throw Error(ErrorCode::OutOfRange,
                  "a sequence of " + std::to_string(q->tokens.size()) + " tokens has no room left in the context of " +
                      std::to_string(s.ctx),
                  {.op = "decode"}, {"Load the model with a larger ctx, or end that sequence"});
  // Sequences whose slot still holds their tokens keep it; the others are
  // recomputed into slots that none of this batch holds.
  std::vector<std::int64_t> slots(seqs.size(), -1), busy;
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const Sequence& q = *seqs[i];
    if (q.slot >= 0 && q.slot < s.opts.sequences && s.epoch[static_cast<std::size_t>(q.slot)] == q.epoch)
      busy.push_back(slots[i] = q.slot);
  }
  for (std::size_t i = 0; i < seqs.size(); ++i)
    if (slots[i] < 0) busy.push_back(slots[i] = s.place(*seqs[i], busy));
  std::vector<State::Part> parts;
  for (std::int64_t i = 0; i < n; ++i) {
    s.touch(slots[static_cast<std::size_t>(i)]);
    parts.push_back({slots[static_cast<std::size_t>(i)], tokens.subspan(static_cast<std::size_t>(i), 1)});
  }
  Tensor logits = s.step(parts, false);
  for (std::int64_t i = 0; i < n; ++i) {
    Sequence& q = *seqs[static_cast<std::size_t>(i)];
    q.tokens.push_back(tokens[static_cast<std::size_t>(i)]);
    q.epoch = s.epoch[static_cast<std::size_t>(q.slot)];
  }
  return logits;
}

void Model::truncate(Sequence& seq, std::int64_t position) {
  State& s = *s_;
  std::lock_guard lock(s.mu);
  if (position < 0 || position > static_cast<std::int64_t>(seq.tokens.size()))
    throw Error(ErrorCode::OutOfRange,
                "truncate to " + std::to_string(position) + " but the sequence holds " +
                    std::to_string(seq.tokens.size()) + " tokens",
                {.op = "truncate"});
  const bool current =
      seq.slot >= 0 && seq.slot < s.opts.sequences && s.epoch[static_cast<std::size_t>(seq.slot)] == seq.epoch;
  seq.tokens.resize(static_cast<std::size_t>(position));
  if (!current) return;  // recomputed from its tokens when next used
  s.pos[static_cast<std::size_t>(seq.slot)] = position;
  s.touch(seq.slot);
  seq.epoch = s.epoch[static_cast<std::size_t>(seq.slot)];
}

void Model::State::check_tokens(std::span<const std::int32_t> tokens, const char* op) const {
  for (std::int32_t t : tokens)
    if (t < 0 || t >= cfg.vocab)
      throw Error(ErrorCode::InvalidArgument,
                  "token id " + std::to_string(t) + " is outside the vocabulary [0, " + std::to_string(cfg.vocab) + ")",
                  {.op = op});
}

Tensor Model::State::forward(std::int64_t slot, std::span<const std::int32_t> tokens, bool all_logits) {
  State& s = *this;
  const auto n = static_cast<std::int64_t>(tokens.size());
  const std::int64_t p = s.pos[static_cast<std::size_t>(slot)];
  if (n == 0) throw Error(ErrorCode::InvalidArgument, "forward needs at least one token", {.op = "forward"});
  if (n > s.ctx - p)
    throw Error(ErrorCode::OutOfRange,
                std::to_string(n) + " tokens at position " + std::to_string(p) + " overflow the context of " +
                    std::to_string(s.ctx),
                {.op = "forward"}, {"Load the model with a larger ctx, or reset() / truncate() the cache"});
  check_tokens(tokens, "forward");
  std::vector<Tensor> parts;
  for (std::int64_t i = 0; i < n; i += s.opts.max_batch) {
    const std::int64_t len = std::min(s.opts.max_batch, n - i);
    const bool last = i + len == n;
    const Part part{slot, tokens.subspan(static_cast<std::size_t>(i), static_cast<std::size_t>(len))};
    Tensor l = s.step(std::span<const Part>(&part, 1), all_logits);
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

// One forward step: each part's tokens at its slot's positions pos .. pos +
// len - 1. The projections and the feed-forward take every part's rows in one
// product; RoPE, the cache writes and the attention go part by part (each
// against its own slot). Returns the logits of every row with all_logits
// (one part), else of each part's last row.
Tensor Model::State::step(std::span<const Part> parts, bool all_logits) {
  const ModelConfig& c = cfg;
  std::vector<std::int32_t> ids;
  for (const Part& part : parts) ids.insert(ids.end(), part.tokens.begin(), part.tokens.end());
  const auto R = static_cast<std::int64_t>(ids.size());
  const Tensor id_tensor = backend.from_host(ids.data(), Shape{R}, DType::I32);
  Tensor x;
  if (const auto* q = std::get_if<QTensor>(&embedding)) {
    x = ops::embedding(*q, id_tensor);
  } else {
    x = ops::embedding(std::get<Tensor>(embedding), id_tensor);
    if (x.dtype() != DType::F32) x = x.cast(DType::F32);
  }
  if (c.gemma) ops::binary_(rt::BinaryOp::Mul, x, embed_scale);
  const float scale = c.attn_scale;
  for (Layer& l : layers) {
    // q, k and v stay in the weights' dtype (f16 weights: f16, as the cache
    // and the attention want them); one cast of the input serves all three.
    Tensor h = ops::rms_norm(x, l.attn_norm, c.rms_eps);
    const Tensor hq = as_dtype(h, l.wq.input_dtype());
    const Tensor q_all = l.wq.apply(hq), k_all = l.wk.apply(as_dtype(hq, l.wk.input_dtype())),
                 v_all = l.wv.apply(as_dtype(hq, l.wv.input_dtype()));
    Tensor attn = backend.empty(Shape{R, c.q_width()}, l.wo.input_dtype());
    std::int64_t r0 = 0;
    for (const Part& part : parts) {
      const auto S = static_cast<std::int64_t>(part.tokens.size());
      const std::int64_t p = pos[static_cast<std::size_t>(part.slot)];
      Tensor q = q_all.slice(0, r0, r0 + S).reshape({1, S, c.n_head, c.head_dim});
      Tensor k = k_all.slice(0, r0, r0 + S).reshape({1, S, c.n_head_kv, c.head_dim});
      Tensor v = v_all.slice(0, r0, r0 + S).reshape({1, S, c.n_head_kv, c.head_dim});
      if (c.qk_norm) {  // in f32, as llama.cpp's norms
        q = ops::rms_norm(as_dtype(q, DType::F32), l.q_norm, c.rms_eps);
        k = ops::rms_norm(as_dtype(k, DType::F32), l.k_norm, c.rms_eps);
      }
      const Tensor& cos = l.local ? rope_cos_local : rope_cos;
      const Tensor& sin = l.local ? rope_sin_local : rope_sin;
      q = ops::rope(q, cos, sin, c.rope_style, p, c.rope_dim);
      k = ops::rope(k, cos, sin, c.rope_style, p, c.rope_dim);
      const std::int64_t window = l.local ? c.sliding_window : 0;
      const Tensor kc = l.k_cache.slice(0, part.slot, part.slot + 1), vc = l.v_cache.slice(0, part.slot, part.slot + 1);
      Tensor kdst = kc.slice(2, p, p + S), vdst = vc.slice(2, p, p + S);
      Tensor qh = q.permute({0, 2, 1, 3});
      Tensor o;
      if (kc.dtype() == DType::U8) {
        // q8_0 cache: each new key and value row quantized into its slot's rows.
        const auto put = [&](const Tensor& rows, Tensor& dst) {
          const QTensor blocks =
              QTensor::quantize(as_dtype(rows, DType::F32).reshape({S * c.n_head_kv, c.head_dim}), QuantFormat::Q8_0);
          ops::copy_into(blocks.blocks().reshape({1, S, c.n_head_kv, dst.shape()[3]}).permute({0, 2, 1, 3}), dst);
        };
        put(ops::contiguous(k), kdst);
        put(ops::contiguous(v), vdst);
        o = ops::attention(qh, kc.slice(2, 0, p + S), vc.slice(2, 0, p + S), QuantFormat::Q8_0, true, scale,
                           ops::CausalAlign::BottomRight, window, c.attn_softcap);
      } else {
        ops::copy_into(k.permute({0, 2, 1, 3}), kdst);
        ops::copy_into(v.permute({0, 2, 1, 3}), vdst);
        // The queries in the cache's dtype: the attention reads K and V as stored.
        if (qh.dtype() != kc.dtype()) qh = qh.cast(kc.dtype());
        o = ops::attention(qh, kc.slice(2, 0, p + S), vc.slice(2, 0, p + S), true, scale, ops::CausalAlign::BottomRight,
                           window, c.attn_softcap);
      }
      Tensor dst = attn.slice(0, r0, r0 + S).reshape({1, S, c.n_head, c.head_dim});
      ops::copy_into(o.permute({0, 2, 1, 3}), dst);
      r0 += S;
    }
    Tensor a = as_dtype(l.wo.apply(attn), DType::F32);
    if (c.gemma) a = ops::rms_norm(a, l.attn_post_norm, c.rms_eps);
    ops::binary_(rt::BinaryOp::Add, x, a);
    // The feed-forward's elementwise steps in f32 (as llama.cpp computes them).
    h = ops::rms_norm(x, l.ffn_norm, c.rms_eps);
    const Tensor hf = as_dtype(h, l.gate.input_dtype());
    Tensor g = as_dtype(l.gate.apply(hf), DType::F32);
    ops::unary_out(c.gemma ? rt::UnaryOp::GeluTanh : rt::UnaryOp::Silu, g, g);
    ops::binary_(rt::BinaryOp::Mul, g, as_dtype(l.up.apply(as_dtype(hf, l.up.input_dtype())), DType::F32));
    Tensor f = as_dtype(l.down.apply(as_dtype(g, l.down.input_dtype())), DType::F32);
    if (c.gemma) f = ops::rms_norm(f, l.ffn_post_norm, c.rms_eps);
    ops::binary_(rt::BinaryOp::Add, x, f);
  }
  for (const Part& part : parts)
    pos[static_cast<std::size_t>(part.slot)] += static_cast<std::int64_t>(part.tokens.size());
  // The output layer, and Gemma 2's soft-cap on its logits.
  const auto logits = [&](const Tensor& rows) {
    Tensor y = output(ops::rms_norm(rows, out_norm, c.rms_eps));
    if (c.final_softcap > 0.0f) {
      ops::binary_(rt::BinaryOp::Mul, y, cap_in);
      ops::unary_out(rt::UnaryOp::Tanh, y, y);
      ops::binary_(rt::BinaryOp::Mul, y, cap_out);
    }
    return y;
  };
  if (all_logits) return logits(x);
  if (parts.size() == 1) return logits(x.slice(0, R - 1, R));
  // Each part's last row.
  Tensor last = backend.empty(Shape{static_cast<std::int64_t>(parts.size()), c.n_embd}, DType::F32);
  std::int64_t r = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    r += static_cast<std::int64_t>(parts[i].tokens.size());
    Tensor dst = last.slice(0, static_cast<std::int64_t>(i), static_cast<std::int64_t>(i) + 1);
    ops::copy_into(x.slice(0, r - 1, r), dst);
  }
  return logits(last);
}

}  // namespace torsh::model
