// Flash-style attention: each task owns a block of queries of one (batch,
// head), walks the keys in blocks with an online softmax (running max and
// sum), and never stores the Sq x Skv score matrix. Extra memory per thread is
// O(block^2 + block * D). The tile math is in simd.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "device.hpp"
#include "platform/thread_pool.hpp"
#include "simd/simd.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

constexpr std::int64_t kBq = 64, kBk = 256;

template <class T>
void run(const rt::AttentionArgs& a) {
  const std::int64_t B = a.q.shape[0], Hq = a.q.shape[1], Sq = a.q.shape[2], D = a.q.shape[3];
  const std::int64_t Hkv = a.k.shape[1], Skv = a.k.shape[2], Dv = a.v.shape[3];
  const std::int64_t group = Hq / Hkv;
  const std::int64_t qblocks = (Sq + kBq - 1) / kBq;
  const T* Q = data_of<T>(a.q);
  const T* K = data_of<T>(a.k);
  const T* V = data_of<T>(a.v);
  T* O = data_of<T>(a.out);
  // causal: query i sees keys j <= i + shift
  const std::int64_t shift = a.align == rt::CausalAlign::BottomRight ? Skv - Sq : 0;
  // Causal tiles near the diagonal cost more; interleave block order so both threads get a mix.
  pool().parallel_for(B * Hq * qblocks, 1, [&](std::int64_t t0, std::int64_t t1) {
    // Per thread and kept: a decode step calls this once per layer with one
    // query row, where allocating and zeroing ~200 KB each time cost as much
    // as the attention itself.
    thread_local std::vector<float> q, kt, vb, s, acc, m, l;
    thread_local std::vector<std::int64_t> jmax;
    auto at_least = [](auto& v, std::int64_t n) {
      if (static_cast<std::int64_t>(v.size()) < n) v.resize(static_cast<std::size_t>(n));
    };
    at_least(q, kBq * D), at_least(kt, D * kBk), at_least(vb, kBk * Dv), at_least(s, kBq * kBk);
    at_least(acc, kBq * Dv), at_least(m, kBq), at_least(l, kBq), at_least(jmax, kBq);
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t qb = t % qblocks, bh = t / qblocks, h = bh % Hq, b = bh / Hq;
      const std::int64_t kvh = h / group;
      const std::int64_t i0 = qb * kBq, nq = std::min(kBq, Sq - i0);
      const T* qp = Q + ((b * Hq + h) * Sq + i0) * D;
      for (std::int64_t i = 0; i < nq * D; ++i) q[i] = static_cast<float>(to_acc(qp[i])) * a.scale;
      std::fill(acc.begin(), acc.begin() + nq * Dv, 0.0f);
      std::fill(m.begin(), m.begin() + nq, -std::numeric_limits<float>::infinity());
      std::fill(l.begin(), l.begin() + nq, 0.0f);
      const std::int64_t kend = a.causal ? std::min(Skv, i0 + nq + shift) : Skv;
      for (std::int64_t j0 = 0; j0 < kend; j0 += kBk) {
        const std::int64_t nk = std::min(kBk, kend - j0);
        const T* kp = K + b * a.k.strides[0] + kvh * a.k.strides[1] + j0 * D;
        const T* vp = V + b * a.v.strides[0] + kvh * a.v.strides[1] + j0 * Dv;
        for (std::int64_t j = 0; j < nk; ++j)
          for (std::int64_t d = 0; d < D; ++d) kt[d * nk + j] = static_cast<float>(to_acc(kp[j * D + d]));
        for (std::int64_t i = 0; i < nk * Dv; ++i) vb[i] = static_cast<float>(to_acc(vp[i]));
        for (std::int64_t i = 0; i < nq; ++i) jmax[i] = a.causal ? i0 + i + shift + 1 - j0 : nk;
        simd::attention_tile_f32(q.data(), nq, kt.data(), nk, vb.data(), D, Dv, jmax.data(), s.data(), m.data(),
                                 l.data(), acc.data());
      }
      T* op = O + ((b * Hq + h) * Sq + i0) * Dv;
      for (std::int64_t i = 0; i < nq; ++i) {
        // A query that sees no key (BottomRight with Sq > Skv) attends to nothing: zeros.
        const float inv = l[i] > 0.0f ? 1.0f / l[i] : 0.0f;
        for (std::int64_t d = 0; d < Dv; ++d) op[i * Dv + d] = from_acc<T>(acc[i * Dv + d] * inv);
      }
    }
  });
}

}  // namespace

void attention(const rt::AttentionArgs& a) {
  visit_float_dtype(a.q.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, double>) {
      throw Error(ErrorCode::Unsupported, "f64 attention", {.op = "attention"});
    } else {
      run<T>(a);
    }
  });
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Attention, entry<rt::OpKind::Attention, attention>>(
      rt::DTypes{DType::F32, DType::F16, DType::BF16});
});
}  // namespace

}  // namespace torsh::cpu
