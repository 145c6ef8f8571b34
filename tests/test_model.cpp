// The llama model on the op layer: sampling rules, the memory estimate and
// its refusal, KV-cache consistency (prefill in one step, in chunks, or token
// by token give the same logits), bad input, prompt encoding, and the same
// greedy tokens on OpenCL as on the CPU. The PyTorch reference comparison is
// tests/python/test_model.py. Tests that need SmolLM2 skip, saying so, when
// it is not cached (scripts/fetch-model.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <thread>

#include "gguf_writer.hpp"
#include "torsh/model/generation.hpp"
#include "torsh/model/model_cache.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
using namespace torsh::model;

namespace {

std::optional<std::string> smollm2() { return find_model(kSmolLM2FileName); }

#define NEED_MODEL()           \
  const auto path = smollm2(); \
  if (!path) GTEST_SKIP() << kSmolLM2FileName << " is not in " << model_cache_dir() << " (scripts/fetch-model.sh)"

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

float max_abs(const std::vector<float>& a) {
  float m = 0;
  for (float v : a) m = std::max(m, std::abs(v));
  return m;
}

}  // namespace

TEST(Sampler, GreedyPicksTheFirstLargestAndSkipsNaN) {
  Sampler s({});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(s.sample(std::vector<float>{1, 3, 3, 2}), 1);
  EXPECT_EQ(s.sample(std::vector<float>{nan, -1, nan, -2}), 1);
  EXPECT_THROW(s.sample(std::vector<float>{nan, nan}), Error);
  EXPECT_THROW(s.sample(std::vector<float>{}), Error);
}

TEST(Sampler, TopKOneAndTinyTopPAreGreedy) {
  const std::vector<float> logits{0.5f, 2.0f, 1.9f, -3.0f};
  Sampler k1({.temperature = 1.5f, .top_k = 1, .top_p = 1.0f, .seed = 3});
  Sampler p0({.temperature = 1.5f, .top_k = 0, .top_p = 1e-6f, .seed = 3});
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(k1.sample(logits), 1);
    EXPECT_EQ(p0.sample(logits), 1);
  }
}

TEST(Sampler, SeededDrawsRepeatAndFollowTheDistribution) {
  const std::vector<float> logits{0.0f, std::log(3.0f)};  // probabilities 1/4 and 3/4
  Sampler a({.temperature = 1.0f, .seed = 11}), b({.temperature = 1.0f, .seed = 11});
  int ones = 0;
  for (int i = 0; i < 4000; ++i) {
    const auto x = a.sample(logits);
    ASSERT_EQ(x, b.sample(logits));
    ones += x;
  }
  EXPECT_NEAR(ones / 4000.0, 0.75, 0.03);
}

TEST(Sampler, BadParametersAreRefused) {
  EXPECT_THROW(Sampler({.temperature = -1.0f}), Error);
  EXPECT_THROW(Sampler({.temperature = std::numeric_limits<float>::infinity()}), Error);
  EXPECT_THROW(Sampler({.top_k = -2}), Error);
  EXPECT_THROW(Sampler({.top_p = 0.0f}), Error);
  EXPECT_THROW(Sampler({.top_p = 1.5f}), Error);
}

TEST(MemoryEstimate, ShapeGivenAsNumbersMatchesHandCount) {
  // Mistral-7B-like shape: 7.24e9 parameters at 4 bytes.
  const MemoryEstimate e = estimate_inference_memory(4096, 14336, 32, 32000, 32, 8, 4096, 4);
  EXPECT_NEAR(static_cast<double>(e.weights) / 4.0 / 1e9, 7.24, 0.01);
  EXPECT_EQ(e.kv_cache, 2ull * 32 * 4096 * 1024 * 2);  // f16
  EXPECT_GT(e.activations, 0u);
  EXPECT_EQ(e.total(), e.weights + e.kv_cache + e.activations);
  EXPECT_THROW(estimate_inference_memory(4096, 1, 1, 1, 3, 1, 1, 4), Error);
}

