// The blocked loop nests of gemm.hpp. On several threads, and on one with a
// GotoBLAS-order kernel, C is cut into chunks of columns (run_column_chunks):
// A is packed a few k blocks at a time and shared, each chunk packs its own
// B. Otherwise, for each (nc, kc) block the B block is
// packed once into memory all threads read and the mc x nc blocks of C under
// it are the work items. Threads claim items one by one, so a thread slowed
// by another tenant leaves its share to the others. Each step is one
// fork-join on the pool, so a busy pool that runs the tasks one after another
// on the caller still computes the right thing.
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "../platform/scratch.hpp"
#include "../platform/thread_pool.hpp"
#include "gemm.hpp"

namespace torsh::cpu::gemm {
namespace {

// Shared packed blocks live in the calling thread's scratch, an A block that
// a work item packs for itself in the scratch of the thread that runs it.
thread_local Scratch t_pack_a, t_pack_b, t_acc, t_item_a, t_item_b, t_local_a;
// Which call's A (and which k group of it) t_local_a holds on this thread.
thread_local std::uint64_t t_local_call = 0;
thread_local std::int64_t t_local_group = -1;
std::atomic<std::uint64_t> g_calls{0};

// Rows of A packed per k block when items share them (4096 x 256 f32: 4 MB).
constexpr std::int64_t kBandRows = 4096;
// The largest packed A that each of two threads packs for itself when they
// split C by columns (run_column_chunks): up to it the copies beat one
// shared A, above it they lose (src/backends/cpu/README.md, gemm).
constexpr std::size_t kLocalABytes = std::size_t(4) << 20;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

// Splits `total` into equal blocks of at most `cap`, rounded up to `quantum`,
// so k = 400 with kc = 384 runs as 2 x 200 rather than 384 + 16.
std::int64_t even_block(std::int64_t total, std::int64_t cap, std::int64_t quantum) {
  const std::int64_t blocks = ceil_div(total, cap);
  return std::max(quantum, round_up(ceil_div(total, blocks), quantum));
}

// fn(task) for task in [0, tasks): on the pool, or inline for one thread.
template <class F>
void fork(int threads, std::int64_t tasks, F&& fn) {
  if (threads <= 1 || tasks <= 1) {
    for (std::int64_t t = 0; t < tasks; ++t) fn(t);
    return;
  }
  pool().run(static_cast<int>(tasks), [&](int t) { fn(t); });
}

// fn(ir, jr) for the tiles of rows [i0, i1) x columns [j0, j1), in the
// kernel's loop order (which panel stays in L1).
template <class F>
void for_each_tile(const Kernel& kern, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, F&& fn) {
  if (kern.resident == Resident::APanel) {
    for (std::int64_t ir = i0; ir < i1; ir += kern.mr)
      for (std::int64_t jr = j0; jr < j1; jr += kern.nr) fn(ir, jr);
  } else {
    for (std::int64_t jr = j0; jr < j1; jr += kern.nr)
      for (std::int64_t ir = i0; ir < i1; ir += kern.mr) fn(ir, jr);
  }
}

// Where the sums of a tile go: C itself when it is f32 with unit column
// stride; otherwise an f32 tile (one k block) or an f32 copy of a band of rows
// of C starting at row i0 (several k blocks), converted into C after the last.
struct Out {
  const Problem& p;
  bool direct, multi_k;
  float* wbuf;
  std::int64_t ldw, i0;

  // Fetches the f32 C tile at (i, j) into L2 (direct C only).
  void prefetch_c(std::int64_t i, std::int64_t j, int mr, std::int64_t nr) const {
    const float* c = static_cast<const float*>(p.c) + i * p.c_rs + j;
    for (int r = 0; r < mr; ++r) {
      __builtin_prefetch(c + r * p.c_rs, 0, 2);
      __builtin_prefetch(c + r * p.c_rs + nr - 1, 0, 2);
    }
  }

