// Flash-style attention: each task owns a block of queries of one (batch,
// head), walks the keys in blocks with an online softmax (running max and
// sum), and never stores the Sq x Skv score matrix. Extra memory per thread is
// O(block^2 + block * D). The tile math is in simd.cpp (AVX-512: the row
// bodies of simd_avx512.cpp, as split-K uses).
//
// Decoding (a few query rows per key/value head against a long cache) takes
// the split-K path instead: the query blocks would be one row each, a task
// per query head would read its group's keys once per head, and a handful of
// heads cannot keep the threads busy. There each task owns a range of keys of
// one (batch, key/value head) and every query row of that head group, reads
// each key and value row once (widened in L1-sized chunks from the cache's
// own dtype), and leaves a partial softmax (max, sum, unnormalised output);
// the partials of a head's ranges are then combined. A q8_0 cache
// (AttentionArgs::kv_q8_0) is dequantized chunk by chunk the same way.
//
// A sliding window (AttentionArgs::window) starts each row's keys later: both
// paths begin at the first key any row of the task sees, and a chunk where
// some row's window begins inside it attends row by row from each row's first
// key (the other chunks, whole, as before). The soft-cap bends the scores in
// the simd kernels, between the scores and the softmax.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "device.hpp"
#include "platform/isa.hpp"
#include "platform/thread_pool.hpp"
#include "simd/simd.hpp"
#include "torsh/core/quant.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

constexpr std::int64_t kBq = 64, kBk = 256;
// Split-K: at most this many query rows per key/value head (a head group's
// rows of a few tokens), keys widened this many at a time, and each split at
// least this many keys.
constexpr std::int64_t kSplitKMaxRows = 32, kChunk = 256, kMinSplitKeys = 128;

// One operand of keys or values as the cache stores them: rows of f32, f16
// or bf16 values, or of q8_0 blocks (a quantized cache), packed (the op
// layer's condition), addressed in bytes.
struct KvRows {
  const char* base;
  std::int64_t bs, hs, rs;  // batch, head and row strides in bytes
  DType dt;                 // F32, F16, BF16; U8: q8_0 blocks
  std::int64_t width;       // values per row

  KvRows(const rt::TensorArg& t, std::int64_t values) : dt(t.dtype), width(values) {
    const auto es = static_cast<std::int64_t>(dtype_size(t.dtype));
    base = static_cast<const char*>(t.buffer->host_ptr()) + t.offset * es;
    bs = t.strides[0] * es, hs = t.strides[1] * es, rs = t.strides[2] * es;
  }
  const char* row(std::int64_t b, std::int64_t h, std::int64_t j) const { return base + b * bs + h * hs + j * rs; }
  // n rows from `first` as f32: in place for f32, else widened (dequantized) into buf.
  const float* f32(const char* first, std::int64_t n, std::vector<float>& buf) const {
    if (dt == DType::F32) return reinterpret_cast<const float*>(first);
    if (static_cast<std::int64_t>(buf.size()) < n * width) buf.resize(static_cast<std::size_t>(n * width));
    const auto* h = reinterpret_cast<const std::uint16_t*>(first);
    if (dt == DType::F16)
      simd::widen_f16(h, buf.data(), n * width);
    else if (dt == DType::BF16)
      simd::widen_bf16(h, buf.data(), n * width);
    else
      for (std::int64_t r = 0; r < n; ++r)
        dequantize_row(QuantFormat::Q8_0, first + r * rs, buf.data() + r * width, width);
    return buf.data();
  }
};

// simd::attention_rows over a chunk of nk stored key and value rows: read as
// stored (f32, f16, bf16), or for a q8_0 cache its first `used` rows (those
// some query sees) dequantized into kbuf / vbuf.
void attend_rows(const float* q, std::int64_t rows, const KvRows& K, const KvRows& V, const char* kc, const char* vc,
                 bool q8_0, std::int64_t nk, std::int64_t used, const std::int64_t* jmax, float* s, float* m, float* l,
                 float* acc, std::vector<float>& kbuf, std::vector<float>& vbuf, float softcap) {
  const std::int64_t D = K.width, Dv = V.width;
  if (q8_0)
    simd::attention_rows(q, rows, K.f32(kc, used, kbuf), V.f32(vc, used, vbuf), DType::F32, nk, D, Dv, jmax, s, m, l,
                         acc, false, softcap);
  else
    simd::attention_rows(q, rows, kc, vc, K.dt, nk, D, Dv, jmax, s, m, l, acc, false, softcap);
}