TEST(MemoryEstimate, CountsTheKvCacheExactly) {
  ModelConfig c;
  c.n_layers = 30, c.n_embd = 576, c.n_ff = 1536, c.n_head = 9, c.n_head_kv = 3, c.head_dim = 64, c.vocab = 49152;
  c.rope_dim = 64;
  const MemoryEstimate e = estimate_inference_memory(c, 1000, 2048, 256);
  EXPECT_EQ(e.weights, 1000u);
  EXPECT_EQ(e.kv_cache, 2ull * 30 * 3 * 64 * 2048 * 2);  // f16, the default
  EXPECT_EQ(estimate_inference_memory(c, 1000, 2048, 256, false, KvType::F32).kv_cache, 2 * e.kv_cache);
  EXPECT_GT(e.activations, 256ull * (576 + 1536) * 4);
  EXPECT_EQ(e.total(), e.weights + e.kv_cache + e.activations);
  EXPECT_NE(e.to_string().find("KV cache"), std::string::npos);
}

TEST(Model, RefusesAContextThatCannotFitWithTheNumbers) {
  NEED_MODEL();
  LoadOptions o;
  o.ctx = std::int64_t{1} << 26;  // ~2.8 TiB of KV cache
  try {
    Model::load(*path, Backend::create(BackendType::Cpu), o);
    FAIL() << "loaded a model whose KV cache cannot fit";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory);
    EXPECT_NE(std::string(e.what()).find("KV cache"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("free"), std::string::npos) << e.what();
  }
}

// With f32 weights the forward pass is f32 throughout: one step, chunks and
// token-by-token decoding through the KV cache differ only by summation order.
// The integer kernels round activations per block, so a last-bit difference
// can move a rounding: by 1/65534 of a block's largest value with 16-bit
// activations (the default), but 1/254 with 8 bits, where the logits drift by
// a few percent (as between any two orders of llama.cpp's ops).
void check_kv_cache_consistency(const std::string& path, bool f32_weights, QuantActivations width, float rel_tol) {
  LoadOptions one;
  one.ctx = 64;
  one.f32_weights = f32_weights;
  one.activations = width;
  one.kv_type = KvType::F32;  // f32 throughout: an f16 cache rounds keys that differ in the last bit apart
  LoadOptions chunked = one;
  chunked.max_batch = 5;
  Model a = Model::load(path, Backend::create(BackendType::Cpu), one);
  Model b = Model::load(path, Backend::create(BackendType::Cpu), chunked);
  const auto ids = a.tokenizer().encode("The quick brown fox jumps over the lazy dog, again and again.");
  ASSERT_GT(ids.size(), 12u);
  const auto whole = a.forward(ids, true).to_vector();
  const auto chunks = b.forward(ids, true).to_vector();
  ASSERT_EQ(whole.size(), ids.size() * 49152);
  const float tol = rel_tol * max_abs(whole);
  EXPECT_LE(max_abs_diff(whole, chunks), tol);
  a.reset();
  Tensor last;
  for (auto t : ids) last = a.forward(std::span<const std::int32_t>(&t, 1));
  const auto inc = last.to_vector();
  const std::vector<float> tail(whole.end() - 49152, whole.end());
  EXPECT_LE(max_abs_diff(inc, tail), tol);
  EXPECT_EQ(a.position(), static_cast<std::int64_t>(ids.size()));
}

// The weights read into the library's memory at load (the default on the CPU)
// and used in place from the mapping (mmap_weights) are the same bytes: the
// logits agree exactly, and only the default allocates the weights' bytes.
TEST(Model, WeightsReadAtLoadAndMappedGiveTheSameLogits) {
  NEED_MODEL();
  Backend cpu = Backend::create(BackendType::Cpu);
  const std::vector<std::int32_t> tokens{1, 504, 3458, 314, 4263, 28, 260, 1789};
  std::vector<std::vector<float>> logits;
  std::vector<std::uint64_t> grew;
  for (bool mapped : {false, true}) {
    LoadOptions lo;
    lo.ctx = 64;
    lo.max_batch = 8;
    lo.mmap_weights = mapped;
    const auto before = cpu.memory_stats().allocated_bytes;
    Model m = Model::load(*path, cpu, lo);
    grew.push_back(cpu.memory_stats().allocated_bytes - before);
    logits.push_back(m.forward(tokens, true).to_vector());
  }
  EXPECT_EQ(logits[0], logits[1]);
  const auto file = GgufFile::open(*path);
  const std::uint64_t data = file.file_size() - file.data_offset();
  EXPECT_GE(grew[0], data);
  EXPECT_LT(grew[1], data / 2);
}

