#pragma once
// The CPU FFT engine: mixed-radix Stockham (autosort, so no bit reversal) on
// split real / imaginary arrays, radices 8, 4, 2, 3, 5, 7 with their own
// butterflies and any other prime up to kMaxGenericRadix by a direct DFT;
// lengths with a larger prime factor go through Bluestein's chirp-z transform
// on a power-of-two plan. A plan holds the factorisation and every twiddle
// (computed in double, rounded once), is immutable once built and shared
// through a per-(length, dtype) cache.
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace torsh::cpu::fft {

inline constexpr int kMaxGenericRadix = 31;
// Values left between arrays that one stage reads and writes. Power-of-two
// lengths would otherwise put them all at one offset modulo 4 KiB, where a
// load that follows a store to another array stalls as if it depended on it
// (4K aliasing); the padding puts each array on its own cache line offset.
inline constexpr std::int64_t kPad = 16;
// Columns per four-step block: a cache line of each of re and im per row.
template <class T>
inline constexpr std::int64_t kBlock = 64 / sizeof(T);
// The vector stages run lengths up to this many bytes of values (by vector
// width): their first stage reads `lanes` streams n / lanes apart, and past
// that size they and their twiddles conflict in the L1 cache and run slower
// than the scalar stages (src/backends/cpu/README.md, fft_plan).
inline constexpr std::int64_t vector_max_bytes(int vector_bytes) {
  return vector_bytes >= 64 ? std::int64_t{64} << 10 : std::int64_t{32} << 10;
}
// Lengths from here up (with no prime factor above kMaxGenericRadix) run the four-step form.
inline constexpr std::int64_t kFourStepMin = std::int64_t{1} << 17;

// The p offset that lane l of a vector stage's first-stage load from pairs
// holds, for vectors of `lanes` values of `value_bytes` each. At 256 bits
// the pairs split into re and im with in-lane shuffles only (vshufps for
// floats, vunpcklpd / vunpckhpd for doubles), which leave p out of order;
// the first stage's twiddles are stored in that order and its transposed
// rows stored to where their p belongs, so putting p back in order costs
// no shuffle. 512 bits loads in order.
constexpr int pair_lane_order(int lanes, int value_bytes, int l) {
  if (lanes == 8 && value_bytes == 4) return (l / 4) * 2 + (l % 4 / 2) * 4 + l % 2;  // 0 1 4 5 2 3 6 7
  if (lanes == 4 && value_bytes == 8) return (l % 2) * 2 + l / 2;                    // 0 2 1 3
  return l;
}
constexpr bool pair_lanes_in_order(int lanes, int value_bytes) {
  for (int l = 0; l < lanes; ++l)
    if (pair_lane_order(lanes, value_bytes, l) != l) return false;
  return true;
}

// The stages that fuse (fft_vector_body.hpp: fused_stages and
// first_fused_stages): radices 4 and 8, through a block of at most
// kFuseBlockBytes a part (re, im) on the stack: R W vectors for the first
// stage and stage 1 (whose groups must come in whole runs of W, and which
// must not be the last), R1 R2 vectors for a vertical pair.
inline constexpr int kFuseBlockBytes = 4096;
constexpr bool fusible_radix(int r) { return r == 4 || r == 8; }
constexpr bool fusible_first(int radix1, std::int64_t len1, int lanes, int vector_bytes) {
  return fusible_radix(radix1) && len1 != radix1 && (len1 / radix1) % lanes == 0 &&
         radix1 * lanes * vector_bytes <= kFuseBlockBytes;
}
constexpr bool fusible_pair(int radix_a, int radix_b, int vector_bytes) {
  return fusible_radix(radix_a) && fusible_radix(radix_b) && radix_a * radix_b * vector_bytes <= kFuseBlockBytes;
}

template <class T>
struct Plan {
  std::int64_t n = 0;
  // Stockham stages in order: radix r, sub-length L (the stage splits
  // sequences of length L, stride s = n / L, into r of length L / r).
  struct Stage {
    int radix = 0;
    std::int64_t len = 0;
    std::int64_t stride = 0;
    // w_L^(p * k) for k in [1, radix), p in [0, L / radix): k-major, so the
    // first stage (stride 1, p innermost) reads them contiguously.
    std::vector<T> tw_re, tw_im;
    // A vector plan's first stage reading pairs: tw_re / tw_im with p in each
    // run of `lanes` in the order the pair loads leave the values in
    // (pair_lane_order); empty where that order is p's own.
    std::vector<T> pair_tw_re, pair_tw_im;
    // A vector plan's twiddles again, p-major: for each p the (re, im) of
    // w_L^(p k), k in [1, radix). A vertical stage broadcasts them from one
    // pointer per p at fixed offsets, where the k-major table needs a
    // pointer per k (and GCC, short of registers, spilled those pointers
    // and the broadcasts hoisted out of the inner loop).
    std::vector<T> tw_by_p;
    // cos / sin(2 pi j k / radix) for the odd butterflies, [j][k].
    std::vector<T> root_cos, root_sin;
  };
  std::vector<Stage> stages;
  bool batchable() const { return !bluestein && !cols; }
  // The vector width (in values of T) the stages were factored for: a first
  // stage of that radix, run by fft_vector.hpp's stages. 0: the scalar stages.
  int lanes = 0;
  // A vector plan's transform from pairs to pairs not over x uses y, split
  // (re at y, im at y + n), as its second intermediate instead of a second
  // work array: from the second stage on it touches two arrays of 2n values
  // instead of three (VectorPlanShape).
  bool y_scratch = false;
  // A vector plan's passes over its buffers, in order: pass k runs
  // stages[start] and, when fused, stages[start + 1] with it, the data
  // between the two staying in a block in L1 instead of a trip through the
  // transform's arrays (fft_vector_body.hpp, fused_stages and
  // first_fused_stages). Lengths the CPU's VectorPlanShape fuses
  // (fuse_min_bytes, fuse_max_bytes) pair the first stage with the second
  // and the vertical stages from the front where fusible_first /
  // fusible_pair allow; the others run one pass a stage (plan_passes).
  struct Pass {
    int start = 0;
    bool fused = false;
  };
  std::vector<Pass> passes;

  // Bluestein: the chirp exp(-i pi k^2 / n) (n values), the power-of-two
  // plan of length m >= 2n - 1, and the transform of the conjugate chirp
  // divided by m (m values).
  bool bluestein = false;
  std::vector<T> chirp_re, chirp_im, kernel_re, kernel_im;
  std::shared_ptr<const Plan<T>> sub;

  // exp(-2 pi i k / 2n) for k in [0, n]: the post-twiddles that turn this
  // plan's transform of a real sequence of length 2n, read as n complex
  // pairs, into that sequence's spectrum. Built on the first call (thread
  // safe), so plans only complex transforms use (and the four-step's and
  // Bluestein's inner plans) never hold them. Up to kHalfTable values they
  // are one table (re, im); longer plans keep w^j for j < kHalfFine (fine)
  // and w^(kHalfFine i) (coarse) and multiply the two per block: the full
  // table of a 2^20-point rfft would be 4 MB read by a pass that moves 12 MB.
  static constexpr std::int64_t kHalfTable = std::int64_t{1} << 16, kHalfFine = 1024;
  struct Half {
    std::vector<T> re, im;
    std::vector<T> fine_re, fine_im, coarse_re, coarse_im;
  };
  const Half& half() const;

  // Four-step (long lengths): n = n1 n2 read as n1 rows of n2; the n2
  // columns are transformed (plan cols, length n1) in blocks of adjacent
  // columns, multiplied by w_n^(k1 j2) (twiddles [k1][j2]), then the n1 rows
  // (plan rows, length n2) in blocks of adjacent rows, written transposed.
  // Each block is a batch of sequences side by side ([len][batch]), so every
  // stage vectorises across the batch, and a block stays in L2.
  // The twiddle w_n^(k1 (c0 + q)) of column c0 + q of block c0 = block * B
  // is block_tw [block][k1] times lane_tw [k1][q]: two tables that stay in
  // cache instead of one of n values streamed from memory.
  std::shared_ptr<const Plan<T>> cols, rows;
  std::vector<T> block_re, block_im, lane_re, lane_im;

  mutable std::once_flag half_once;
  mutable Half half_;

  // The values of T forward()'s work array holds.
  std::int64_t work_size() const { return bluestein ? 2 * sub->n + 4 * kPad + sub->work_size() : 2 * n + 4 * kPad; }
};

// The plan for length n >= 1, cached (thread-safe). flat: never the
// four-step form (the four-step's own column and row plans).
template <class T>
std::shared_ptr<const Plan<T>> plan_for(std::int64_t n, bool flat = false);
// plan_for without touching a reference count when the calling thread's
// last plan is the one asked for (repeated transforms of one length): it
// stays alive until this thread's next plan_for or plan_ref. Any other plan
// is returned through `hold`, which keeps it alive.
template <class T>
const Plan<T>& plan_ref(std::int64_t n, std::shared_ptr<const Plan<T>>& hold);

// The forward DFT (sign -1, unnormalised) of re/im (n values each), in place.
// work holds plan.work_size() values. For the inverse, swap re and im: the
// DFT of the swapped input, swapped back, is the unnormalised inverse.
// threads > 1 splits a four-step plan's column and row blocks over the CPU
// pool (one long transform); a flat plan runs on the calling thread.
template <class T>
void forward(const Plan<T>& plan, T* re, T* im, T* work, int threads);

// The transform of n contiguous (re, im) pairs x into pairs y, multiplied
// by scale, the inverse when asked, for plans without Bluestein: the first
// stage (or the four-step's column blocks) reads the pairs and the last (or
// the row blocks) writes them, so no pass only converts the layout. work
// holds 2 * plan.work_size() values; threads as forward().
template <class T>
void forward_pairs(const Plan<T>& plan, const T* x, T* y, bool inverse, T scale, T* work, int threads);
// The forward transform of pairs x into split re / im (no Bluestein); work
// holds plan.work_size() values; threads as forward().
template <class T>
void forward_from_pairs(const Plan<T>& plan, const T* x, T* re, T* im, T* work, int threads);

// A real line of even length 2 h from the complex transform Z = (re, im) of
// its pairs (x_2t, x_2t+1), h = plan.n: X_k for k in [k0, k1), k < h, as
// pairs at out + k os, times 2 half (half = scale / 2). k = 0 reads re[h]
// and im[h] and gives no meaningful value (X_0 is Z_0's alone).
template <class T>
void untangle_r2c(const Plan<T>& plan, const T* re, const T* im, T* out, std::int64_t os, std::int64_t k0,
                  std::int64_t k1, T half);
// The reverse, for an inverse: Z_k for k in [k0, k1) (k < h) into re / im
// from the Hermitian half spectrum x (pairs x + k xs, k <= h); k = 0 takes
// x_0's imaginary part, which a real signal's spectrum does not have.
template <class T>
void untangle_c2r(const Plan<T>& plan, const T* x, std::int64_t xs, T* re, T* im, std::int64_t k0, std::int64_t k1);
// out[2 t os] = re[t] scale, out[(2 t + 1) os] = im[t] scale for t in [t0, t1).
template <class T>
void interleave_scaled(const T* re, const T* im, T* out, std::int64_t os, std::int64_t t0, std::int64_t t1, T scale);

// bw sequences of pairs side by side, value t of sequence q at pair
// t * stride + q of x: transformed (the inverse when asked), scaled, written
// to y in the same layout; buf holds 4 n kBlock + 8 kPad values, bw <= kBlock.
// For batchable plans.
template <class T>
void forward_side_by_side(const Plan<T>& plan, const T* x, T* y, std::int64_t stride, std::int64_t bw, bool inverse,
                          T scale, T* buf);

// The forward DFT of `batch` sequences stored side by side ([n][batch]: value
// t of sequence b at t * batch + b), in place; work holds 2 * n * batch + 4 kPad values.
// For plans without Bluestein or four-step (plan.batchable()).
template <class T>
void forward_batched(const Plan<T>& plan, T* re, T* im, T* work, std::int64_t batch);

}  // namespace torsh::cpu::fft