// A chunk of nk keys from key row c0 where row r sees keys [jmin[r], jmax[r])
// of it and some window starts inside (jmin > 0): each row attends alone to
// its own keys, from its first. q: the rows' pre-scaled queries; m, l, acc
// their running softmax.
void attend_windowed(const float* q, std::int64_t rows, const KvRows& K, const KvRows& V, std::int64_t b,
                     std::int64_t kvh, std::int64_t c0, bool q8_0, const std::int64_t* jmin, const std::int64_t* jmax,
                     float* s, float* m, float* l, float* acc, std::vector<float>& kbuf, std::vector<float>& vbuf,
                     float softcap) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t n = jmax[r] - jmin[r];
    if (n <= 0) continue;
    attend_rows(q + r * K.width, 1, K, V, K.row(b, kvh, c0 + jmin[r]), V.row(b, kvh, c0 + jmin[r]), q8_0, n, n, &n, s,
                m + r, l + r, acc + r * V.width, kbuf, vbuf, softcap);
  }
}

template <class T>
void run_split_k(const rt::AttentionArgs& a) {
  const std::int64_t B = a.q.shape[0], Hq = a.q.shape[1], Sq = a.q.shape[2], D = a.q.shape[3];
  const std::int64_t Hkv = a.k.shape[1], Skv = a.k.shape[2], Dv = a.out.shape[3];
  const std::int64_t group = Hq / Hkv, rows = group * Sq;
  const std::int64_t shift = a.align == rt::CausalAlign::BottomRight ? Skv - Sq : 0;
  // The keys any row sees; row (g, i) sees keys j < limit(i).
  const std::int64_t kend = a.causal ? std::clamp<std::int64_t>(Sq + shift, 0, Skv) : Skv;
  auto limit = [&](std::int64_t i) { return a.causal ? std::min(Skv, i + shift + 1) : Skv; };
  // Row i's first key: later rows' windows start later, so row 0's is the task's.
  auto first = [&](std::int64_t i) { return a.window > 0 ? std::max<std::int64_t>(0, i + shift - a.window + 1) : 0; };
  const std::int64_t kbeg = std::min(first(0), kend);
  const std::int64_t heads = B * Hkv;
  const std::int64_t threads = pool().size();
  // The fewest splits that give every thread the same number of equal tasks
  // (at least one), none shorter than kMinSplitKeys; failing that, about
  // four tasks per thread.
  const std::int64_t most = std::max<std::int64_t>(1, (kend - kbeg) / kMinSplitKeys);
  std::int64_t splits = std::min(most, std::max<std::int64_t>(1, (4 * threads + heads - 1) / heads));
  for (std::int64_t sp = 1; sp <= most; ++sp)
    if (heads * sp >= threads && heads * sp % threads == 0) {
      splits = sp;
      break;
    }
  const std::int64_t per = ((std::max<std::int64_t>(kend - kbeg, 1) + splits - 1) / splits + 15) / 16 * 16;
  splits = std::max<std::int64_t>(1, (kend - kbeg + per - 1) / per);
  // Per (head, split): rows x (max, sum, Dv outputs).
  const std::int64_t slot = rows * (Dv + 2);
  std::vector<float> part(static_cast<std::size_t>(heads * splits * slot));
  const T* Q = data_of<T>(a.q);
  const KvRows K(a.k, D), V(a.v, Dv);
  T* O = data_of<T>(a.out);
  pool().parallel_for(heads * splits, 1, [&](std::int64_t t0, std::int64_t t1) {
    thread_local std::vector<float> q, s, kb, vb;
    thread_local std::vector<std::int64_t> jmin, jmax;
    auto at_least = [](auto& v, std::int64_t n) {
      if (static_cast<std::int64_t>(v.size()) < n) v.resize(static_cast<std::size_t>(n));
    };
    at_least(q, rows * D), at_least(s, rows * kChunk), at_least(jmin, rows), at_least(jmax, rows);
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t split = t % splits, bh = t / splits, kvh = bh % Hkv, b = bh / Hkv;
      const std::int64_t j0 = kbeg + split * per, j1 = std::min(kend, j0 + per);
      for (std::int64_t g = 0; g < group; ++g)
        for (std::int64_t i = 0; i < Sq; ++i) {
          const T* qp = Q + ((b * Hq + kvh * group + g) * Sq + i) * D;
          float* qr = q.data() + (g * Sq + i) * D;
          for (std::int64_t d = 0; d < D; ++d) qr[d] = static_cast<float>(to_acc(qp[d])) * a.scale;
        }
      float* m = part.data() + t * slot;
      float* l = m + rows;
      float* acc = l + rows;
      std::fill(m, m + rows, -std::numeric_limits<float>::infinity());
      std::fill(l, l + rows + rows * Dv, 0.0f);
      for (std::int64_t c0 = j0; c0 < j1; c0 += kChunk) {
        const std::int64_t nk = std::min(kChunk, j1 - c0);
        std::int64_t seen = 0;
        bool windowed = false;
        for (std::int64_t r = 0; r < rows; ++r) {
          jmax[r] = std::clamp<std::int64_t>(limit(r % Sq) - c0, 0, nk);
          jmin[r] = std::clamp<std::int64_t>(first(r % Sq) - c0, 0, nk);
          seen = std::max(seen, jmax[r]);
          windowed |= jmin[r] > 0;
        }
        if (seen == 0) break;  // causal: no row sees this chunk or any later one
        if (windowed) {
          attend_windowed(q.data(), rows, K, V, b, kvh, c0, a.kv_q8_0, jmin.data(), jmax.data(), s.data(), m, l, acc,
                          kb, vb, a.softcap);
          continue;
        }
        // Packed rows (the op layer's condition): a chunk is nk contiguous rows,
        // read as stored (f32, f16, bf16) or dequantized in L1-sized chunks (q8_0).
        attend_rows(q.data(), rows, K, V, K.row(b, kvh, c0), V.row(b, kvh, c0), a.kv_q8_0, nk, seen, jmax.data(),
                    s.data(), m, l, acc, kb, vb, a.softcap);
      }
    }
  });
  // Combine each row's splits: rescale to the largest max, sum, normalise.
  pool().parallel_for(heads * rows, 8, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t hr = r0; hr < r1; ++hr) {
      const std::int64_t r = hr % rows, bh = hr / rows, kvh = bh % Hkv, b = bh / Hkv;
      const std::int64_t g = r / Sq, i = r % Sq;
      const float* base = part.data() + bh * splits * slot;
      float mx = -std::numeric_limits<float>::infinity();
      for (std::int64_t sp = 0; sp < splits; ++sp)
        if (base[sp * slot + rows + r] > 0.0f) mx = std::max(mx, base[sp * slot + r]);
      T* op = O + ((b * Hq + kvh * group + g) * Sq + i) * Dv;
      float sum = 0.0f;
      thread_local std::vector<float> out;
      if (static_cast<std::int64_t>(out.size()) < Dv) out.resize(static_cast<std::size_t>(Dv));
      std::fill(out.begin(), out.begin() + Dv, 0.0f);
      for (std::int64_t sp = 0; sp < splits; ++sp) {
        const float* pm = base + sp * slot;
        const float ls = pm[rows + r];
        if (!(ls > 0.0f)) continue;  // this split held no key the row sees
        const float w = std::exp(pm[r] - mx);
        sum += ls * w;
        const float* pa = pm + 2 * rows + r * Dv;
        for (std::int64_t d = 0; d < Dv; ++d) out[static_cast<std::size_t>(d)] += w * pa[d];
      }
      // A query that sees no key (BottomRight with Sq > Skv) attends to nothing: zeros.
      const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
      for (std::int64_t d = 0; d < Dv; ++d) op[d] = from_acc<T>(out[static_cast<std::size_t>(d)] * inv);
    }
  });
}