TEST(Model, PrefillChunksAndTokenByTokenDecodeAgree) {
  NEED_MODEL();
  check_kv_cache_consistency(*path, true, QuantActivations::Int16, 1e-4f);
  check_kv_cache_consistency(*path, false, QuantActivations::Int16, 1e-3f);
  check_kv_cache_consistency(*path, false, QuantActivations::Int8, 0.15f);
}

// The cache's element type rounds each key and value (and the query, for
// the product, with a float cache) to 11 (f16) or 8 (bf16) significant bits,
// or to 8-bit steps of each 32-block's largest value (q8_0): relative errors
// of 2^-11, 2^-8 and ~2^-8 in each attention input, which move the logits by
// about that much of their range through 30 layers of residual stream
// (measured on SmolLM2 over a 30-token prompt: f16 7e-4, bf16 4.5e-3, q8_0
// 1.8e-2 of the largest logit: a block's small values lose most to its
// largest). The bounds are about 3-4x those; the f32 cache is the reference.
TEST(Model, F16Bf16AndQ8KvCachesStayNearTheF32Cache) {
  NEED_MODEL();
  LoadOptions o;
  o.ctx = 96;
  o.f32_weights = true;  // no activation quantization: the cache's rounding alone
  o.kv_type = KvType::F32;
  Model ref = Model::load(*path, Backend::create(BackendType::Cpu), o);
  const auto ids = ref.tokenizer().encode(
      "In 1969, the Apollo 11 mission landed the first humans on the Moon. Neil Armstrong and Buzz Aldrin spent "
      "about two hours outside the lunar module.");
  ASSERT_GT(ids.size(), 24u);
  const auto want = ref.forward(ids, true).to_vector();
  for (auto [kv, bound, bytes] : {std::tuple{KvType::F16, 3e-3f, 2.0}, std::tuple{KvType::BF16, 2e-2f, 2.0},
                                  std::tuple{KvType::Q8_0, 5e-2f, 34.0 / 32}}) {
    o.kv_type = kv;
    Model m = Model::load(*path, Backend::create(BackendType::Cpu), o);
    EXPECT_EQ(m.memory_estimate().kv_cache, static_cast<std::uint64_t>(ref.memory_estimate().kv_cache / 4 * bytes));
    // The whole prompt at once (the flash path), then token by token (split-K).
    const auto got = m.forward(ids, true).to_vector();
    const float err = max_abs_diff(got, want) / max_abs(want);
    std::printf("%s KV cache: max logit error %.2e of the largest logit\n", std::string(kv_type_name(kv)).c_str(), err);
    EXPECT_LE(err, bound) << kv_type_name(kv);
    m.reset();
    Tensor last;
    for (auto t : ids) last = m.forward(std::span<const std::int32_t>(&t, 1));
    const std::vector<float> tail(want.end() - 49152, want.end());
    EXPECT_LE(max_abs_diff(last.to_vector(), tail) / max_abs(tail), bound) << kv_type_name(kv) << " decode";
  }
  EXPECT_EQ(kv_type_from_name("q8_0"), KvType::Q8_0);
  EXPECT_FALSE(kv_type_from_name("q4_0").has_value());
}

TEST(Model, BadInputIsAClearError) {
  NEED_MODEL();
  LoadOptions o;
  o.ctx = 16;
  Model m = Model::load(*path, Backend::create(BackendType::Cpu), o);
  const std::vector<std::int32_t> bad{1, 49152};
  EXPECT_THROW(m.forward(bad), Error);
  EXPECT_EQ(m.position(), 0);  // nothing was appended
  const std::vector<std::int32_t> too_long(17, 1);
  try {
    m.forward(too_long);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfRange);
  }
  EXPECT_THROW(m.forward(std::span<const std::int32_t>()), Error);
  EXPECT_THROW(m.truncate(3), Error);
  EXPECT_THROW(Generation(m, {}, {}), Error);
  EXPECT_THROW(Model::load("/nonexistent/model.gguf", Backend::create(BackendType::Cpu)), Error);
}