  void tile(const Kernel& kern, const char* ap, const char* bp, int mr, int nr, std::int64_t kc, std::int64_t i,
            std::int64_t j, bool first, bool last) const {
    if (direct) {
      kern.tile(mr, nr, kc, ap, bp, static_cast<float*>(p.c) + i * p.c_rs + j, p.c_rs, p.alpha, first ? p.beta : 1.0f);
    } else if (!multi_k) {
      alignas(64) float buf[16 * 64];  // the largest register tile
      kern.tile(mr, nr, kc, ap, bp, buf, kern.nr, 1.0f, 0.0f);
      store_tile(buf, kern.nr, p, i, j, mr, nr);
    } else {
      float* w = wbuf + (i - i0) * ldw + j;
      kern.tile(mr, nr, kc, ap, bp, w, ldw, 1.0f, first ? 0.0f : 1.0f);
      if (last) store_tile(w, ldw, p, i, j, mr, nr);
    }
  }
};

// Packs k [pc, pc + kc) x columns [j0, j0 + cols) of B into panels at dst.
void pack_b(const Kernel& kern, const Problem& p, std::int64_t pc, std::int64_t kc, std::int64_t j0, std::int64_t cols,
            void* dst) {
  if (p.b_source)
    p.b_source->pack(kern, pc, kc, j0, cols, dst);
  else
    kern.pack_b(kern, p.b.at(pc, j0), kc, cols, dst);
}

// C in chunks of columns, OpenBLAS's split of the work between threads: A is
// packed up front, a group of k blocks at a time (at most a_budget bytes; all
// of them when p.a_packed has them), and shared; a work item is a chunk of
// columns that packs its own B one k block at a time into memory that stays
// in its thread's L2, and runs it against A one block of mc rows at a time.
// No B panel is read by two threads, and the threads meet twice per group.
// For m <= mc (a single row block), and for GotoBLAS-order kernels, this is
// also the one-thread plan: B never goes out to L3.
void run_column_chunks(const Kernel& kern, const Problem& p, int threads, std::int64_t kc_blk, std::int64_t mc_blk,
                       std::size_t chunk_bytes, std::size_t a_budget, const Out& out) {
  const std::int64_t m = p.m, n = p.n, k = p.k, MR = kern.mr, NR = kern.nr;
  const std::int64_t k_blocks = ceil_div(k, kc_blk), a_panels = ceil_div(m, MR), panels = ceil_div(n, NR);
  const std::size_t a_stride = static_cast<std::size_t>(a_panels) * a_panel_bytes(kern, kc_blk);
  const std::int64_t group =
      p.a_packed ? k_blocks : std::clamp<std::int64_t>(static_cast<std::int64_t>(a_budget / a_stride), 1, k_blocks);
  // A is packed in a fork of its own: packing group g + 1's A in the first
  // tasks of group g's fork (double buffered) is no faster.
  // Chunks of up to chunk_bytes of packed B, at least 4 per thread so that
  // one slowed thread leaves its share to the others, in a number that the
  // threads divide evenly and with sizes that differ by one panel at most:
  // 13 chunks on 2 threads leave one thread idle for a thirteenth of the time.
  const std::int64_t chunk_max =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(chunk_bytes / b_panel_bytes(kern, kc_blk)));
  std::int64_t items = std::max(ceil_div(panels, chunk_max), std::min<std::int64_t>(4 * threads, panels));
  if (items > threads && round_up(items, threads) <= panels) items = round_up(items, threads);
  const std::int64_t chunk = ceil_div(panels, items);  // the widest chunk
  // On two threads each thread packs all of A for itself instead of half of
  // it into shared memory. Packing the shared half costs several times the
  // same copy on one thread (its lines, read by both cores in the previous
  // call, are taken back from the other core's cache line by line), and half
  // of the tiles then read A from the other core. Each thread's copy grows
  // with the thread count while the shared one shrinks, so more threads keep
  // the shared A, and so does an A of more than kLocalABytes
  // (src/backends/cpu/README.md, gemm).
  const bool local_a =
      !p.a_packed && threads == 2 && items > 1 && static_cast<std::size_t>(group) * a_stride <= kLocalABytes;
  const std::int64_t packers = p.a_packed || local_a ? 0 : std::min<std::int64_t>(threads, a_panels);
  const std::uint64_t call = local_a ? g_calls.fetch_add(1, std::memory_order_relaxed) + 1 : 0;
  char* own = packers ? static_cast<char*>(t_pack_a.get(static_cast<std::size_t>(group) * a_stride + 64)) : nullptr;

