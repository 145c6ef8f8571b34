#include "simd.hpp"

#include "../gemm/gemm_convert.hpp"
#include "../platform/isa.hpp"
#include "simd_avx2.hpp"
#include "simd_avx512.hpp"
#include "stream_store.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace torsh::cpu::simd {
namespace {

// exp: Cody-Waite reduction to r in [-ln2/2, ln2/2] and the Cephes expf
// polynomial; ~1 ulp. Above ln(FLT_MAX) the result is inf; below -87.3 it
// flushes to 0 (the true value is subnormal); NaN propagates. At the top n
// reaches 128, whose 2^n is no float, so it is applied as 2^127 * 2.
inline float exp_f32(float x) {
  const float hi = 88.72283905f, lo = -87.3365447504f;
  float xc = x < lo ? lo : x;  // NaN passes through both selects and is restored below
  xc = xc > hi ? hi : xc;
  const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500E-4f;
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  p = p * r * r + r + 1.0f;
  const float nc = n < 127.0f ? n : 127.0f;
  const std::int32_t e = static_cast<std::int32_t>(nc) + 127;
  const float scale = std::bit_cast<float>(static_cast<std::uint32_t>(e) << 23);
  float y = p * scale * (n - nc + 1.0f);
  y = x < lo ? 0.0f : y;
  y = x > hi ? std::numeric_limits<float>::infinity() : y;
  return x != x ? x : y;
}

// erf: Abramowitz & Stegun 7.1.26 (absolute error <= 1.5e-7), odd extension.
inline float erf_f32(float x) {
  const float ax = std::fabs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * ax);
  const float poly =
      t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const float y = 1.0f - poly * exp_f32(-ax * ax);
  return std::copysign(y, x);
}

// tanh: 1 - 2 / (exp(2|x|) + 1), with an odd Taylor polynomial near 0 where the
// subtraction would cancel; ~2 ulp.
inline float tanh_f32(float x) {
  const float ax = std::fabs(x);
  const float e = exp_f32(2.0f * (ax < 20.0f ? ax : 20.0f));
  const float big = 1.0f - 2.0f / (e + 1.0f);
  const float x2 = x * x;
  const float small =
      ax * (1.0f + x2 * (-0.333333333f + x2 * (0.133333333f + x2 * (-0.053968254f + x2 * 0.021869488f))));
  const float y = ax < 0.125f ? small : big;
  return x != x ? x : std::copysign(y, x);
}

inline float sigmoid_f32(float x) { return 1.0f / (1.0f + exp_f32(-x)); }

// Float sums do not vectorise without reassociation; sixteen explicit lanes
// do, and also keep long rows more accurate than one running sum.
constexpr int kLanes = 16;

template <class F>
inline float lane_sum(std::int64_t n, F term) {
  float acc[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += term(i + l);
  float s = 0.0f;
  for (; i < n; ++i) s += term(i);
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  return acc[0] + s;
}

// The max of x[0, n), and in `probe` the sum of x * 0 over x > -inf (NaN
// when the row holds a NaN or +inf).
inline float lane_max(const float* x, std::int64_t n, float& probe) {
  float acc[kLanes], pr[kLanes] = {};
  for (int l = 0; l < kLanes; ++l) acc[l] = -std::numeric_limits<float>::infinity();
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      acc[l] = x[i + l] > acc[l] ? x[i + l] : acc[l];
      pr[l] += x[i + l] > -std::numeric_limits<float>::infinity() ? x[i + l] * 0.0f : 0.0f;
    }
  float m = -std::numeric_limits<float>::infinity(), p = 0.0f;
  for (; i < n; ++i) {
    m = x[i] > m ? x[i] : m;
    p += x[i] > -std::numeric_limits<float>::infinity() ? x[i] * 0.0f : 0.0f;
  }
  for (int l = 0; l < kLanes; ++l) {
    m = acc[l] > m ? acc[l] : m;
    p += pr[l];
  }
  probe = p;
  return m;
}

template <class F>
inline void map(const float* x, float* y, std::int64_t n, F f) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

}  // namespace

