#pragma once
// Picking the next token from logits: greedy (temperature 0), or temperature,
// top-k and top-p (nucleus) sampling with a seeded generator, so a run with
// the same seed and logits picks the same tokens on every platform.
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace torsh::model {

struct SamplingParams {
  float temperature = 0.0f;  // 0: greedy (argmax; ties go to the lowest id)
  std::int32_t top_k = 0;    // keep the k most likely tokens; 0: all
  float top_p = 1.0f;        // keep the smallest set whose probability reaches p; 1: all
  std::uint64_t seed = 0;
};

class Sampler {
 public:
  // InvalidArgument for a negative or non-finite temperature, top_k < 0, or top_p outside (0, 1].
  explicit Sampler(SamplingParams params);
  // NaN logits are never picked; all-NaN or empty logits are an InvalidArgument error.
  std::int32_t sample(std::span<const float> logits);
  const SamplingParams& params() const { return p_; }

 private:
  double uniform();  // [0, 1) from the 64-bit engine, defined bit for bit (the std distributions are not)
  SamplingParams p_;
  std::mt19937_64 rng_;
  std::vector<std::pair<float, std::int32_t>> cand_;
};

}  // namespace torsh::model