  // Row panels [r0, r1) of every k block of group gi into dst.
  auto pack_rows = [&](std::int64_t gi, std::int64_t r0, std::int64_t r1, char* dst) {
    const std::int64_t g0 = gi * group, g1 = std::min(k_blocks, g0 + group);
    for (std::int64_t g = g0; g < g1 && r0 < r1; ++g) {
      const std::int64_t pc = g * kc_blk, kc = std::min(kc_blk, k - pc);
      kern.pack_a(kern, p.a.at(r0 * MR, pc), std::min(m, r1 * MR) - r0 * MR, kc,
                  dst + (g - g0) * a_stride + r0 * a_panel_bytes(kern, kc));
    }
  };
  // Packer t's share of the row panels of every k block of group gi.
  auto pack_a = [&](std::int64_t gi, std::int64_t t) {
    pack_rows(gi, a_panels * t / packers, a_panels * (t + 1) / packers, own);
  };
  // Column chunk `item` over every k block of group gi.
  auto compute = [&](std::int64_t gi, std::int64_t item) {
    const std::int64_t g0 = gi * group, g1 = std::min(k_blocks, g0 + group);
    const char* abuf = p.a_packed ? static_cast<const char*>(p.a_packed) + g0 * a_stride : own;
    if (local_a) {
      auto* mine = static_cast<char*>(t_local_a.get(static_cast<std::size_t>(group) * a_stride + 64));
      if (t_local_call != call || t_local_group != gi) {
        pack_rows(gi, 0, a_panels, mine);
        t_local_call = call, t_local_group = gi;
      }
      abuf = mine;
    }
    const std::int64_t j0 = panels * item / items * NR, j1 = std::min(n, panels * (item + 1) / items * NR);
    auto* bbuf = static_cast<char*>(t_item_b.get(static_cast<std::size_t>(chunk) * b_panel_bytes(kern, kc_blk) + 64));
    for (std::int64_t g = g0; g < g1; ++g) {
      const std::int64_t pc = g * kc_blk, kc = std::min(kc_blk, k - pc);
      const std::size_t a_panel = a_panel_bytes(kern, kc), b_panel = b_panel_bytes(kern, kc);
      pack_b(kern, p, pc, kc, j0, j1 - j0, bbuf);
      const char* ablk = abuf + (g - g0) * a_stride;
      // In the GotoBLAS order a tile that reads C starts fetching the next
      // tile's C (along the row) into L2: when C is larger than the last-level
      // cache, the kernel's own fetch a few dozen k steps before the end comes
      // too late (src/backends/cpu/README.md, gemm).
      const bool reads_c = kern.resident == Resident::APanel && out.direct && (pc > 0 || p.beta != 0.0f);
      auto tile = [&](std::int64_t ir, std::int64_t jr) {
        const int mr = static_cast<int>(std::min(MR, m - ir)), nr = static_cast<int>(std::min(NR, j1 - jr));
        if (reads_c) {
          if (jr + NR < j1)
            out.prefetch_c(ir, jr + NR, mr, std::min(NR, j1 - jr - NR));
          else if (ir + MR < m)
            out.prefetch_c(ir + MR, j0, static_cast<int>(std::min(MR, m - ir - MR)), std::min(NR, j1 - j0));
        }
        out.tile(kern, ablk + ir / MR * a_panel, bbuf + (jr - j0) / NR * b_panel, mr, nr, kc, ir, jr, pc == 0,
                 pc + kc >= k);
      };
      for (std::int64_t i0 = 0; i0 < m; i0 += mc_blk) for_each_tile(kern, i0, std::min(m, i0 + mc_blk), j0, j1, tile);
    }
  };