TEST(Model, GenerationStopsAtTheContextAndStreamsWholeCharacters) {
  NEED_MODEL();
  LoadOptions o;
  o.ctx = 20;
  Model m = Model::load(*path, Backend::create(BackendType::Cpu), o);
  Generation g(m, m.tokenizer().encode("Emoji: 😀 and 日本語"), {.max_tokens = 100});
  const std::string text = g.run_to_end();
  EXPECT_EQ(g.finish_reason(), FinishReason::Context);
  EXPECT_EQ(m.position(), 20);
  EXPECT_EQ(text, m.tokenizer().decode(g.tokens()));
}

TEST(Generation, EncodePromptWrapsChatTurnsAndNeverGivesNoTokens) {
  NEED_MODEL();
  const Tokenizer tok = Tokenizer::from_gguf(GgufFile::open(*path));
  EXPECT_EQ(encode_prompt(tok, "Hello!", false), tok.encode("Hello!"));
  // One user turn after the template's default system message, ending where the assistant's answer starts.
  const auto chat = encode_prompt(tok, "Hello!", true);
  EXPECT_EQ(tok.decode(chat, true),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
            "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n");
  // Generation refuses an empty prompt, so empty text starts from bos (SmolLM2 adds none itself).
  EXPECT_TRUE(tok.encode("").empty());
  EXPECT_EQ(encode_prompt(tok, "", false), (std::vector<std::int32_t>{tok.bos()}));
  EXPECT_GT(encode_prompt(tok, "", true).size(), 1u);
}

// Greedy tokens on `type` equal the CPU's, with every op of the model run by
// that backend's own kernels (nothing falls back to the CPU).
void expect_cpu_greedy_tokens(const std::string& path, BackendType type, int max_tokens) {
  const auto av = Backend::available();
  if (std::find(av.begin(), av.end(), type) == av.end()) GTEST_SKIP() << backend_name(type) << " backend unavailable";
  LoadOptions o;
  o.ctx = 32;
  Model cpu = Model::load(path, Backend::create(BackendType::Cpu), o);
  Model dev = Model::load(path, Backend::create(type), o);
  const auto prompt = cpu.tokenizer().encode("The capital of France is");
  Generation a(cpu, prompt, {.max_tokens = max_tokens});
  a.run_to_end();
  ops::reset_fallback_stats();
  Generation b(dev, prompt, {.max_tokens = max_tokens});
  b.run_to_end();
  const auto fb = ops::fallback_stats();
  std::printf("%s: %llu ops fell back to the CPU, %llu copies, %.1f MiB\n", dev.backend().name().c_str(),
              static_cast<unsigned long long>(fb.ops), static_cast<unsigned long long>(fb.copies),
              static_cast<double>(fb.bytes) / (1 << 20));
  EXPECT_EQ(a.tokens(), b.tokens());
  EXPECT_EQ(fb.ops, 0u);
}

TEST(Model, OpenClGivesTheCpuGreedyTokens) {
  NEED_MODEL();
  expect_cpu_greedy_tokens(*path, BackendType::OpenCl, 6);
}

// lavapipe runs WGSL on the CPU through LLVM: a handful of tokens keeps it quick.
TEST(Model, WebGpuGivesTheCpuGreedyTokens) {
  NEED_MODEL();
  expect_cpu_greedy_tokens(*path, BackendType::WebGpu, 4);
}

// Two generations on one model, interleaved step by step or run from two
// threads, each give exactly the tokens they give alone: each owns its
// sequence, and the model's one cache is refilled when the other used it.
// With two sequence slots each keeps its own slot; with one they take turns.
class GenerationSlots : public ::testing::TestWithParam<int> {};

TEST_P(GenerationSlots, InterleavedAndConcurrentGenerationsDoNotMix) {
  NEED_MODEL();
  LoadOptions o;
  o.ctx = 64;
  o.sequences = GetParam();
  Model m = Model::load(*path, Backend::create(BackendType::Cpu), o);
  const auto a_ids = m.tokenizer().encode("The capital of France is");
  const auto b_ids = m.tokenizer().encode("1, 2, 3, 4,");
  const GenerationOptions go{.max_tokens = 6, .stop_at_eos = false};
  Generation a_alone(m, a_ids, go), b_alone(m, b_ids, go);
  a_alone.run_to_end();
  b_alone.run_to_end();
  ASSERT_NE(a_alone.tokens(), b_alone.tokens());

  Generation a(m, a_ids, go), b(m, b_ids, go);
  ASSERT_TRUE(a.next());
  b.run_to_end();  // b fills the cache with its own sequence between a's steps
  a.run_to_end();
  EXPECT_EQ(a.tokens(), a_alone.tokens());
  EXPECT_EQ(b.tokens(), b_alone.tokens());

  // A direct forward between steps is one more user of the cache.
  Generation c(m, a_ids, go);
  c.next();
  m.reset();
  m.forward(b_ids);
  c.run_to_end();
  EXPECT_EQ(c.tokens(), a_alone.tokens());

  Generation t1(m, a_ids, go), t2(m, b_ids, go);
  std::thread th([&] { t2.run_to_end(); });
  t1.run_to_end();
  th.join();
  EXPECT_EQ(t1.tokens(), a_alone.tokens());
  EXPECT_EQ(t2.tokens(), b_alone.tokens());
}

