// CSR @ dense (rt::SparseMatmulArgs). Rows are dealt to threads in runs of
// equal nonzero counts (a binary search of indptr), so power-law rows do not
// leave one thread with the long ones. SpMV (n = 1) on Intel's cores reads x
// by vector gathers (spmv_gather.hpp) where the matrix is within a quarter of
// the last-level cache; elsewhere it is a scalar loop with
// four partial sums per row: with one, each nonzero waits for the previous
// add. What limits it is the matrix's streams, not x (x confined to a few KB
// runs hardly faster than x at random). So the values and indices are
// prefetched ahead (kStreamAhead), and x is not: with the streams prefetched,
// prefetching x gains nothing. Non-temporal prefetches, gathers on AMD's
// cores and an FMA clone of this loop are no faster either
// (src/backends/cpu/README.md, sparse_matmul). SpMM (spmm_rows) is
// vectorised over n in the target_clones loops.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "device.hpp"
#include "platform/thread_pool.hpp"
#include "platform/tuning.hpp"
#include "simd/simd.hpp"
#include "simd/stream_store.hpp"
#include "spmv_gather.hpp"
#include "torsh/runtime/autotune.hpp"

namespace torsh::cpu {
namespace {

// How far ahead (nonzeros) the values and indices are prefetched: with the
// hardware's stream prefetch alone one core reads them too slowly.
// Built in: 1.5 KB of f32 values ahead, the best of 0.5-3 KB
// (src/backends/cpu/README.md, sparse_matmul). With auto-tuning on, the
// distance is measured once per machine and thread count instead (stream_ahead()).
inline constexpr std::int64_t kStreamAhead = 384;
// The built-in distance first: a disabled tuner takes the first candidate.
inline constexpr std::int64_t kAheadCandidates[] = {kStreamAhead, 0, 128, 256, 768, 1536};

template <class I, class T>
inline void spmv_rows(const I* indptr, const I* indices, const T* values, const T* x, T* out, std::int64_t r0,
                      std::int64_t r1, std::int64_t ahead) {
  // The prefetch runs on across row ends: most rows of a power-law matrix
  // are shorter than the distance. A distance of 0 leaves the streams to the
  // hardware prefetcher.
  const std::int64_t last = ahead > 0 ? indptr[r1] : 0;
  for (std::int64_t r = r0; r < r1; ++r) {
    std::int64_t j = indptr[r];
    const std::int64_t e = indptr[r + 1];
    // Four partial sums: one sum would wait an add's latency per nonzero.
    T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (; j + 4 <= e; j += 4) {
      if (j + ahead < last) {
        __builtin_prefetch(&values[j + ahead]);
        __builtin_prefetch(&indices[j + ahead]);
      }
      s0 += values[j] * x[indices[j]];
      s1 += values[j + 1] * x[indices[j + 1]];
      s2 += values[j + 2] * x[indices[j + 2]];
      s3 += values[j + 3] * x[indices[j + 3]];
    }
    for (; j < e; ++j) s0 += values[j] * x[indices[j]];
    out[r] = (s0 + s1) + (s2 + s3);
  }
}

// Whether SpMV of nnz nonzeros runs the gather loop: on a CPU where it is
// the faster (spmv_gather.hpp), for a matrix whose values and indices take
// at most a quarter of the last-level cache; from memory the scalar loop ran
// faster.
template <class I, class T>
bool spmv_gathers(std::int64_t nnz) {
  static const bool usable = spmv_gather_level() != nullptr;
  return usable && nnz <= stream_threshold_bytes() / 4 / static_cast<std::int64_t>(sizeof(I) + sizeof(T));
}

// Rows [r0, r1) of SpMV, by the gather loop or the scalar one.
template <class I, class T>
void spmv_chunk(bool gather, const I* indptr, const I* indices, const T* values, const T* x, T* out, std::int64_t r0,
                std::int64_t r1, std::int64_t ahead) {
  if (gather)
    spmv_gather(indptr, indices, values, x, out, r0, r1, ahead);
  else
    spmv_rows(indptr, indices, values, x, out, r0, r1, ahead);
}

// Columns [c0, c0 + W) of one output row: the sums stay in registers over
// the row's nonzeros.
template <int W, class I, class T>
inline void spmm_block(const I* indices, const T* values, std::int64_t j0, std::int64_t j1, const T* x, std::int64_t n,
                       std::int64_t c0, T* o) {
  T acc[W] = {};
  for (std::int64_t j = j0; j < j1; ++j) {
    const T v = values[j];
    const T* xr = x + static_cast<std::int64_t>(indices[j]) * n + c0;
#pragma GCC unroll 32
    for (int c = 0; c < W; ++c) acc[c] += v * xr[c];
  }
#pragma GCC unroll 32
  for (int c = 0; c < W; ++c) o[c0 + c] = acc[c];
}

// SpMM. Narrow x (rows of at most 128 bytes: n <= 32 f32): each output row
// in blocks of 32, 16 and 8 columns whose sums stay in registers over the
// row's nonzeros, and the last few columns added row by row as below. Wider
// x: o += value * x's row, one nonzero at a time, as blocks would re-read the
// row once per block and lose (src/backends/cpu/README.md, sparse_matmul).
template <class I, class T>
inline void spmm_rows(const I* indptr, const I* indices, const T* values, const T* x, T* out, std::int64_t n,
                      std::int64_t r0, std::int64_t r1) {
  constexpr int kWide = 128 / sizeof(T), kMid = 64 / sizeof(T), kNarrow = 32 / sizeof(T);
  const bool blocks = n <= kWide;
  for (std::int64_t r = r0; r < r1; ++r) {
    T* o = out + r * n;
    const std::int64_t j0 = indptr[r], j1 = indptr[r + 1];
    std::int64_t c0 = 0;
    if (blocks) {
      if (c0 + kWide <= n) spmm_block<kWide>(indices, values, j0, j1, x, n, c0, o), c0 += kWide;
      if (c0 + kMid <= n) spmm_block<kMid>(indices, values, j0, j1, x, n, c0, o), c0 += kMid;
      if (c0 + kNarrow <= n) spmm_block<kNarrow>(indices, values, j0, j1, x, n, c0, o), c0 += kNarrow;
    }
    if (c0 == n) continue;
    std::fill(o + c0, o + n, T(0));
    for (std::int64_t j = j0; j < j1; ++j) {
      const T v = values[j];
      const T* xr = x + static_cast<std::int64_t>(indices[j]) * n;
      for (std::int64_t c = c0; c < n; ++c) o[c] += v * xr[c];
    }
  }
}

// One per index and value type: target_clones does not apply to a template,
// so these overloads (each cloned per x86 level) instantiate spmm_rows.
TORSH_SIMD_CLONES void spmm(const std::int32_t* p, const std::int32_t* c, const float* v, const float* x, float* y,
                            std::int64_t n, std::int64_t r0, std::int64_t r1) {
  spmm_rows(p, c, v, x, y, n, r0, r1);
}
TORSH_SIMD_CLONES void spmm(const std::int64_t* p, const std::int64_t* c, const float* v, const float* x, float* y,
                            std::int64_t n, std::int64_t r0, std::int64_t r1) {
  spmm_rows(p, c, v, x, y, n, r0, r1);
}
TORSH_SIMD_CLONES void spmm(const std::int32_t* p, const std::int32_t* c, const double* v, const double* x, double* y,
                            std::int64_t n, std::int64_t r0, std::int64_t r1) {
  spmm_rows(p, c, v, x, y, n, r0, r1);
}
TORSH_SIMD_CLONES void spmm(const std::int64_t* p, const std::int64_t* c, const double* v, const double* x, double* y,
                            std::int64_t n, std::int64_t r0, std::int64_t r1) {
  spmm_rows(p, c, v, x, y, n, r0, r1);
}

// The prefetch distance measured on this machine: SpMV of a matrix whose
// values and indices are twice the last-level cache (rows of 16 nonzeros at
// random columns of a 512 KB x, as the streams, not x, are what limit it),
// each candidate distance timed (autotune key "spmv_prefetch_ahead").
std::int64_t measure_stream_ahead(int threads) {
  const std::int64_t per_row = 16, cols = std::int64_t{1} << 17;
  const std::int64_t nnz = std::max<std::int64_t>(2 * stream_threshold_bytes() / 8, std::int64_t{1} << 20);
  const std::int64_t rows = nnz / per_row;
  std::vector<std::int32_t> indptr(static_cast<std::size_t>(rows + 1)), indices(static_cast<std::size_t>(nnz));
  std::vector<float> values(static_cast<std::size_t>(nnz), 1.0f), x(static_cast<std::size_t>(cols), 0.5f),
      y(static_cast<std::size_t>(rows));
  std::uint32_t seed = 12345;
  for (std::int64_t r = 0; r <= rows; ++r) indptr[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(r * per_row);
  for (auto& c : indices) {
    seed = seed * 1664525u + 1013904223u;  // a cheap LCG: any spread of columns will do
    c = static_cast<std::int32_t>((seed >> 8) % static_cast<std::uint32_t>(cols));
  }
  const bool gather = spmv_gathers<std::int32_t, float>(nnz);  // the loop a matrix of this size runs
  std::vector<autotune::Candidate> candidates;
  for (const std::int64_t ahead : kAheadCandidates)
    candidates.push_back(
        {"ahead=" + std::to_string(ahead), [&, ahead] {
           pool().parallel_for(rows, (rows + threads - 1) / threads, [&](std::int64_t r0, std::int64_t r1) {
             spmv_chunk(gather, indptr.data(), indices.data(), values.data(), x.data(), y.data(), r0, r1, ahead);
           });
         }});
  const std::string pick =
      autotune::choose({tuning_device_key(threads), "spmv_prefetch_ahead",
                        "llc=" + std::to_string(stream_threshold_bytes() >> 20) + "MiB", DType::F32},
                       candidates, 7);
  return std::stoll(pick.substr(pick.find('=') + 1));
}

// The distance SpMV prefetches at: built in, or measured once per thread count
// when auto-tuning is on (then read from the cache in later processes).
// One word holds the thread count and its distance, so a reader never pairs
// one count with another count's distance.
std::int64_t stream_ahead() {
  if (!autotune::enabled()) return kStreamAhead;
  static std::atomic<std::uint64_t> decided{0};  // threads << 32 | distance; 0: none yet
  const auto threads = static_cast<std::uint32_t>(pool().size());
  std::uint64_t d = decided.load(std::memory_order_relaxed);
  if (d >> 32 != threads) {
    d = std::uint64_t{threads} << 32 | static_cast<std::uint32_t>(measure_stream_ahead(static_cast<int>(threads)));
    decided.store(d, std::memory_order_relaxed);
  }
  return static_cast<std::int64_t>(d & 0xffffffffu);
}

template <class I, class T>
void run(const rt::SparseMatmulArgs& a) {
  const I* p = data_of<I>(a.indptr);
  const I* c = data_of<I>(a.indices);
  const T* v = data_of<T>(a.values);
  const T* x = data_of<T>(a.x);
  T* y = data_of<T>(a.out);
  const std::int64_t rows = a.rows, n = a.n, nnz = p[rows];
  // Work per row: its nonzeros times n, plus a little for the row itself.
  const std::int64_t work = (nnz + rows) * n;
  const std::int64_t chunks = std::min<std::int64_t>(rows, work < (1 << 15) ? 1 : 8 * pool().size());
  const std::int64_t ahead = n == 1 ? stream_ahead() : 0;
  const bool gather = n == 1 && spmv_gathers<I, T>(nnz);
  pool().parallel_for(chunks, 1, [&](std::int64_t c0, std::int64_t c1) {
    // Chunk i starts at the first row whose nonzeros (plus row count) reach i / chunks of the total.
    const auto start = [&](std::int64_t i) -> std::int64_t {
      if (i == 0) return 0;
      if (i == chunks) return rows;
      const std::int64_t target = (nnz + rows) * i / chunks;
      std::int64_t lo = 0, hi = rows;
      while (lo < hi) {
        const std::int64_t mid = (lo + hi) / 2;
        if (static_cast<std::int64_t>(p[mid]) + mid < target)
          lo = mid + 1;
        else
          hi = mid;
      }
      return lo;
    };
    const std::int64_t r0 = start(c0), r1 = start(c1);
    if (r0 >= r1) return;
    if (n == 1)
      spmv_chunk(gather, p, c, v, x, y, r0, r1, ahead);
    else
      spmm(p, c, v, x, y, n, r0, r1);
  });
}

void sparse_matmul(const rt::SparseMatmulArgs& a) {
  const bool i64 = a.indptr.dtype == DType::I64;
  if (a.out.dtype == DType::F64)
    i64 ? run<std::int64_t, double>(a) : run<std::int32_t, double>(a);
  else
    i64 ? run<std::int64_t, float>(a) : run<std::int32_t, float>(a);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::SparseMatmul, entry<rt::OpKind::SparseMatmul, sparse_matmul>>(rt::DTypes{DType::F32, DType::F64});
});

}  // namespace
}  // namespace torsh::cpu
