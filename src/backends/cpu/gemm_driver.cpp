// The blocked loop nest of gemm.hpp for one rectangle of C on one thread, and
// the write-back for outputs the kernels cannot store directly (f16/bf16 or a
// non-unit column stride).
#include <algorithm>
#include <cstdlib>
#include <new>

#include "gemm.hpp"
#include "types.hpp"

namespace torsh::cpu::gemm {
namespace {

// Grow-only, 64-byte aligned scratch owned by one thread; pool workers live as
// long as the process, so steady-state GEMMs allocate nothing.
class Scratch {
 public:
  ~Scratch() { std::free(p_); }
  void* get(std::size_t bytes) {
    if (bytes > cap_) {
      std::free(p_);
      cap_ = (bytes + 4095) / 4096 * 4096;
      p_ = std::aligned_alloc(64, cap_);
      if (!p_) {
        cap_ = 0;
        throw std::bad_alloc();
      }
    }
    return p_;
  }

 private:
  void* p_ = nullptr;
  std::size_t cap_ = 0;
};

thread_local Scratch t_pack_a, t_pack_b, t_acc;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

// Splits `total` into equal blocks of at most `cap`, rounded up to `quantum`,
// so k = 400 with kc = 384 runs as 2 x 200 rather than 384 + 16.
std::int64_t even_block(std::int64_t total, std::int64_t cap, std::int64_t quantum) {
  const std::int64_t blocks = ceil_div(total, cap);
  return std::max(quantum, round_up(ceil_div(total, blocks), quantum));
}

Mat offset(const Mat& m, std::int64_t i, std::int64_t j) {
  Mat r = m;
  r.p = static_cast<const char*>(m.p) + (i * m.rs + j * m.cs) * static_cast<std::int64_t>(dtype_size(m.dtype));
  return r;
}

// c = alpha * acc + beta * c for an mr x nr tile of any dtype and strides.
template <class T>
void store_tile(const float* acc, std::int64_t lda, T* c, std::int64_t rs, std::int64_t cs, int mr, int nr, float alpha,
                float beta) {
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j) {
      T& dst = c[i * rs + j * cs];
      float v = alpha * acc[i * lda + j];
      if (beta != 0.0f) v += beta * static_cast<float>(to_acc(dst));
      dst = from_acc<T>(v);
    }
}

void store_tile(const float* acc, std::int64_t lda, const Problem& p, std::int64_t i0, std::int64_t j0, int mr, int nr) {
  const std::int64_t off = i0 * p.c_rs + j0 * p.c_cs;
  visit_float_dtype(p.c_dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    store_tile(acc, lda, static_cast<T*>(p.c) + off, p.c_rs, p.c_cs, mr, nr, p.alpha, p.beta);
  });
}

}  // namespace

void run_blocked(const Kernel& kern, const Problem& p) {
  const std::int64_t m = p.m, n = p.n, k = p.k, MR = kern.mr, NR = kern.nr;
  const bool pairs = kern.panel == Panel::Bf16Pairs;
  const std::int64_t kc_blk = even_block(k, kern.kc, pairs ? 2 : 1);
  const std::int64_t mc_blk = even_block(m, kern.mc, MR);
  const std::int64_t nc_blk = even_block(n, kern.nc, NR);
  const std::size_t a_panel = a_panel_bytes(kern, kc_blk), b_panel = b_panel_bytes(kern, kc_blk);
  auto* abuf = static_cast<char*>(t_pack_a.get(static_cast<std::size_t>(ceil_div(mc_blk, MR)) * a_panel + 64));
  auto* bbuf = static_cast<char*>(t_pack_b.get(static_cast<std::size_t>(ceil_div(nc_blk, NR)) * b_panel + 64));

  // Where tiles accumulate: C itself when it is f32 with unit column stride;
  // otherwise an f32 tile (one k block) or an f32 copy of the mc x n block of C
  // (several k blocks), converted into C after the last k block.
  const bool direct = p.c_dtype == DType::F32 && p.c_cs == 1;
  const bool multi_k = k > kc_blk;
  const std::int64_t ldw = direct ? p.c_rs : multi_k ? round_up(n, NR) : NR;
  float* acc_buf = nullptr;
  if (!direct)
    acc_buf = static_cast<float*>(t_acc.get(static_cast<std::size_t>(multi_k ? mc_blk * ldw : MR * NR) * sizeof(float)));
  float* c32 = static_cast<float*>(p.c);

  for (std::int64_t ic = 0; ic < m; ic += mc_blk) {
    const std::int64_t mc = std::min(mc_blk, m - ic);
    for (std::int64_t pc = 0; pc < k; pc += kc_blk) {
      const std::int64_t kc = std::min(kc_blk, k - pc);
      const bool first = pc == 0, last = pc + kc >= k;
      for (std::int64_t ir = 0; ir < mc; ir += MR)
        kern.pack_a(kern, offset(p.a, ic + ir, pc), std::min(MR, mc - ir), kc, abuf + ir / MR * a_panel);
      for (std::int64_t jc = 0; jc < n; jc += nc_blk) {
        const std::int64_t nc = std::min(nc_blk, n - jc);
        for (std::int64_t jr = 0; jr < nc; jr += NR)
          kern.pack_b(kern, offset(p.b, pc, jc + jr), kc, std::min(NR, nc - jr), bbuf + jr / NR * b_panel);
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
              kern.tile(mr, nr, kc, ap, bp, acc_buf, NR, 1.0f, 0.0f);
              store_tile(acc_buf, NR, p, i, j, mr, nr);
            } else {
              float* w = acc_buf + ir * ldw + j;
              kern.tile(mr, nr, kc, ap, bp, w, ldw, 1.0f, first ? 0.0f : 1.0f);
              if (last) store_tile(w, ldw, p, i, j, mr, nr);
            }
          }
        }
      }
    }
  }
}

void run_direct(const Problem& p) {
  visit_float_dtype(p.c_dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = typename Acc<T>::type;
    const T* a = static_cast<const T*>(p.a.p);
    const T* b = static_cast<const T*>(p.b.p);
    T* c = static_cast<T*>(p.c);
    A row[64];
    for (std::int64_t j0 = 0; j0 < p.n; j0 += 64) {
      const std::int64_t nj = std::min<std::int64_t>(64, p.n - j0);
      for (std::int64_t i = 0; i < p.m; ++i) {
        std::fill(row, row + nj, A(0));
        for (std::int64_t q = 0; q < p.k; ++q) {
          const A av = to_acc(a[i * p.a.rs + q * p.a.cs]);
          const T* br = b + q * p.b.rs + j0 * p.b.cs;
          for (std::int64_t j = 0; j < nj; ++j) row[j] += av * to_acc(br[j * p.b.cs]);
        }
        T* cr = c + i * p.c_rs + j0 * p.c_cs;
        for (std::int64_t j = 0; j < nj; ++j) {
          A v = static_cast<A>(p.alpha) * row[j];
          if (p.beta != 0.0f) v += static_cast<A>(p.beta) * to_acc(cr[j * p.c_cs]);
          cr[j * p.c_cs] = from_acc<T>(v);
        }
      }
    }
  });
}

}  // namespace torsh::cpu::gemm
