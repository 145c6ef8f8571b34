// Token sampling. Candidates are narrowed in the order llama.cpp and Hugging
// Face apply them (top-k, then temperature-scaled softmax, then top-p), and the
// draw walks the kept probabilities in descending order.
#include "torsh/model/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "torsh/core/error.hpp"

namespace torsh::model {

Sampler::Sampler(SamplingParams params) : p_(params), rng_(params.seed) {
  if (!std::isfinite(p_.temperature) || p_.temperature < 0.0f)
    throw Error(ErrorCode::InvalidArgument,
                "temperature must be finite and >= 0, got " + std::to_string(p_.temperature), {.op = "sample"},
                {"Use 0 for greedy decoding"});
  if (p_.top_k < 0)
    throw Error(ErrorCode::InvalidArgument, "top_k must be >= 0, got " + std::to_string(p_.top_k), {.op = "sample"},
                {"Use 0 to keep every token"});
  if (!(p_.top_p > 0.0f && p_.top_p <= 1.0f))
    throw Error(ErrorCode::InvalidArgument, "top_p must be in (0, 1], got " + std::to_string(p_.top_p),
                {.op = "sample"}, {"Use 1 to keep every token"});
}

double Sampler::uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

std::int32_t Sampler::sample(std::span<const float> logits) {
  std::int32_t best = -1;
  for (std::size_t i = 0; i < logits.size(); ++i)
    if (!std::isnan(logits[i]) && (best < 0 || logits[i] > logits[static_cast<std::size_t>(best)]))
      best = static_cast<std::int32_t>(i);
  if (best < 0)
    throw Error(ErrorCode::InvalidArgument,
                logits.empty() ? "no logits to sample from" : "every logit is NaN: the forward pass diverged",
                {.op = "sample", .shapes = {"[" + std::to_string(logits.size()) + "]"}});
  if (p_.temperature == 0.0f) return best;

  cand_.clear();
  for (std::size_t i = 0; i < logits.size(); ++i)
    if (!std::isnan(logits[i])) cand_.emplace_back(logits[i], static_cast<std::int32_t>(i));
  const auto by_logit = [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  std::size_t keep = cand_.size();
  if (p_.top_k > 0 && static_cast<std::size_t>(p_.top_k) < keep) {
    keep = static_cast<std::size_t>(p_.top_k);
    std::partial_sort(cand_.begin(), cand_.begin() + static_cast<std::ptrdiff_t>(keep), cand_.end(), by_logit);
    cand_.resize(keep);
  } else {
    std::sort(cand_.begin(), cand_.end(), by_logit);
  }
  // Softmax at the temperature, in place (the first candidate holds the maximum).
  const float top = cand_.front().first;
  double total = 0.0;
  for (auto& c : cand_) {
    c.first = static_cast<float>(std::exp(static_cast<double>(c.first - top) / p_.temperature));
    total += c.first;
  }
  if (p_.top_p < 1.0f) {
    double mass = 0.0;
    std::size_t n = 0;
    while (n < cand_.size() && mass < p_.top_p * total) mass += cand_[n++].first;
    cand_.resize(std::max<std::size_t>(n, 1));
    total = mass > 0.0 ? mass : cand_.front().first;
  }
  double r = uniform() * total;
  for (const auto& c : cand_) {
    r -= c.first;
    if (r < 0.0) return c.second;
  }
  return cand_.back().second;  // rounding left a sliver past the last candidate
}

}  // namespace torsh::model