TORSH_SIMD_CLONES
void unary_f32_portable(rt::UnaryOp op, const float* x, float* y, std::int64_t n) {
  using U = rt::UnaryOp;
  switch (op) {
    case U::Neg: return map(x, y, n, [](float v) { return -v; });
    case U::Abs: return map(x, y, n, [](float v) { return std::fabs(v); });
    case U::Relu: return map(x, y, n, [](float v) { return v > 0.0f ? v : (v != v ? v : 0.0f); });
    case U::Exp: return map(x, y, n, exp_f32);
    case U::Log: return map(x, y, n, [](float v) { return std::log(v); });
    case U::Sqrt: return map(x, y, n, [](float v) { return std::sqrt(v); });
    case U::Rsqrt: return map(x, y, n, [](float v) { return 1.0f / std::sqrt(v); });
    case U::Tanh: return map(x, y, n, tanh_f32);
    case U::Sigmoid: return map(x, y, n, sigmoid_f32);
    case U::Silu: return map(x, y, n, [](float v) { return v * sigmoid_f32(v); });
    case U::Gelu: return map(x, y, n, [](float v) { return 0.5f * v * (1.0f + erf_f32(v * 0.70710678118654752f)); });
    case U::GeluTanh:
      return map(x, y, n, [](float v) {
        return 0.5f * v * (1.0f + tanh_f32(0.79788456080286535588f * (v + 0.044715f * v * v * v)));
      });
  }
}

namespace {
template <class F>
inline void zip(const float* a, const float* b, std::int64_t bs, float* out, std::int64_t n, F f) {
  if (bs == 1) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  } else {
    const float s = b[0];
    for (std::int64_t i = 0; i < n; ++i) out[i] = f(a[i], s);
  }
}
}  // namespace

TORSH_SIMD_CLONES
void binary_f32_portable(rt::BinaryOp op, const float* a, const float* b, std::int64_t bs, float* out, std::int64_t n) {
  using B = rt::BinaryOp;
  switch (op) {
    case B::Add: return zip(a, b, bs, out, n, [](float x, float y) { return x + y; });
    case B::Sub: return zip(a, b, bs, out, n, [](float x, float y) { return x - y; });
    case B::Mul: return zip(a, b, bs, out, n, [](float x, float y) { return x * y; });
    case B::Div: return zip(a, b, bs, out, n, [](float x, float y) { return x / y; });
    case B::Maximum:
      return zip(a, b, bs, out, n, [](float x, float y) { return (x != x || y != y) ? x + y : (x > y ? x : y); });
    case B::Minimum:
      return zip(a, b, bs, out, n, [](float x, float y) { return (x != x || y != y) ? x + y : (x < y ? x : y); });
    case B::Pow: return zip(a, b, bs, out, n, [](float x, float y) { return std::pow(x, y); });
  }
}

TORSH_SIMD_CLONES
void softmax_row_f32_portable(const float* x, float* y, std::int64_t n, bool log) {
  // One pass finds the max and, as the sum of x * 0 over the values above
  // -inf, whether the row holds a NaN or +inf (NaN compares false, so the max
  // alone misses it). Either poisons the row, as does a row of -inf (0/0), as
  // in PyTorch; -inf beside finite values gives probability 0.
  float probe = 0.0f;
  const float mx = lane_max(x, n, probe);
  if (probe != probe || mx == -std::numeric_limits<float>::infinity()) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  if (log) {
    const float lse = std::log(lane_sum(n, [&](std::int64_t i) { return exp_f32(x[i] - mx); }));
    for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] - mx - lse;
  } else {
    // The exponentials are written and summed in the same pass.
    const float sum = lane_sum(n, [&](std::int64_t i) {
      const float e = exp_f32(x[i] - mx);
      y[i] = e;
      return e;
    });
    const float inv = 1.0f / sum;
    for (std::int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

void binary_f32(rt::BinaryOp op, const float* a, const float* b, std::int64_t bs, float* out, std::int64_t n,
                bool stream) {
  if (isa_usable(Isa::Avx512) && binary_f32_avx512(op, a, b, bs, out, n, stream)) return;
  if (isa_usable(Isa::Avx2) && binary_f32_avx2(op, a, b, bs, out, n, stream)) return;
  if (!stream) return binary_f32_portable(op, a, b, bs, out, n);
  write_streaming(out, n, [&](float* stage, std::int64_t i, std::int64_t len) {
    binary_f32_portable(op, a + i, b + i * bs, bs, stage, len);
  });
}

void unary_f32(rt::UnaryOp op, const float* x, float* y, std::int64_t n, bool stream) {
  if (isa_usable(Isa::Avx512) && unary_f32_avx512(op, x, y, n, stream)) return;
  if (isa_usable(Isa::Avx2) && unary_f32_avx2(op, x, y, n, stream)) return;
  if (!stream) return unary_f32_portable(op, x, y, n);
  // The portable loops write an L1 block that is then streamed out.
  write_streaming(y, n,
                  [&](float* stage, std::int64_t i, std::int64_t len) { unary_f32_portable(op, x + i, stage, len); });
}

void softmax_row_f32(const float* x, float* y, std::int64_t n, bool log, const float* next) {
  if (isa_usable(Isa::Avx2)) return softmax_row_f32_avx2(x, y, n, log, next);
  softmax_row_f32_portable(x, y, n, log);
}

void norm_row_f32(const float* x, float* y, const float* w, const float* b, std::int64_t n, float eps, bool rms,
                  const float* next) {
  if (isa_usable(Isa::Avx2)) return norm_row_f32_avx2(x, y, w, b, n, eps, rms, next);
  norm_row_f32_portable(x, y, w, b, n, eps, rms);
}

TORSH_SIMD_CLONES
void norm_row_f32_portable(const float* x, float* y, const float* w, const float* b, std::int64_t n, float eps,
                           bool rms) {
  const float mean = rms ? 0.0f : lane_sum(n, [&](std::int64_t i) { return x[i]; }) / static_cast<float>(n);
  const float ss = lane_sum(n, [&](std::int64_t i) {
    const float d = x[i] - mean;
    return d * d;
  });
  const float inv = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  if (w && b) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * w[i] + b[i];
  } else if (w) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * w[i];
  } else if (b) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv + b[i];
  } else {
    for (std::int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv;
  }
}