  for (std::int64_t gi = 0; gi < ceil_div(k_blocks, group); ++gi) {
    if (packers) fork(threads, packers, [&](std::int64_t t) { pack_a(gi, t); });
    fork(threads, items, [&](std::int64_t item) { compute(gi, item); });
  }
}

// Packed B a column chunk keeps in its thread's L2. A kernel that streams B
// panels from L2 (GotoBLAS order) names that block itself, kc x nc, sized
// to its L2 (768 KB of a 1 MB L2 beats 256 KB). A kernel that keeps its B
// panel in L1 (BLIS order) takes 256 KB, half of a 512 KB L2
// (src/backends/cpu/README.md, gemm).
std::size_t column_chunk_bytes(const Kernel& kern) {
  if (kern.resident == Resident::APanel)
    return static_cast<std::size_t>(kern.nc / kern.nr) * b_panel_bytes(kern, kern.kc);
  return std::size_t(256) << 10;
}

}  // namespace

PackedALayout packed_a_layout(const Kernel& kern, std::int64_t m, std::int64_t k) {
  PackedALayout l;
  l.kc_blk = even_block(k, kern.kc, kern.panel == Panel::Bf16Pairs ? 2 : 1);
  l.k_blocks = ceil_div(k, l.kc_blk);
  l.block_stride = static_cast<std::size_t>(ceil_div(m, kern.mr)) * a_panel_bytes(kern, l.kc_blk);
  l.bytes = static_cast<std::size_t>(l.k_blocks) * l.block_stride;
  return l;
}

void pack_a_all(const Kernel& kern, const Mat& a, std::int64_t m, std::int64_t k, void* dst, int threads) {
  const PackedALayout l = packed_a_layout(kern, m, k);
  fork(threads, l.k_blocks, [&](std::int64_t g) {
    const std::int64_t pc = g * l.kc_blk;
    kern.pack_a(kern, a.at(0, pc), m, std::min(l.kc_blk, k - pc), static_cast<char*>(dst) + g * l.block_stride);
  });
}

