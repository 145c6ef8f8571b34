#pragma once
// Blocked GEMM for the CPU backend, GotoBLAS/BLIS style, written for row-major
// output: C[i, j] is computed by micro-kernels whose vectors run along j.
// Two loop nests (Kernel::resident):
//
//   APanel                                       BPanel
//   for ic in M step MC:   pack Ã (L3)           for jc in N step NC:
//     for pc in K step KC:                         for pc in K step KC:   pack B̃ (L3)
//       for jc in N step NC: pack B̃ (L2)             for ic in M step MC: pack Ã (L2)
//         for ir: one Ã panel in L1                    for jr: one B̃ panel in L1
//           for jr: MR x NR tile += Ã_ir · B̃_jr          for ir: tile += Ã_ir · B̃_jr
//
// Packing absorbs transposes, strides and input dtype (f16 -> f32, bf16 pairs
// for vdpbf16ps), so a micro-kernel only ever reads two contiguous panels.
// Threads share packed blocks and claim blocks of C as work items
// (gemm_blocked.cpp); matrix-vector shapes, tiny products and f64 run
// unpacked (gemm_unpacked.cpp).
#include <cstddef>
#include <cstdint>

#include "torsh/core/dtype.hpp"

namespace torsh::cpu::gemm {

// A matrix operand: element (i, j) lives at p + (i * rs + j * cs) elements of dtype.
struct Mat {
  const void* p = nullptr;
  DType dtype = DType::F32;
  std::int64_t rs = 0, cs = 0;