namespace {

TORSH_SIMD_CLONES
void attention_scores_portable(const float* q, std::int64_t nq, const float* k, std::int64_t nk, std::int64_t D,
                               const std::int64_t* jmax, float* s) {
  constexpr int kLanes = 16;  // independent partial sums: the dot vectorises without reassociation
  for (std::int64_t i = 0; i < nq; ++i) {
    const std::int64_t nj = jmax[i] < nk ? jmax[i] : nk;
    const float* qi = q + i * D;
    for (std::int64_t j = 0; j < nj; ++j) {
      const float* kj = k + j * D;
      float part[kLanes] = {};
      std::int64_t d = 0;
      for (; d + kLanes <= D; d += kLanes)
        for (int t = 0; t < kLanes; ++t) part[t] += qi[d + t] * kj[d + t];
      float tail = 0.0f;
      for (; d < D; ++d) tail += qi[d] * kj[d];
      for (int w = kLanes / 2; w > 0; w /= 2)
        for (int t = 0; t < w; ++t) part[t] += part[t + w];
      s[i * nk + j] = part[0] + tail;
    }
  }
}

// Scores to unnormalised probabilities, with the running max and sum moved on
// and the output so far rescaled.
TORSH_SIMD_CLONES
void attention_online_softmax(std::int64_t nq, std::int64_t nk, std::int64_t Dv, const std::int64_t* jmax, float* s,
                              float* m, float* l, float* acc) {
  for (std::int64_t i = 0; i < nq; ++i) {
    const std::int64_t nj = jmax[i] < nk ? jmax[i] : nk;
    if (nj <= 0) continue;
    float* srow = s + i * nk;
    float rowmax = m[i];
    for (std::int64_t j = 0; j < nj; ++j) rowmax = srow[j] > rowmax ? srow[j] : rowmax;
    const float corr = exp_f32(m[i] - rowmax);
    for (std::int64_t j = 0; j < nj; ++j) srow[j] = exp_f32(srow[j] - rowmax);
    l[i] = l[i] * corr + lane_sum(nj, [&](std::int64_t j) { return srow[j]; });
    m[i] = rowmax;
    float* ai = acc + i * Dv;
    for (std::int64_t d = 0; d < Dv; ++d) ai[d] *= corr;
  }
}

TORSH_SIMD_CLONES
void attention_values_portable(const float* s, std::int64_t nq, std::int64_t nk, const float* v, std::int64_t Dv,
                               const std::int64_t* jmax, float* acc) {
  for (std::int64_t i = 0; i < nq; ++i) {
    const std::int64_t nj = jmax[i] < nk ? jmax[i] : nk;
    float* ai = acc + i * Dv;
    for (std::int64_t j = 0; j < nj; ++j) {
      const float p = s[i * nk + j];
      const float* vj = v + j * Dv;
      for (std::int64_t d = 0; d < Dv; ++d) ai[d] += p * vj[d];
    }
  }
}

// Gemma 2's logit soft-cap on each row's scores that the row sees.
void cap_scores(std::int64_t nq, std::int64_t nk, const std::int64_t* jmax, float* s, float cap) {
  const float inv = 1.0f / cap;
  for (std::int64_t i = 0; i < nq; ++i) {
    const std::int64_t nj = jmax[i] < nk ? jmax[i] : nk;
    for (std::int64_t j = 0; j < nj; ++j) s[i * nk + j] = cap * std::tanh(s[i * nk + j] * inv);
  }
}

// The portable loops read f32: f16 and bf16 rows are widened first.
const float* widen(const void* x, DType t, std::int64_t n, std::vector<float>& buf) {
  if (t == DType::F32) return static_cast<const float*>(x);
  if (static_cast<std::int64_t>(buf.size()) < n) buf.resize(static_cast<std::size_t>(n));
  if (t == DType::F16)
    widen_f16(static_cast<const std::uint16_t*>(x), buf.data(), n);
  else
    widen_bf16(static_cast<const std::uint16_t*>(x), buf.data(), n);
  return buf.data();
}

}  // namespace

