// The blocked loop nest of gemm.hpp for one rectangle of C on the calling
// thread. Threads each run it on their own rectangle (gemm.cpp): they share
// nothing, so a busy pool that runs the tasks one after another is no hazard.
#include <algorithm>

#include "gemm.hpp"
#include "scratch.hpp"

namespace torsh::cpu::gemm {
namespace {

thread_local Scratch t_pack_a, t_pack_b, t_acc;

// Above this, the f32 accumulator of a half-precision C block caps mc instead.
constexpr std::size_t kAccBudget = std::size_t(8) << 20;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

// Splits `total` into equal blocks of at most `cap`, rounded up to `quantum`,
// so k = 400 with kc = 384 runs as 2 x 200 rather than 384 + 16.
std::int64_t even_block(std::int64_t total, std::int64_t cap, std::int64_t quantum) {
  const std::int64_t blocks = ceil_div(total, cap);
  return std::max(quantum, round_up(ceil_div(total, blocks), quantum));
}

}  // namespace

void run_blocked(const Kernel& kern, const Problem& p) {
  const std::int64_t m = p.m, n = p.n, k = p.k, MR = kern.mr, NR = kern.nr;
  const bool pairs = kern.panel == Panel::Bf16Pairs;
  const std::int64_t kc_blk = even_block(k, kern.kc, pairs ? 2 : 1);
  const std::int64_t nc_blk = even_block(n, kern.nc, NR);

  // Where tiles accumulate: C itself when it is f32 with unit column stride;
  // otherwise an f32 tile (one k block) or an f32 copy of the mc x n block
  // of C (several k blocks), converted into C after the last k block.
  const bool direct = p.c_dtype == DType::F32 && p.c_cs == 1;
  const bool multi_k = k > kc_blk;
  const std::int64_t ldw = direct ? p.c_rs : multi_k ? round_up(n, NR) : NR;
  std::int64_t mc_cap = kern.mc;
  if (!direct && multi_k)
    mc_cap = std::min<std::int64_t>(mc_cap, std::max<std::int64_t>(MR, kAccBudget / sizeof(float) / ldw));
  const std::int64_t mc_blk = even_block(m, mc_cap, MR);

  auto* abuf = static_cast<char*>(
      t_pack_a.get(static_cast<std::size_t>(ceil_div(mc_blk, MR)) * a_panel_bytes(kern, kc_blk) + 64));
  auto* bbuf = static_cast<char*>(
      t_pack_b.get(static_cast<std::size_t>(ceil_div(nc_blk, NR)) * b_panel_bytes(kern, kc_blk) + 64));
  float* wbuf = !direct && multi_k
                    ? static_cast<float*>(t_acc.get(static_cast<std::size_t>(mc_blk * ldw) * sizeof(float)))
                    : nullptr;
  float* c32 = static_cast<float*>(p.c);

  alignas(64) float tile_buf[16 * 64];  // one f32 tile for a half-precision C with one k block
  for (std::int64_t ic = 0; ic < m; ic += mc_blk) {
    const std::int64_t mc = std::min(mc_blk, m - ic);
    for (std::int64_t pc = 0; pc < k; pc += kc_blk) {
      const std::int64_t kc = std::min(kc_blk, k - pc);
      const bool first = pc == 0, last = pc + kc >= k;
      const std::size_t a_panel = a_panel_bytes(kern, kc), b_panel = b_panel_bytes(kern, kc);
      kern.pack_a(kern, p.a.at(ic, pc), mc, kc, abuf);
      for (std::int64_t jc = 0; jc < n; jc += nc_blk) {
        const std::int64_t nc = std::min(nc_blk, n - jc);
        kern.pack_b(kern, p.b.at(pc, jc), kc, nc, bbuf);
        for (std::int64_t ir = 0; ir < mc; ir += MR) {
          const int mr = static_cast<int>(std::min(MR, mc - ir));
          const char* ap = abuf + ir / MR * a_panel;
          for (std::int64_t jr = 0; jr < nc; jr += NR) {
            const int nr = static_cast<int>(std::min(NR, nc - jr));
            const char* bp = bbuf + jr / NR * b_panel;
            const std::int64_t i = ic + ir, j = jc + jr;
            if (direct) {
              kern.tile(mr, nr, kc, ap, bp, c32 + i * p.c_rs + j, p.c_rs, p.alpha, first ? p.beta : 1.0f);
            } else if (!multi_k) {
              kern.tile(mr, nr, kc, ap, bp, tile_buf, NR, 1.0f, 0.0f);
              store_tile(tile_buf, NR, p, i, j, mr, nr);
            } else {
              float* w = wbuf + ir * ldw + j;
              kern.tile(mr, nr, kc, ap, bp, w, ldw, 1.0f, first ? 0.0f : 1.0f);
              if (last) store_tile(w, ldw, p, i, j, mr, nr);
            }
          }
        }
      }
    }
  }
}

}  // namespace torsh::cpu::gemm