template <class T>
void run(const rt::AttentionArgs& a) {
  const std::int64_t B = a.q.shape[0], Hq = a.q.shape[1], Sq = a.q.shape[2], D = a.q.shape[3];
  const std::int64_t Hkv = a.k.shape[1], Skv = a.k.shape[2], Dv = a.out.shape[3];
  const std::int64_t group = Hq / Hkv;
  const std::int64_t qblocks = (Sq + kBq - 1) / kBq;
  const T* Q = data_of<T>(a.q);
  const KvRows K(a.k, D), V(a.v, Dv);
  T* O = data_of<T>(a.out);
  // causal: query i sees keys j <= i + shift
  const std::int64_t shift = a.align == rt::CausalAlign::BottomRight ? Skv - Sq : 0;
  // With AVX-512 the row bodies (simd::attention_rows) run a 2048-token causal
  // head at ~3x the transposed tile's speed; the portable row loops trail it
  // (src/backends/cpu/README.md, attention).
  const bool rows_kernels = isa_usable(Isa::Avx512) && D % 16 == 0 && D <= 256 && Dv % 16 == 0;
  // Causal tiles near the diagonal cost more; interleave block order so both threads get a mix.
  pool().parallel_for(B * Hq * qblocks, 1, [&](std::int64_t t0, std::int64_t t1) {
    // Per thread and kept: a decode step calls this once per layer with one
    // query row, where allocating and zeroing ~200 KB each time cost as much
    // as the attention itself.
    thread_local std::vector<float> q, kt, kw, vb, s, acc, m, l;
    thread_local std::vector<std::int64_t> jmin, jmax;
    auto at_least = [](auto& v, std::int64_t n) {
      if (static_cast<std::int64_t>(v.size()) < n) v.resize(static_cast<std::size_t>(n));
    };
    at_least(q, kBq * D), at_least(vb, kBk * Dv), at_least(s, kBq * kBk);
    if (!rows_kernels) at_least(kt, D * kBk);  // the transposed tile's keys
    at_least(acc, kBq * Dv), at_least(m, kBq), at_least(l, kBq), at_least(jmin, kBq), at_least(jmax, kBq);
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
      // The block's first key: its first row's window start (later rows' start later).
      const std::int64_t kbeg = a.window > 0 ? std::clamp<std::int64_t>(i0 + shift - a.window + 1, 0, kend) : 0;
      for (std::int64_t j0 = kbeg; j0 < kend; j0 += kBk) {
        const std::int64_t nk = std::min(kBk, kend - j0);
        bool windowed = false;
        for (std::int64_t i = 0; i < nq; ++i) {
          jmax[i] = a.causal ? std::clamp<std::int64_t>(i0 + i + shift + 1 - j0, 0, nk) : nk;
          jmin[i] = a.window > 0 ? std::clamp<std::int64_t>(i0 + i + shift - a.window + 1 - j0, 0, nk) : 0;
          windowed |= jmin[i] > 0;
        }
        const char *kc = K.row(b, kvh, j0), *vc = V.row(b, kvh, j0);
        if (windowed) {
          attend_windowed(q.data(), nq, K, V, b, kvh, j0, a.kv_q8_0, jmin.data(), jmax.data(), s.data(), m.data(),
                          l.data(), acc.data(), kw, vb, a.softcap);
          continue;
        }
        if (rows_kernels) {  // the AVX-512 row bodies read the keys as stored, 16 per dot-product group
          attend_rows(q.data(), nq, K, V, kc, vc, a.kv_q8_0, nk, nk, jmax.data(), s.data(), m.data(), l.data(),
                      acc.data(), kw, vb, a.softcap);
          continue;
        }
        const float* kf = K.f32(kc, nk, kw);
        for (std::int64_t j = 0; j < nk; ++j)
          for (std::int64_t d = 0; d < D; ++d) kt[d * nk + j] = kf[j * D + d];
        simd::attention_tile_f32(q.data(), nq, kt.data(), nk, V.f32(vc, nk, vb), D, Dv, jmax.data(), s.data(), m.data(),
                                 l.data(), acc.data(), a.softcap);
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
      const std::int64_t group = a.q.shape[1] / a.k.shape[1];
      if (group * a.q.shape[2] <= kSplitKMaxRows)
        run_split_k<T>(a);
      else
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