TORSH_SIMD_CLONES
void attention_tile_f32(const float* q, std::int64_t nq, const float* kt, std::int64_t nk, const float* v,
                        std::int64_t D, std::int64_t Dv, const std::int64_t* jmax, float* s, float* m, float* l,
                        float* acc, float softcap) {
  for (std::int64_t i = 0; i < nq; ++i) {
    const std::int64_t nj = jmax[i] < nk ? jmax[i] : nk;
    float* srow = s + i * nk;
    // Scores as rank-1 updates over d, so the inner loop runs along keys and vectorises.
    for (std::int64_t j = 0; j < nj; ++j) srow[j] = 0.0f;
    for (std::int64_t d = 0; d < D; ++d) {
      const float qd = q[i * D + d];
      const float* kr = kt + d * nk;
      for (std::int64_t j = 0; j < nj; ++j) srow[j] += qd * kr[j];
    }
    if (softcap > 0.0f) cap_scores(1, nk, jmax + i, srow, softcap);
    // The row's softmax step and values while its scores are in L1.
    attention_online_softmax(1, nk, Dv, jmax + i, srow, m + i, l + i, acc + i * Dv);
    attention_values_portable(srow, 1, nk, v, Dv, jmax + i, acc + i * Dv);
  }
}

void attention_rows(const float* q, std::int64_t nq, const void* k, const void* v, DType kv, std::int64_t nk,
                    std::int64_t D, std::int64_t Dv, const std::int64_t* jmax, float* s, float* m, float* l, float* acc,
                    bool portable, float softcap) {
  const bool wide = !portable && isa_usable(Isa::Avx512);
  std::int64_t seen = 0;
  for (std::int64_t i = 0; i < nq; ++i) seen = std::max(seen, std::min(jmax[i], nk));
  thread_local std::vector<float> kb, vb;
  if (!(wide && attention_scores_avx512(q, nq, k, kv, nk, D, jmax, s)))
    attention_scores_portable(q, nq, widen(k, kv, seen * D, kb), nk, D, jmax, s);
  if (softcap > 0.0f) cap_scores(nq, nk, jmax, s, softcap);
  if (!(wide && attention_softmax_avx512(nq, nk, Dv, jmax, s, m, l, acc)))
    attention_online_softmax(nq, nk, Dv, jmax, s, m, l, acc);
  if (!(wide && attention_values_avx512(s, nq, nk, v, kv, Dv, jmax, acc)))
    attention_values_portable(s, nq, nk, widen(v, kv, seen * Dv, vb), Dv, jmax, acc);
}

TORSH_SIMD_CLONES
void widen_f16_portable(const std::uint16_t* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = gemm::half_to_float(x[i]);
}

void widen_f16(const std::uint16_t* x, float* y, std::int64_t n) {
  if (isa_usable(Isa::Avx512)) return widen_f16_avx512(x, y, n);
  if (isa_usable(Isa::Avx2)) return widen_f16_avx2(x, y, n);
  widen_f16_portable(x, y, n);
}

TORSH_SIMD_CLONES
void narrow_f16(const float* x, std::uint16_t* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = gemm::float_to_half(x[i]);
}

TORSH_SIMD_CLONES
void narrow_bf16(const float* x, std::uint16_t* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = gemm::float_to_bf16(x[i]);
}

TORSH_SIMD_CLONES
void widen_bf16(const std::uint16_t* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::bit_cast<float>(static_cast<std::uint32_t>(x[i]) << 16);
}

TORSH_SIMD_CLONES
void adam_f32(float* p, const float* g, float* m, float* v, std::int64_t n, float b1, float b2, float step_size,
              float inv_sqrt_bc2, float eps, float decay, float l2, float grad_scale) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float pi = p[i];
    const float gi = g[i] * grad_scale + l2 * pi;
    const float mi = b1 * m[i] + (1.0f - b1) * gi;
    const float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi * decay - step_size * mi / (std::sqrt(vi) * inv_sqrt_bc2 + eps);
  }
}

}  // namespace torsh::cpu::simd