  // The same matrix starting at element (i, j).
  Mat at(std::int64_t i, std::int64_t j) const {
    return {static_cast<const char*>(p) + (i * rs + j * cs) * static_cast<std::int64_t>(dtype_size(dtype)), dtype, rs,
            cs};
  }
};

// What a micro-kernel reads. F32: A panels are kc x MR floats (one column of
// the MR rows per k), B panels kc x NR floats. Bf16Pairs: k is taken two at a
// time; an A panel is ceil(kc/2) x MR pairs (a[i][2p], a[i][2p+1]) and a B
// panel ceil(kc/2) x NR pairs (b[2p][j], b[2p+1][j]), an odd k padded with 0.
enum class Panel { F32, Bf16Pairs };

// acc = Ã · B̃ over kc for the top-left mr x nr of the tile, then
// c[i * ldc + j] = alpha * acc + beta * c[i * ldc + j]; beta == 0 never reads c.
using TileFn = void (*)(int mr, int nr, std::int64_t kc, const void* a, const void* b, float* c, std::int64_t ldc,
                        float alpha, float beta);

struct Kernel;
// Packs rows [0, rows) x k [0, kc) of `a` into ceil(rows / MR) consecutive A
// panels of a_panel_bytes(kc) each; in a last, partial panel the rows past
// `rows` are left unwritten (kernels for fewer rows never read them).
using PackAFn = void (*)(const Kernel& kern, const Mat& a, std::int64_t rows, std::int64_t kc, void* dst);
// Packs k [0, kc) x columns [0, cols) of `b` into ceil(cols / NR) consecutive
// B panels of b_panel_bytes(kc) each, zero-filling columns past `cols`
// (kernels load whole vectors).
using PackBFn = void (*)(const Kernel& kern, const Mat& b, std::int64_t kc, std::int64_t cols, void* dst);

// Which micro-panel the innermost loop keeps in L1 while it walks the other:
// APanel (GotoBLAS: B block in L2, A block in L3) suits kernels whose B panel
// is the larger, BPanel (BLIS: A block in L2, B block in L3) the others.
enum class Resident { APanel, BPanel };

struct Kernel {
  const char* name;
  Panel panel;
  Resident resident;
  int mr, nr;               // register tile
  std::int64_t kc, nc, mc;  // cache blocks (kc in elements of k, even for pairs)
  TileFn tile;
  PackAFn pack_a;
  PackBFn pack_b;
};

// Kernels by instruction set; the first three are always usable on x86-64
// hosts that have the features (callers check), the generic one anywhere.
const Kernel& kernel_avx512_f32();
const Kernel& kernel_avx512_f32_deep_k();  // the same tile over deeper k blocks
const Kernel& kernel_avx512_bf16();
const Kernel& kernel_avx512_bf16_deep_k();  // the same tile over deeper k blocks
const Kernel& kernel_avx2_f32();
const Kernel& kernel_avx2_f32_deep_k();  // GotoBLAS order, deeper k blocks
const Kernel& kernel_generic_f32();

// The fastest kernel this CPU runs for inputs of `in` (f32, f16 or bf16).
// The AVX-512 and AVX2 kernels come with two k blockings: measured once per machine
// with auto-tuning on (gemm.cpp), else the one measured faster on this
// microarchitecture.
const Kernel& kernel_for(DType in);

// Bytes of one packed panel of kc values of k (A: MR rows, B: NR columns).
std::size_t a_panel_bytes(const Kernel& kern, std::int64_t kc);
std::size_t b_panel_bytes(const Kernel& kern, std::int64_t kc);

// Starts fetching `bytes` from p into the cache. Packing B reads k rows of a
// few hundred bytes each, every one on a new page, which the hardware
// prefetcher follows too late, so packing fetches rows ahead itself
// (src/backends/cpu/README.md, gemm).
inline void prefetch_bytes(const void* p, std::int64_t bytes) {
  for (std::int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(static_cast<const char*>(p) + o);
}
inline constexpr std::int64_t kPackRowsAhead = 8;

// Packing for any layout and input dtype, in portable code.
void pack_a_generic(const Kernel& kern, const Mat& a, std::int64_t rows, std::int64_t kc, void* dst);
void pack_b_generic(const Kernel& kern, const Mat& b, std::int64_t kc, std::int64_t cols, void* dst);
// AVX-512 packing: transposes 16 x 16 blocks in registers when k is the
// contiguous dimension of A and the columns of B are contiguous; other
// layouts go to the generic code.
void pack_a_avx512(const Kernel& kern, const Mat& a, std::int64_t rows, std::int64_t kc, void* dst);
void pack_b_avx512(const Kernel& kern, const Mat& b, std::int64_t kc, std::int64_t cols, void* dst);
// AVX2 packing: 8 x 8 transposes for A, vector row copies for B (f32 panels).
void pack_a_avx2(const Kernel& kern, const Mat& a, std::int64_t rows, std::int64_t kc, void* dst);
void pack_b_avx2(const Kernel& kern, const Mat& b, std::int64_t kc, std::int64_t cols, void* dst);

// A B operand that exists only as a rule for packing it (a convolution's
// unfolded input): pack() writes k [k0, k0 + kc) x columns [j0, j0 + cols)
// as PackBFn does, into ceil(cols / NR) panels of b_panel_bytes(kc). Called
// from several threads at once.
class BSource {
 public:
  virtual ~BSource() = default;
  virtual void pack(const Kernel& kern, std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t cols,
                    void* dst) const = 0;
};

// C = alpha * A · B + beta * C for one matrix. A and B share a dtype; C has
// it too (run_blocked alone also takes an f32 C for half-precision inputs).
// Any strides; beta == 0 never reads C. run_blocked alone takes B from a
// BSource instead of b.
struct Problem {
  const BSource* b_source = nullptr;
  const void* a_packed = nullptr;  // run_blocked alone: A as pack_a_all wrote it, or null
  Mat a, b;
  void* c = nullptr;
  DType c_dtype = DType::F32;
  std::int64_t c_rs = 0, c_cs = 0;
  std::int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
};

// Memory the blocked algorithm may use beyond its packing buffers.
struct Limits {
  // A C that is half-precision or strided, with k past one k block, is
  // accumulated in an f32 copy of at most this many bytes, a band of rows at
  // a time.
  std::size_t acc_budget = std::size_t(8) << 20;
  // On several threads, packed operands of every k block up to this size are
  // packed in one go (one fork-join for the whole product).
  std::size_t whole_k_bytes = std::size_t(8) << 20;
  // On several threads, A is packed and shared this many bytes of k blocks
  // at a time when threads split C by columns. Small enough that the packed
  // block is still in L3 when the column chunks read it, which beats packing
  // all of A first (src/backends/cpu/README.md, gemm).
  std::size_t shared_a_bytes = std::size_t(4) << 20;
};

// A packed whole, in the blocks run_blocked uses, for products that share it
// (a convolution's filter over a batch of images): k block g holds the
// panels of all m rows, g * block_stride bytes in.
struct PackedALayout {
  std::int64_t kc_blk = 0, k_blocks = 0;
  std::size_t block_stride = 0, bytes = 0;
};
PackedALayout packed_a_layout(const Kernel& kern, std::int64_t m, std::int64_t k);
void pack_a_all(const Kernel& kern, const Mat& a, std::int64_t m, std::int64_t k, void* dst, int threads = 1);

// Runs one problem with the blocked algorithm on `threads` threads of the
// pool (1: the calling thread alone).
void run_blocked(const Kernel& kern, const Problem& p, int threads = 1, const Limits& lim = {});

// Runs one problem on the calling thread without packing: for tiny products
// where packing would cost more than it saves, and for f64.
void run_direct(const Problem& p);

// Runs a problem with m == 1 or n == 1 (f32, f16 or bf16 inputs) on the
// calling thread: matrix-vector products read the matrix once, unpacked.
void run_gemv(const Problem& p);

// c = alpha * acc + beta * c for the mr x nr tile of p's C at (i0, j0), in C's
// dtype and strides; acc[i * lda + j] holds the f32 sums. beta == 0 never reads c.
void store_tile(const float* acc, std::int64_t lda, const Problem& p, std::int64_t i0, std::int64_t j0, int mr, int nr);

// A batch of problems sharing shapes: item b offsets a, b and c by b * *_bs.
struct Batch {
  Problem p;
  std::int64_t count = 1;
  std::int64_t a_bs = 0, b_bs = 0, c_bs = 0;
};

// Splits a batch over the thread pool (by items or by rectangles of C) and runs it.
void run(const Batch& batch);

}  // namespace torsh::cpu::gemm