INSTANTIATE_TEST_SUITE_P(Slots, GenerationSlots, ::testing::Values(1, 2));

// Several sequences decoded in one forward pass: each gets the tokens it
// gets alone (greedy), and logits within the rounding of the wider products
// (the integer kernels quantize each row by itself; only summation orders
// differ: 1e-3 of the largest logit, the bound of the chunked prefill).
TEST(Model, BatchedDecodeGivesEachSequenceWhatItGetsAlone) {
  NEED_MODEL();
  LoadOptions o;
  o.ctx = 64;
  o.sequences = 3;
  Model m = Model::load(*path, Backend::create(BackendType::Cpu), o);
  const std::vector<std::string> prompts = {"The capital of France is", "1, 2, 3, 4,",
                                            "def fibonacci(n):\n    \"\"\"Return the"};
  constexpr int kSteps = 10;
  const std::size_t vocab = 49152;
  std::vector<std::vector<std::int32_t>> ids, alone_tokens(3);
  std::vector<std::vector<std::vector<float>>> alone_logits(3);
  for (const auto& p : prompts) ids.push_back(m.tokenizer().encode(p));
  auto argmax = [](const std::vector<float>& l, std::size_t off, std::size_t n) {
    return static_cast<std::int32_t>(std::max_element(l.begin() + static_cast<std::ptrdiff_t>(off),
                                                      l.begin() + static_cast<std::ptrdiff_t>(off + n)) -
                                     l.begin() - static_cast<std::ptrdiff_t>(off));
  };
  for (std::size_t i = 0; i < 3; ++i) {
    Model::Sequence seq;
    std::vector<float> l = m.extend(seq, ids[i]).to_vector();
    for (int s = 0; s < kSteps; ++s) {
      const std::int32_t t = argmax(l, 0, vocab);
      alone_tokens[i].push_back(t);
      l = m.extend(seq, std::span<const std::int32_t>(&t, 1)).to_vector();
      alone_logits[i].push_back(l);
    }
  }
  std::vector<Model::Sequence> seqs(3);
  std::vector<Model::Sequence*> live = {&seqs[0], &seqs[1], &seqs[2]};
  std::vector<std::int32_t> next(3);
  for (std::size_t i = 0; i < 3; ++i) next[i] = argmax(m.extend(seqs[i], ids[i]).to_vector(), 0, vocab);
  for (int s = 0; s < kSteps; ++s) {
    for (std::size_t i = 0; i < 3; ++i)
      ASSERT_EQ(next[i], alone_tokens[i][static_cast<std::size_t>(s)]) << i << " " << s;
    const Tensor out = m.decode(live, next);
    ASSERT_EQ(out.shape(), Shape({3, 49152}));
    const std::vector<float> l = out.to_vector();
    for (std::size_t i = 0; i < 3; ++i) {
      const std::vector<float> row(l.begin() + static_cast<std::ptrdiff_t>(i * vocab),
                                   l.begin() + static_cast<std::ptrdiff_t>((i + 1) * vocab));
      const auto& want = alone_logits[i][static_cast<std::size_t>(s)];
      EXPECT_LE(max_abs_diff(row, want), 1e-3f * max_abs(want)) << "sequence " << i << " step " << s;
      next[i] = argmax(l, i * vocab, vocab);
    }
  }
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(seqs[i].tokens.size(), ids[i].size() + kSteps);

  // Cut back and decoded again: the same logits as the first time.
  for (auto& q : seqs) m.truncate(q, static_cast<std::int64_t>(q.tokens.size()) - 1);
  std::vector<std::int32_t> last = {alone_tokens[0].back(), alone_tokens[1].back(), alone_tokens[2].back()};
  const std::vector<float> again = m.decode(live, last).to_vector();
  for (std::size_t i = 0; i < 3; ++i) {
    const std::vector<float> row(again.begin() + static_cast<std::ptrdiff_t>(i * vocab),
                                 again.begin() + static_cast<std::ptrdiff_t>((i + 1) * vocab));
    EXPECT_LE(max_abs_diff(row, alone_logits[i].back()), 1e-3f * max_abs(alone_logits[i].back())) << i;
  }

  // Refused: more sequences than slots, one twice, a token per sequence missing.
  Model::Sequence extra;
  std::vector<Model::Sequence*> four = {&seqs[0], &seqs[1], &seqs[2], &extra};
  const std::vector<std::int32_t> t4 = {1, 2, 3, 4};
  EXPECT_THROW(m.decode(four, t4), Error);
  std::vector<Model::Sequence*> twice = {&seqs[0], &seqs[0]};
  EXPECT_THROW(m.decode(twice, std::vector<std::int32_t>{1, 2}), Error);
  EXPECT_THROW(m.decode(live, std::vector<std::int32_t>{1, 2}), Error);
  EXPECT_THROW(m.truncate(seqs[0], 1000), Error);
}

