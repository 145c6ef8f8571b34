// Flash-style attention: each task owns a block of queries of one (batch,
// head), walks the keys in blocks with an online softmax (running max and
// sum), and never stores the Sq x Skv score matrix. Extra memory per thread is
// O(block^2 + block * Dv).
#include <cmath>
#include <limits>
#include <vector>

#include "device.hpp"
#include "thread_pool.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

constexpr std::int64_t kBq = 64, kBk = 128;

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
  const std::int64_t shift = Skv - Sq;  // causal: query i sees keys j <= i + shift
  const std::int64_t tasks = B * Hq * qblocks;
  pool().parallel_for(tasks, 1, [&](std::int64_t t0, std::int64_t t1) {
    std::vector<float> q(kBq * D), kb(kBk * D), vb(kBk * Dv), s(kBq * kBk), acc(kBq * Dv), m(kBq), l(kBq);
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t qb = t % qblocks, bh = t / qblocks, h = bh % Hq, b = bh / Hq;
      const std::int64_t kvh = h / group;
      const std::int64_t i0 = qb * kBq, nq = std::min(kBq, Sq - i0);
      const T* qp = Q + ((b * Hq + h) * Sq + i0) * D;
      // Scale folded into q once.
      for (std::int64_t i = 0; i < nq * D; ++i) q[i] = static_cast<float>(to_acc(qp[i])) * a.scale;
      std::fill(acc.begin(), acc.end(), 0.0f);
      std::fill(m.begin(), m.end(), -std::numeric_limits<float>::infinity());
      std::fill(l.begin(), l.end(), 0.0f);
      const std::int64_t kend = a.causal ? std::min(Skv, i0 + nq + shift) : Skv;
      for (std::int64_t j0 = 0; j0 < kend; j0 += kBk) {
        const std::int64_t nk = std::min(kBk, kend - j0);
        const T* kp = K + ((b * Hkv + kvh) * Skv + j0) * D;
        const T* vp = V + ((b * Hkv + kvh) * Skv + j0) * Dv;
        for (std::int64_t i = 0; i < nk * D; ++i) kb[i] = static_cast<float>(to_acc(kp[i]));
        for (std::int64_t i = 0; i < nk * Dv; ++i) vb[i] = static_cast<float>(to_acc(vp[i]));
        for (std::int64_t i = 0; i < nq; ++i) {
          float* srow = s.data() + i * kBk;
          const float* qi = q.data() + i * D;
          const std::int64_t jmax = a.causal ? std::min(nk, i0 + i + shift + 1 - j0) : nk;
          float rowmax = -std::numeric_limits<float>::infinity();
          for (std::int64_t j = 0; j < jmax; ++j) {
            const float* kj = kb.data() + j * D;
            float dot = 0.0f;
            for (std::int64_t d = 0; d < D; ++d) dot += qi[d] * kj[d];
            srow[j] = dot;
            rowmax = std::max(rowmax, dot);
          }
          if (jmax <= 0) continue;
          const float mnew = std::max(m[i], rowmax);
          const float corr = std::exp(m[i] - mnew);
          float rowsum = 0.0f;
          for (std::int64_t j = 0; j < jmax; ++j) {
            srow[j] = std::exp(srow[j] - mnew);
            rowsum += srow[j];
          }
          l[i] = l[i] * corr + rowsum;
          m[i] = mnew;
          float* ai = acc.data() + i * Dv;
          for (std::int64_t d = 0; d < Dv; ++d) ai[d] *= corr;
          for (std::int64_t j = 0; j < jmax; ++j) {
            const float p = srow[j];
            const float* vj = vb.data() + j * Dv;
            for (std::int64_t d = 0; d < Dv; ++d) ai[d] += p * vj[d];
          }
        }
      }
      T* op = O + ((b * Hq + h) * Sq + i0) * Dv;
      for (std::int64_t i = 0; i < nq; ++i) {
        // A query that sees no key (causal with Sq > Skv) divides 0 by 0: NaN, as PyTorch.
        const float inv = 1.0f / l[i];
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

}  // namespace torsh::cpu