void run_blocked(const Kernel& kern, const Problem& p, int threads, const Limits& lim) {
  const std::int64_t m = p.m, n = p.n, k = p.k, MR = kern.mr, NR = kern.nr;
  const bool pairs = kern.panel == Panel::Bf16Pairs;
  const std::int64_t kc_blk = even_block(k, kern.kc, pairs ? 2 : 1);
  const std::int64_t nc_blk = even_block(n, kern.nc, NR);

  // Where tiles accumulate: C itself when it is f32 with unit column stride;
  // otherwise an f32 tile (one k block) or an f32 copy of a band of rows of
  // C (several k blocks), converted into C after the last k block. The band
  // keeps that copy within lim.acc_budget bytes.
  const bool direct = p.c_dtype == DType::F32 && p.c_cs == 1;
  const bool multi_k = k > kc_blk;
  const bool accumulate = !direct && multi_k;
  const std::int64_t ldw = round_up(n, NR);
  const std::int64_t row_cap =
      accumulate ? std::max<std::int64_t>(MR, static_cast<std::int64_t>(lim.acc_budget / sizeof(float)) / ldw / MR * MR)
                 : m;
  const std::int64_t mc_blk = even_block(std::min(row_cap, m), kern.mc, MR);
  const std::int64_t band = mc_blk * std::max<std::int64_t>(1, std::min(row_cap, kBandRows) / mc_blk);

  // Work items of a band: row blocks times column chunks of the nc block.
  // One thread takes whole row blocks and packs each A block just before
  // using it (it is then in L2); threads split the columns as well when there
  // are too few row blocks to go round evenly, and share A packed up front.
  const std::int64_t panels_max = ceil_div(nc_blk, NR);
  auto chunks_for = [&](std::int64_t rb) -> std::int64_t {
    if (threads <= 1) return 1;
    for (std::int64_t cb = 1; cb <= panels_max; ++cb)
      if ((rb * cb) % threads == 0 && rb * cb >= 2 * threads) return cb;
    return panels_max;
  };

  const std::size_t a_panel_max = a_panel_bytes(kern, kc_blk), b_panel_max = b_panel_bytes(kern, kc_blk);
  const std::int64_t k_blocks = ceil_div(k, kc_blk);
  const std::int64_t band_panels = ceil_div(std::min(band, m), MR);
  // On several threads every fork-join costs a wake-up and a wait for the
  // slowest thread. When the packed B of all k blocks (and A, if shared) fits
  // lim.whole_k_bytes, it is packed in one fork and each item runs all k blocks,
  // so a long, narrow product (a convolution's) takes two forks, not 2 per kc.
  const std::size_t b_all = static_cast<std::size_t>(k_blocks * panels_max) * b_panel_max;
  const std::size_t a_all = static_cast<std::size_t>(k_blocks * band_panels) * a_panel_max;
  const bool whole_k = threads > 1 && k_blocks > 1 && b_all + a_all <= lim.whole_k_bytes;
  const std::int64_t k_group = whole_k ? k_blocks : 1;  // k blocks packed per fork
  const std::size_t b_stride = static_cast<std::size_t>(panels_max) * b_panel_max;
  const std::size_t a_stride = static_cast<std::size_t>(band_panels) * a_panel_max;
  const std::size_t a_stride_all = static_cast<std::size_t>(ceil_div(m, MR)) * a_panel_max;  // of a_packed

  // Several groups on several threads: the packing of group g + 1 (into the
  // other half of the buffers) joins the work items of group g in one fork,
  // so the threads meet once per k block, and packing is shared out as
  // dynamically as the items.
  const std::int64_t groups = ceil_div(k_blocks, k_group);
  const bool pipelined = threads > 1 && groups > 1;
  const std::size_t b_half = static_cast<std::size_t>(k_group) * b_stride,
                    a_half = static_cast<std::size_t>(k_group) * a_stride;
  float* wbuf = accumulate
                    ? static_cast<float*>(t_acc.get(static_cast<std::size_t>(std::min(band, m) * ldw) * sizeof(float)))
                    : nullptr;
  const Out out{p, direct, multi_k, wbuf, ldw, 0};
  // One row block: chunks of 128 KB of B, A of every k block packed at once.
  if (m <= mc_blk) return run_column_chunks(kern, p, threads, kc_blk, mc_blk, std::size_t(128) << 10, SIZE_MAX, out);
  // C written in place, several threads or a GotoBLAS-order kernel: chunks
  // of column_chunk_bytes, as fast as the blocks of rows below or faster
  // (src/backends/cpu/README.md, gemm). An accumulated copy of C would need
  // all m rows at once.
  if ((threads > 1 || kern.resident == Resident::APanel) && !accumulate)
    return run_column_chunks(kern, p, threads, kc_blk, mc_blk, column_chunk_bytes(kern), lim.shared_a_bytes, out);
  auto* bbuf = static_cast<char*>(t_pack_b.get((pipelined ? 2 : 1) * b_half + 64));
  auto* abuf = static_cast<char*>(t_pack_a.get((pipelined ? 2 : 1) * a_half + 64));

  for (std::int64_t i0 = 0; i0 < m; i0 += band) {
    const std::int64_t i1 = std::min(m, i0 + band);
    const std::int64_t rb = ceil_div(i1 - i0, mc_blk), cb = chunks_for(rb);
    const bool shared_a = cb > 1;
    const std::int64_t a_panels = ceil_div(i1 - i0, MR);
    for (std::int64_t jc = 0; jc < n; jc += nc_blk) {
      const std::int64_t nc = std::min(nc_blk, n - jc), panels = ceil_div(nc, NR);
      const int packers = static_cast<int>(std::min<std::int64_t>(threads, panels));

      // Share t of `packers` of the B panels (and of the A panels when shared)
      // of every k block of group gi, into buffer half h.
      auto pack = [&](std::int64_t gi, int h, std::int64_t t) {
        const std::int64_t g0 = gi * k_group, g1 = std::min(k_blocks, g0 + k_group);
        for (std::int64_t g = g0; g < g1; ++g) {
          const std::int64_t pc = g * kc_blk, kc = std::min(kc_blk, k - pc);
          const std::size_t a_panel = a_panel_bytes(kern, kc), b_panel = b_panel_bytes(kern, kc);
          char* bdst = bbuf + h * b_half + (g - g0) * b_stride;
          const std::int64_t b0 = panels * t / packers, b1 = panels * (t + 1) / packers;
          if (b0 < b1) pack_b(kern, p, pc, kc, jc + b0 * NR, std::min(nc, b1 * NR) - b0 * NR, bdst + b0 * b_panel);
          if (!shared_a || p.a_packed) continue;
          char* adst = abuf + h * a_half + (g - g0) * a_stride;
          const std::int64_t a0 = a_panels * t / packers, a1 = a_panels * (t + 1) / packers;
          if (a0 < a1)
            kern.pack_a(kern, p.a.at(i0 + a0 * MR, pc), std::min(i1 - i0, a1 * MR) - a0 * MR, kc, adst + a0 * a_panel);
        }
      };

      // Work item `item` (a row block times a column chunk) over every k block of group gi, from buffer half h.
      auto compute = [&](std::int64_t gi, int h, std::int64_t item) {
        const std::int64_t g0 = gi * k_group, g1 = std::min(k_blocks, g0 + k_group);
        const std::int64_t ic = i0 + item / cb * mc_blk, mc = std::min(mc_blk, i1 - ic);
        const Out band_out{p, direct, multi_k, wbuf, ldw, i0};
        const std::int64_t c = item % cb, j0 = panels * c / cb * NR, j1 = std::min(nc, panels * (c + 1) / cb * NR);
        for (std::int64_t g = g0; g < g1; ++g) {
          const std::int64_t pc = g * kc_blk, kc = std::min(kc_blk, k - pc);
          const bool first = pc == 0, last = pc + kc >= k;
          const std::size_t a_panel = a_panel_bytes(kern, kc), b_panel = b_panel_bytes(kern, kc);
          const char* bblk = bbuf + h * b_half + (g - g0) * b_stride;
          const char* ablk = abuf + h * a_half + (g - g0) * a_stride + (ic - i0) / MR * a_panel;
          if (p.a_packed) {
            ablk = static_cast<const char*>(p.a_packed) + g * a_stride_all + ic / MR * a_panel;
          } else if (!shared_a) {
            auto* own =
                static_cast<char*>(t_item_a.get(static_cast<std::size_t>(ceil_div(mc_blk, MR)) * a_panel_max + 64));
            kern.pack_a(kern, p.a.at(ic, pc), mc, kc, own);
            ablk = own;
          }
          auto tile = [&](std::int64_t ir, std::int64_t jr) {
            const int mr = static_cast<int>(std::min(MR, mc - ir)), nr = static_cast<int>(std::min(NR, nc - jr));
            band_out.tile(kern, ablk + ir / MR * a_panel, bblk + jr / NR * b_panel, mr, nr, kc, ic + ir, jc + jr, first,
                          last);
          };
          for_each_tile(kern, 0, mc, j0, j1, tile);
        }
      };

      const std::int64_t items = rb * cb;
      if (!pipelined) {
        for (std::int64_t gi = 0; gi < groups; ++gi) {
          fork(threads, packers, [&](std::int64_t t) { pack(gi, 0, t); });
          fork(threads, items, [&](std::int64_t it) { compute(gi, 0, it); });
        }
        continue;
      }
      fork(threads, packers, [&](std::int64_t t) { pack(0, 0, t); });
      for (std::int64_t gi = 0; gi < groups; ++gi) {
        const int h = static_cast<int>(gi % 2);
        const std::int64_t next_packs = gi + 1 < groups ? packers : 0;
        // The pool hands out tasks in order: the packing of the next group first.
        fork(threads, next_packs + items, [&](std::int64_t task) {
          if (task < next_packs)
            pack(gi + 1, 1 - h, task);
          else
            compute(gi, h, task - next_packs);
        });
      }
    }
  }
}

}  // namespace torsh::cpu::gemm