// generate_parallel: N continuations of one prompt at temperature 0 are all
// the single greedy continuation; the aggregate rate is reported.
TEST(Generation, ParallelContinuationsMatchTheSingleGreedyOne) {
  NEED_MODEL();
  LoadOptions o;
  o.ctx = 64;
  o.sequences = 4;
  Model m = Model::load(*path, Backend::create(BackendType::Cpu), o);
  const auto ids = m.tokenizer().encode("The capital of France is");
  const GenerationOptions go{.max_tokens = 8, .stop_at_eos = false};
  Generation alone(m, ids, go);
  alone.run_to_end();
  const ParallelResult r = generate_parallel(m, {ids, ids, ids, ids}, go);
  ASSERT_EQ(r.tokens.size(), 4u);
  for (const auto& t : r.tokens) EXPECT_EQ(t, alone.tokens());
  EXPECT_EQ(r.generated_tokens, 32);
  EXPECT_EQ(r.decode_tokens, 28);
  EXPECT_GT(r.decode_tokens_per_s(), 0.0);
  EXPECT_EQ(r.finish[0], FinishReason::Length);
  EXPECT_THROW(generate_parallel(m, {ids, ids, ids, ids, ids}, go), Error);
}

namespace {

using Metadata = std::vector<std::pair<std::string, GgufValue>>;

// The model file rewritten by the test writer after `edit`, at a temporary path.
std::string rewritten(const std::string& path, const std::string& name,
                      const std::function<void(Metadata&, std::vector<test::TensorSpec>&)>& edit) {
  const GgufFile f = GgufFile::open(path);
  Metadata kv = f.metadata();
  std::vector<test::TensorSpec> tensors;
  for (const auto& t : f.tensors()) {
    const auto d = f.tensor_data(t);
    tensors.push_back({t.name, t.dims, static_cast<std::uint32_t>(t.type), test::Bytes(d.begin(), d.end())});
  }
  edit(kv, tensors);
  test::GgufWriter w(3, 32);
  for (auto& [k, v] : kv)
    if (k != "general.alignment") w.kv(k, v);
  for (auto& t : tensors) w.tensor(std::move(t));
  const test::Bytes bytes = w.build();
  const std::string out = ::testing::TempDir() + name;
  std::ofstream(out, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return out;
}

void set_key(Metadata& kv, const std::string& key, GgufValue v) {
  for (auto& [k, old] : kv)
    if (k == key) {
      old = std::move(v);
      return;
    }
  kv.emplace_back(key, std::move(v));
}

// Loading `file` fails with `code`, naming `needle`, without the op-documentation advice.
void expect_load_refused(const std::string& file, ErrorCode code, const std::string& needle) {
  try {
    Model::load(file, Backend::create(BackendType::Cpu), {.ctx = 32});
    ADD_FAILURE() << file << " loaded; expected a refusal naming " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(e.message().find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("ops.hpp"), std::string::npos) << e.what();
  }
}

}  // namespace

// What the forward would run wrong is refused by name: an architecture not
// in the table, a tensor it does not read (a norm's bias), frequency
// factors it cannot apply, a bias of the wrong length, a metadata key it does not understand,
// mixture-of-experts counts, a zero trained context.
TEST(Model, RefusesFilesItWouldRunWrong) {
  NEED_MODEL();
  const auto same = rewritten(*path, "same.gguf", [](Metadata&, std::vector<test::TensorSpec>&) {});
  EXPECT_NO_THROW(Model::load(same, Backend::create(BackendType::Cpu), {.ctx = 32}));

  const auto arch = rewritten(*path, "phi2.gguf", [](Metadata& kv, std::vector<test::TensorSpec>&) {
    set_key(kv, "general.architecture", test::gv::str("phi2"));
  });
  expect_load_refused(arch, ErrorCode::Unsupported, "architecture 'phi2' is not supported; the forward runs llama (");

  // Llama 3.1's factors are read (tests/python/test_architectures.py), but a
  // zero one would divide an angle by zero.
  const auto freqs = rewritten(*path, "rope_freqs.gguf", [](Metadata&, std::vector<test::TensorSpec>& t) {
    t.push_back({"rope_freqs.weight", {32}, 0, test::Bytes(32 * 4, std::byte{0})});
  });
  expect_load_refused(freqs, ErrorCode::InvalidArgument, "rope_freqs.weight");
  const auto short_freqs = rewritten(*path, "rope_freqs16.gguf", [](Metadata&, std::vector<test::TensorSpec>& t) {
    t.push_back({"rope_freqs.weight", {16}, 0, test::Bytes(16 * 4, std::byte{0})});
  });
  expect_load_refused(short_freqs, ErrorCode::InvalidArgument, "rope_freqs.weight should be a vector of 32");

  // A linear layer's bias is read where a file has one (as llama.cpp's
  // llama graph does); a norm's is not.
  const auto bias = rewritten(*path, "bias.gguf", [](Metadata&, std::vector<test::TensorSpec>& t) {
    t.push_back({"blk.0.attn_norm.bias", {576}, 0, test::Bytes(576 * 4, std::byte{0})});
  });
  expect_load_refused(bias, ErrorCode::Unsupported, "blk.0.attn_norm.bias is not used by the llama forward");
  const auto q_bias = rewritten(*path, "q_bias.gguf", [](Metadata&, std::vector<test::TensorSpec>& t) {
    t.push_back({"blk.0.attn_q.bias", {500}, 0, test::Bytes(500 * 4, std::byte{0})});
  });
  expect_load_refused(q_bias, ErrorCode::InvalidArgument, "blk.0.attn_q.bias should be a vector of 576");

  // A type the reader knows but the forward has no kernels for: refused,
  // naming the tensor, its type and what is computed with.
  const auto iq2 = rewritten(*path, "iq2_xxs.gguf", [](Metadata&, std::vector<test::TensorSpec>& t) {
    for (auto& s : t)
      if (s.name == "blk.3.ffn_down.weight") {
        s.type = static_cast<std::uint32_t>(GgmlType::IQ2_XXS);
        s.data = test::Bytes(576 * (1536 / 256) * 66, std::byte{0});
      }
  });
  expect_load_refused(iq2, ErrorCode::Unsupported, "blk.3.ffn_down.weight is iq2_xxs; the library computes with f32");

  const auto key = rewritten(*path, "key.gguf", [](Metadata& kv, std::vector<test::TensorSpec>&) {
    set_key(kv, "llama.attention.sliding_window", test::gv::u32(4096));
  });
  expect_load_refused(key, ErrorCode::Unsupported, "llama.attention.sliding_window");

  const auto moe = rewritten(*path, "moe.gguf", [](Metadata& kv, std::vector<test::TensorSpec>&) {
    set_key(kv, "llama.expert_count", test::gv::u32(8));
  });
  expect_load_refused(moe, ErrorCode::Unsupported, "llama.expert_count");

  const auto ctx0 = rewritten(*path, "ctx0.gguf", [](Metadata& kv, std::vector<test::TensorSpec>&) {
    set_key(kv, "llama.context_length", test::gv::u32(0));
  });
  expect_load_refused(ctx0, ErrorCode::InvalidArgument, "llama.context_length");
}
