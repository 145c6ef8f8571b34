#pragma once
// The hand-vectorised Stockham stages for plans factored for W lanes
// (Plan::lanes, fft_vector.hpp), written once on GCC vectors V of W floats
// or doubles and compiled per x86 level by the file that includes this one
// under its target pragma (fft_vector_avx512.cpp, fft_vector_avx2.cpp).
//
// Stage (radix r, length L, stride s), m = L / r, as in fft_stages.cpp:
//   y[q + s (r p + k)] = w_L^(p k) * sum_j x[q + s (p + j m)] w_r^(j k).
// Every stage but a flat plan's first has s a multiple of W: a vector is W
// consecutive q, loaded and stored whole, its twiddles broadcast ("vertical"
// stages). The first stage (s = 1, r = W) is vectorised over W consecutive p
// instead: its loads are contiguous, its twiddles load as vectors, and the
// W x W block of outputs (k down, p across) is transposed in registers so
// every y[W p + k] run is one store. That is what lets all the stages after
// it run vertically, with no permutes but the pairs' (de)interleave at the
// ends; GCC's own vectorisation of the scalar stages spends most of its time
// in the permutes of stride-r stores.
//
// Plans run two stages a pass where Plan::passes says so: the
// first with the second (first_fused_stages), then the vertical stages in
// pairs (fused_stages), each pair through a block of at most 4 KiB a part.
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "fft_butterfly.hpp"
#include "fft_vector_isa.hpp"

namespace torsh::cpu::fft {
namespace {

template <class V>
using LaneT = Lane<V>;
template <class V>
inline constexpr int kLanes = static_cast<int>(sizeof(V) / sizeof(LaneT<V>));
// The integer vector of V's shape: __builtin_shuffle's index operand.
template <std::size_t Bytes, std::size_t LaneBytes>
struct IndexOf;
template <>
struct IndexOf<64, 4> {
  typedef int type __attribute__((vector_size(64)));
};
template <>
struct IndexOf<64, 8> {
  typedef long long type __attribute__((vector_size(64)));
};
template <>
struct IndexOf<32, 4> {
  typedef int type __attribute__((vector_size(32)));
};
template <>
struct IndexOf<32, 8> {
  typedef long long type __attribute__((vector_size(32)));
};
template <class V>
using IndexV = typename IndexOf<sizeof(V), sizeof(LaneT<V>)>::type;

// p += step, opaque to GCC: without it, induction-variable optimisation
// turns a pointer stepped through r streams back into r pointers, which
// spill (as do their increments, through vector registers).
template <class P>
TORSH_INLINE void step(P*& p, std::int64_t by) {
  p += by;
  asm("" : "+r"(p));
}

// Byte strides of r streams, opaque to GCC (see streams()).
struct Stride {
  std::int64_t one, three;
  template <class L>
  static Stride of(std::int64_t elements) {
    Stride s{elements * static_cast<std::int64_t>(sizeof(L)), 3 * elements * static_cast<std::int64_t>(sizeof(L))};
    asm("" : "+r"(s.one), "+r"(s.three));
    return s;
  }
};
// f(j, p + j * stride) for the R streams j, addressed as [g + {0, 1, 2, 3} x
// stride] from one pointer g per four streams (stride and 3 x stride in
// registers): a lea per four streams where stepping one pointer through
// them took an add per stream, a quarter of a radix-8 stage's instructions.
template <int R, class P, class F>
TORSH_INLINE void streams(P* p, Stride st, F&& f) {
  using C = std::conditional_t<std::is_const_v<P>, const char, char>;
  C* g = reinterpret_cast<C*>(p);
  asm("" : "+r"(g));
#pragma GCC unroll 16
  for (int j = 0; j < R; ++j) {
    if (j % 4 == 0 && j > 0) {
      g += 4 * st.one;
      asm("" : "+r"(g));
    }
    C* a = j % 4 == 0 ? g : j % 4 == 1 ? g + st.one : j % 4 == 2 ? g + 2 * st.one : g + st.three;
    f(j, reinterpret_cast<P*>(a));
  }
}

template <class V>
TORSH_INLINE V loadu(const LaneT<V>* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
TORSH_INLINE void storeu(LaneT<V>* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// x in every lane (a broadcast; V{} + x would keep the add, for -0).
template <class V, std::size_t... L>
TORSH_INLINE V splat_lanes(LaneT<V> x, std::index_sequence<L...>) {
  return V{((void)L, x)...};
}
template <class V>
TORSH_INLINE V splat(LaneT<V> x) {
  return splat_lanes<V>(x, std::make_index_sequence<kLanes<V>>{});
}

// Shuffle masks, computed at compile time from the lane index.
template <class V, class F, std::size_t... L>
constexpr IndexV<V> make_mask(F f, std::index_sequence<L...>) {
  return IndexV<V>{static_cast<LaneT<IndexV<V>>>(f(static_cast<int>(L)))...};
}
template <class V, class F>
constexpr IndexV<V> mask(F f) {
  return make_mask<V>(f, std::make_index_sequence<kLanes<V>>{});
}

// W pairs (re, im) at p: split into re and im, or with Swap into im and re,
// lane l holding pair pair_lane_order(W, l) (fft_plan.hpp).
// The inverse transform runs as the forward one of x with re and im swapped,
// swapped back on the way out (i conj(z) swaps them, and
// conj(DFT(conj x)) = swap(DFT(swap x))), so it costs no multiplies.
template <bool Swap, class V>
TORSH_INLINE void load_pairs(const LaneT<V>* p, V& re, V& im) {
  constexpr int W = kLanes<V>;
  const V lo = loadu<V>(p), hi = loadu<V>(p + W);
  if constexpr (sizeof(V) == 32 && std::is_same_v<LaneT<V>, float>) {
    // 8 floats: vshufps takes the evens (odds) of both inputs per 128-bit
    // half, pairs [0 1 4 5 | 2 3 6 7]. Putting them in order would take a
    // vpermpd each (and GCC's own two-input shuffle takes two vpermd and a
    // blend, with masks reloaded when registers run short): a fifth of the
    // first stage's shuffles, for an order the twiddles and stores absorb.
    (Swap ? im : re) = _mm256_shuffle_ps(lo, hi, 0x88);
    (Swap ? re : im) = _mm256_shuffle_ps(lo, hi, 0xDD);
  } else if constexpr (sizeof(V) == 32) {
    // 4 doubles: vunpcklpd / vunpckhpd, pairs [0 2 | 1 3].
    (Swap ? im : re) = _mm256_unpacklo_pd(lo, hi);
    (Swap ? re : im) = _mm256_unpackhi_pd(lo, hi);
  } else {
    (Swap ? im : re) = __builtin_shuffle(lo, hi, mask<V>([](int l) { return 2 * l; }));
    (Swap ? re : im) = __builtin_shuffle(lo, hi, mask<V>([](int l) { return 2 * l + 1; }));
  }
}
template <class V>
inline constexpr bool kPairsInOrder = pair_lanes_in_order(kLanes<V>, sizeof(LaneT<V>));
// re and im as W pairs at p. With Permuted, lane l holds pair
// pair_lane_order(W, l), the order vunpcklps / vunpcklpd (and their high
// halves) leave in place: two in-lane shuffles, where pairs in lane order
// take two more that cross lanes (vperm2f128, on Intel's port 5 only).
template <class V, bool Permuted = false>
TORSH_INLINE void store_pairs(LaneT<V>* p, V re, V im) {
  constexpr int W = kLanes<V>;
  if constexpr (Permuted && sizeof(V) == 32) {
    if constexpr (std::is_same_v<LaneT<V>, float>) {
      storeu<V>(p, (V)_mm256_unpacklo_ps((__m256)re, (__m256)im));
      storeu<V>(p + W, (V)_mm256_unpackhi_ps((__m256)re, (__m256)im));
    } else {
      storeu<V>(p, (V)_mm256_unpacklo_pd((__m256d)re, (__m256d)im));
      storeu<V>(p + W, (V)_mm256_unpackhi_pd((__m256d)re, (__m256d)im));
    }
    return;
  }
  storeu<V>(p, __builtin_shuffle(re, im, mask<V>([](int l) { return l / 2 + (l % 2) * W; })));
  storeu<V>(p + W, __builtin_shuffle(re, im, mask<V>([](int l) { return W / 2 + l / 2 + (l % 2) * W; })));
}

// a[i][l] -> a[l][i] in the shuffles x86 does cheaply: E x E transposes
// inside each 128-bit block (E = 4 floats: unpcklps / unpckhps, then
// shufps; E = 2 doubles: unpcklpd / unpckhpd), then the transpose of the
// blocks: one round of vperm2f128 at 256 bits, two of vshuff32x4 /
// vshuff64x2 at 512. Each mask below is one of those instructions.
template <int Stride, class V, class Lo, class Hi>
TORSH_INLINE void pair_rows(V* a, Lo lo, Hi hi) {
  constexpr int W = kLanes<V>;
  constexpr IndexV<V> ml = mask<V>(lo), mh = mask<V>(hi);
#pragma GCC unroll 16
  for (int i = 0; i < W; ++i)
    if ((i / Stride) % 2 == 0) {
      const V x = a[i], y = a[i + Stride];
      a[i] = __builtin_shuffle(x, y, ml), a[i + Stride] = __builtin_shuffle(x, y, mh);
    }
}
template <class V>
TORSH_INLINE void transpose(V* a) {
  constexpr int W = kLanes<V>, E = 16 / static_cast<int>(sizeof(LaneT<V>)), blocks = W / E;
  static_assert(blocks == 2 || blocks == 4, "the transpose is written for 256- and 512-bit vectors");
  // unpack lo / hi: [x_e, y_e] for the first / second half of each block.
  pair_rows<1>(
      a, [](int l) { return (l % 2) * W + (l / E) * E + (l % E) / 2; },
      [](int l) { return (l % 2) * W + (l / E) * E + E / 2 + (l % E) / 2; });
  if constexpr (E == 4) {  // shufps: [x0 x1 y0 y1] and [x2 x3 y2 y3] per block
    pair_rows<2>(
        a, [](int l) { return (l % 4 < 2 ? 0 : W - 2) + l; }, [](int l) { return (l % 4 < 2 ? 2 : W) + l; });
    // Rows 4g + 1 and 4g + 2 now hold each other's columns (a renaming, no code).
#pragma GCC unroll 4
    for (int g = 0; g < W; g += 4) std::swap(a[g + 1], a[g + 2]);
  }
  if constexpr (blocks == 2) {  // vperm2f128: blocks (0 | 0) and (1 | 1) of x | y
    pair_rows<E>(
        a, [](int l) { return (l / E == 0 ? 0 : W) + l % E; }, [](int l) { return (l / E == 0 ? 0 : W) + E + l % E; });
  } else {  // vshuff32x4 / vshuff64x2: blocks (0, 2 | 0, 2) and (1, 3 | 1, 3) of x | y, twice
    constexpr auto even = [](int l) { return (l / E < 2 ? 0 : W) + 2 * E * ((l / E) % 2) + l % E; };
    constexpr auto odd = [](int l) { return (l / E < 2 ? 0 : W) + 2 * E * ((l / E) % 2) + E + l % E; };
    pair_rows<E>(a, even, odd);
    pair_rows<2 * E>(a, even, odd);
  }
}

// The first stage of a flat plan: radix W, stride 1, from x (pairs with
// InPairs, re and im swapped with Swap; else split xr / xi) to split yr / yi.
// Its output k is the lane of every later stage's vectors (q mod W, a batch
// index there: no twiddle depends on it). With PermuteK, lane l of each run
// of W holds k = pair_lane_order(W, l), the order the last stage's pair
// stores take without crossing lanes (store_pairs); the renaming is free.
template <bool Swap, bool InPairs, bool PermuteK, class V>
struct FirstStage {
  using L = LaneT<V>;
  static constexpr int W = kLanes<V>;
  // Lane l of a vector holds p0 + order(l): pair_lane_order from pairs,
  // whose twiddles are stored in that order too.
  static constexpr bool permuted = InPairs && !kPairsInOrder<V>;
  static constexpr int order(int l) { return permuted ? pair_lane_order(W, sizeof(L), l) : l; }
  static constexpr int lane_k(int l) { return PermuteK ? pair_lane_order(W, sizeof(L), l) : l; }
  const L *xr, *xi, *twr, *twi;
  std::int64_t m;
  Stride in;
  FirstStage(const typename Plan<L>::Stage& st, const L* xr_, const L* xi_)
      : xr(xr_),
        xi(xi_),
        twr(permuted ? st.pair_tw_re.data() : st.tw_re.data()),
        twi(permuted ? st.pair_tw_im.data() : st.tw_im.data()),
        m(st.len / W),
        in(Stride::of<L>(InPairs ? 2 * m : m)) {}
  // The group of W p from p0: output row p0 + order(l) at y + W order(l).
  TORSH_INLINE void group(std::int64_t p0, L* __restrict yr, L* __restrict yi) const {
    V ar[W], ai[W];
    if constexpr (InPairs) {
      streams<W>(xr + 2 * p0, in, [&](int j, const L* x) { load_pairs<Swap, V>(x, ar[j], ai[j]); });
    } else {
      streams<W>(xr + p0, in, [&](int j, const L* x) { ar[j] = loadu<V>(x); });
      streams<W>(xi + p0, in, [&](int j, const L* x) { ai[j] = loadu<V>(x); });
    }
    butterfly<W, V>(ar, ai, W, nullptr, nullptr);
    const L* tr = twr + p0;
    const L* ti = twi + p0;
#pragma GCC unroll 16
    for (int k = 1; k < W; ++k, step(tr, m), step(ti, m)) {
      const V wr = loadu<V>(tr), wi = loadu<V>(ti);
      const V t = ar[k] * wr - ai[k] * wi;
      ai[k] = ar[k] * wi + ai[k] * wr, ar[k] = t;
    }
    if constexpr (PermuteK) {
      V t[W], u[W];
#pragma GCC unroll 16
      for (int l = 0; l < W; ++l) t[l] = ar[lane_k(l)], u[l] = ai[lane_k(l)];
#pragma GCC unroll 16
      for (int l = 0; l < W; ++l) ar[l] = t[l], ai[l] = u[l];
    }
    transpose(ar);
#pragma GCC unroll 16
    for (int l = 0; l < W; ++l) storeu<V>(yr + W * order(l), ar[l]);
    transpose(ai);
#pragma GCC unroll 16
    for (int l = 0; l < W; ++l) storeu<V>(yi + W * order(l), ai[l]);
  }
};
template <bool Swap, bool InPairs, bool PermuteK, class V>
TORSH_INLINE void first_stage(const typename Plan<LaneT<V>>::Stage& st, const LaneT<V>* xr, const LaneT<V>* xi,
                              LaneT<V>* __restrict yr, LaneT<V>* __restrict yi) {
  constexpr int W = kLanes<V>;
  const FirstStage<Swap, InPairs, PermuteK, V> first(st, xr, xi);
  for (std::int64_t p0 = 0; p0 < first.m; p0 += W) first.group(p0, yr + W * p0, yi + W * p0);
}

// The pieces of one group of a vertical stage: R streams of W lanes in,
// the radix-R butterfly, twiddles, R streams out.
template <int R, class V>
TORSH_INLINE void load_split(const LaneT<V>* xr, const LaneT<V>* xi, Stride in, V* ar, V* ai) {
  streams<R>(xr, in, [&](int j, const LaneT<V>* x) { ar[j] = loadu<V>(x); });
  streams<R>(xi, in, [&](int j, const LaneT<V>* x) { ai[j] = loadu<V>(x); });
}
// Output k times w_k = (t[2 (k - 1)], t[2 (k - 1) + 1]), broadcast where used.
template <int R, class V>
TORSH_INLINE void twiddle(V* ar, V* ai, const LaneT<V>* t) {
#pragma GCC unroll 16
  for (int k = 1; k < R; ++k) {
    const int i = 2 * (k - 1);
    const V wr = splat<V>(t[i]), wi = splat<V>(t[i + 1]);
    const V u = ar[k] * wr - ai[k] * wi;
    ai[k] = ar[k] * wi + ai[k] * wr, ar[k] = u;
  }
}
// To split yr / yi, or to pairs at yr (OutPairs; re and im swapped back
// with Swap, times scale when Scaled).
template <int R, bool OutPairs, bool Swap, bool Scaled, class V>
TORSH_INLINE void store_out(V* ar, V* ai, LaneT<V>* yr, LaneT<V>* yi, Stride out, LaneT<V> scale) {
  using L = LaneT<V>;
  if constexpr (OutPairs) {
    streams<R>(yr, out, [&](int k, L* y) {
      V re = Swap ? ai[k] : ar[k], im = Swap ? ar[k] : ai[k];
      if constexpr (Scaled) re *= scale, im *= scale;
      store_pairs<V, !kPairsInOrder<V>>(y, re, im);
    });
  } else {
    streams<R>(yr, out, [&](int k, L* y) { storeu<V>(y, ar[k]); });
    streams<R>(yi, out, [&](int k, L* y) { storeu<V>(y, ai[k]); });
  }
}

// A vertical stage (s a multiple of W): split x to split y, or to pairs y
// (OutPairs; re and im swapped back with Swap, times scale when Scaled).
// Twiddled is false for a stage of length R (every plan's last): its
// twiddles are all 1, and multiplying by them would be a tenth of a 1024-point
// transform's arithmetic.
template <int R, bool OutPairs, bool Twiddled, bool Swap, bool Scaled, class V>
TORSH_INLINE void vertical_stage(const typename Plan<LaneT<V>>::Stage& st, std::int64_t s, const LaneT<V>* xr,
                                 const LaneT<V>* xi, LaneT<V>* __restrict yr, LaneT<V>* __restrict yi, LaneT<V> scale) {
  using L = LaneT<V>;
  constexpr int W = kLanes<V>;
  const std::int64_t m = st.len / R;
  // Radix 2 and 4 hold their twiddles in registers across the q loop.
  // Radix 8 and 16, whose data fill the registers, broadcast each twiddle
  // where it is used: hoisted out of the loop (which often runs once), GCC
  // spilled the broadcasts and reloaded them.
  constexpr bool kHeld = R <= 4;
  const Stride in = Stride::of<L>(s * m), out = Stride::of<L>(OutPairs ? 2 * s : s);
  for (std::int64_t p = 0; p < m; ++p) {
    const L* const tw = st.tw_by_p.data() + 2 * (R - 1) * p;
    L held[2 * R];
    if constexpr (Twiddled && kHeld)
#pragma GCC unroll 16
      for (int i = 0; i < 2 * (R - 1); ++i) held[i] = tw[i];
    const L* xrp = xr + s * p;
    const L* xip = xi + s * p;
    const std::int64_t yo = s * R * p;
    for (std::int64_t q = 0; q < s; q += W) {
      V ar[R], ai[R];
      load_split<R, V>(xrp + q, xip + q, in, ar, ai);
      butterfly<R, V>(ar, ai, R, nullptr, nullptr);
      if constexpr (Twiddled && kHeld) {
        twiddle<R, V>(ar, ai, held);
      } else if constexpr (Twiddled) {
        const L* t = tw;
        asm("" : "+r"(t));  // read here, not hoisted
        twiddle<R, V>(ar, ai, t);
      }
      if constexpr (OutPairs)
        store_out<R, true, Swap, Scaled, V>(ar, ai, yr + 2 * (yo + q), nullptr, out, scale);
      else
        store_out<R, false, false, false, V>(ar, ai, yr + yo + q, yi + yo + q, out, scale);
    }
  }
}

// Two vertical stages in one pass: stage 1 (radix R1, stride s) then stage 2
// (radix R2, stride s R1), through a block of R1 R2 vectors that stays in
// L1, so the intermediate never makes a trip through the transform's
// buffers. For each p2 of stage 2 and W lanes q1 of stage 1, stage 1 runs
// for p1 = p2 + j m2 (j < R2), the inputs of stage 2's groups q = q1 + k1 s
// (k1 < R1) at p2. Where the arrays outgrow L1 (4096 points and up at 256
// bits) each stage would be a trip through L2; the loads and stores stay, to and
// from the block.
template <int R1, int R2, bool OutPairs, bool Twiddled2, bool Swap, bool Scaled, class V>
TORSH_INLINE void fused_stages(const typename Plan<LaneT<V>>::Stage& st1, const typename Plan<LaneT<V>>::Stage& st2,
                               std::int64_t s, const LaneT<V>* xr, const LaneT<V>* xi, LaneT<V>* __restrict yr,
                               LaneT<V>* __restrict yi, LaneT<V> scale) {
  using L = LaneT<V>;
  constexpr int W = kLanes<V>;
  const std::int64_t m1 = st1.len / R1, m2 = st2.len / R2, s2 = s * R1;
  alignas(64) L br[R1 * R2 * W], bi[R1 * R2 * W];  // [k1][j][lane]
  const Stride in = Stride::of<L>(s * m1), to_block = Stride::of<L>(R2 * W), from_block = Stride::of<L>(W),
               out = Stride::of<L>(OutPairs ? 2 * s2 : s2);
  for (std::int64_t p2 = 0; p2 < m2; ++p2) {
    const L* const tw2 = st2.tw_by_p.data() + 2 * (R2 - 1) * p2;
    for (std::int64_t q1 = 0; q1 < s; q1 += W) {
#pragma GCC unroll 1
      for (int j = 0; j < R2; ++j) {
        const std::int64_t p1 = p2 + j * m2;
        V ar[R1], ai[R1];
        load_split<R1, V>(xr + s * p1 + q1, xi + s * p1 + q1, in, ar, ai);
        butterfly<R1, V>(ar, ai, R1, nullptr, nullptr);
        const L* t = st1.tw_by_p.data() + 2 * (R1 - 1) * p1;
        asm("" : "+r"(t));
        twiddle<R1, V>(ar, ai, t);
        store_out<R1, false, false, false, V>(ar, ai, br + j * W, bi + j * W, to_block, 1);
      }
#pragma GCC unroll 1
      for (int k1 = 0; k1 < R1; ++k1) {
        V ar[R2], ai[R2];
        load_split<R2, V>(br + k1 * R2 * W, bi + k1 * R2 * W, from_block, ar, ai);
        butterfly<R2, V>(ar, ai, R2, nullptr, nullptr);
        if constexpr (Twiddled2) {
          const L* t = tw2;
          asm("" : "+r"(t));
          twiddle<R2, V>(ar, ai, t);
        }
        const std::int64_t yo = q1 + s * k1 + s2 * R2 * p2;
        if constexpr (OutPairs)
          store_out<R2, true, Swap, Scaled, V>(ar, ai, yr + 2 * yo, nullptr, out, scale);
        else
          store_out<R2, false, false, false, V>(ar, ai, yr + yo, yi + yo, out, scale);
      }
    }
  }
}

template <bool OutPairs, bool Twiddled, bool Swap, bool Scaled, class V>
void vertical_radix(const typename Plan<LaneT<V>>::Stage& st, std::int64_t s, const LaneT<V>* xr, const LaneT<V>* xi,
                    LaneT<V>* yr, LaneT<V>* yi, LaneT<V> scale) {
  switch (st.radix) {
    case 2: return vertical_stage<2, OutPairs, Twiddled, Swap, Scaled, V>(st, s, xr, xi, yr, yi, scale);
    case 4: return vertical_stage<4, OutPairs, Twiddled, Swap, Scaled, V>(st, s, xr, xi, yr, yi, scale);
    case 8: return vertical_stage<8, OutPairs, Twiddled, Swap, Scaled, V>(st, s, xr, xi, yr, yi, scale);
    default: return vertical_stage<16, OutPairs, Twiddled, Swap, Scaled, V>(st, s, xr, xi, yr, yi, scale);
  }
}
// A stage to split y.
template <class V>
void vertical(const typename Plan<LaneT<V>>::Stage& st, std::int64_t s, const LaneT<V>* xr, const LaneT<V>* xi,
              LaneT<V>* yr, LaneT<V>* yi) {
  if (st.len == st.radix) return vertical_radix<false, false, false, false, V>(st, s, xr, xi, yr, yi, 1);
  vertical_radix<false, true, false, false, V>(st, s, xr, xi, yr, yi, 1);
}
// A plan's last stage (length = radix, so untwiddled) to pairs y.
template <class V>
void vertical_to_pairs(const typename Plan<LaneT<V>>::Stage& st, std::int64_t s, const LaneT<V>* xr, const LaneT<V>* xi,
                       LaneT<V>* y, bool swap, LaneT<V> scale) {
  if (swap) {
    if (scale != 1) return vertical_radix<true, false, true, true, V>(st, s, xr, xi, y, nullptr, scale);
    return vertical_radix<true, false, true, false, V>(st, s, xr, xi, y, nullptr, scale);
  }
  if (scale != 1) return vertical_radix<true, false, false, true, V>(st, s, xr, xi, y, nullptr, scale);
  vertical_radix<true, false, false, false, V>(st, s, xr, xi, y, nullptr, scale);
}

// The first stage and the next (radix R, stride W) in one pass, through a
// block of R W rows: for W consecutive p1 of stage 1 from p1b, the first
// stage's groups at p0 = p1b + j m1 (j < R) write rows (j, r) of the block,
// stage 1's group at p1b + r reads them (m1 a multiple of W).
template <int R, bool Swap, bool InPairs, bool PermuteK, class V>
TORSH_INLINE void first_fused_stages(const typename Plan<LaneT<V>>::Stage& st0,
                                     const typename Plan<LaneT<V>>::Stage& st1, const LaneT<V>* xr, const LaneT<V>* xi,
                                     LaneT<V>* __restrict yr, LaneT<V>* __restrict yi) {
  using L = LaneT<V>;
  constexpr int W = kLanes<V>;
  const FirstStage<Swap, InPairs, PermuteK, V> first(st0, xr, xi);
  const std::int64_t m1 = st1.len / R;
  alignas(64) L br[R * W * W], bi[R * W * W];  // [j][r][lane]
  const Stride from_block = Stride::of<L>(W * W), out = Stride::of<L>(W);
  for (std::int64_t p1b = 0; p1b < m1; p1b += W) {
#pragma GCC unroll 1
    for (int j = 0; j < R; ++j) first.group(p1b + j * m1, br + j * W * W, bi + j * W * W);
#pragma GCC unroll 1
    for (int r = 0; r < W; ++r) {
      const std::int64_t p1 = p1b + r;
      V ar[R], ai[R];
      load_split<R, V>(br + r * W, bi + r * W, from_block, ar, ai);
      butterfly<R, V>(ar, ai, R, nullptr, nullptr);
      const L* t = st1.tw_by_p.data() + 2 * (R - 1) * p1;
      asm("" : "+r"(t));
      twiddle<R, V>(ar, ai, t);
      store_out<R, false, false, false, V>(ar, ai, yr + W * R * p1, yi + W * R * p1, out, 1);
    }
  }
}
template <bool Swap, bool InPairs, bool PermuteK, class V>
void first_fused(const typename Plan<LaneT<V>>::Stage& st0, const typename Plan<LaneT<V>>::Stage& st1,
                 const LaneT<V>* xr, const LaneT<V>* xi, LaneT<V>* yr, LaneT<V>* yi) {
  if (st1.radix == 4) return first_fused_stages<4, Swap, InPairs, PermuteK, V>(st0, st1, xr, xi, yr, yi);
  first_fused_stages<8, Swap, InPairs, PermuteK, V>(st0, st1, xr, xi, yr, yi);
}
// A plan's first pass: the first stage, with stage 1 when fused.
template <bool Swap, bool InPairs, bool PermuteK, class V>
void first_pass(bool fused, const Plan<LaneT<V>>& plan, const LaneT<V>* xr, const LaneT<V>* xi, LaneT<V>* yr,
                LaneT<V>* yi) {
  if (fused) return first_fused<Swap, InPairs, PermuteK, V>(plan.stages[0], plan.stages[1], xr, xi, yr, yi);
  first_stage<Swap, InPairs, PermuteK, V>(plan.stages[0], xr, xi, yr, yi);
}
template <bool OutPairs, bool Twiddled2, bool Swap, bool Scaled, class V>
void fused_radix(const typename Plan<LaneT<V>>::Stage& a, const typename Plan<LaneT<V>>::Stage& b, std::int64_t s,
                 const LaneT<V>* xr, const LaneT<V>* xi, LaneT<V>* yr, LaneT<V>* yi, LaneT<V> scale) {
  if (a.radix == 4 && b.radix == 4)
    return fused_stages<4, 4, OutPairs, Twiddled2, Swap, Scaled, V>(a, b, s, xr, xi, yr, yi, scale);
  if (a.radix == 4) return fused_stages<4, 8, OutPairs, Twiddled2, Swap, Scaled, V>(a, b, s, xr, xi, yr, yi, scale);
  if (b.radix == 4) return fused_stages<8, 4, OutPairs, Twiddled2, Swap, Scaled, V>(a, b, s, xr, xi, yr, yi, scale);
  fused_stages<8, 8, OutPairs, Twiddled2, Swap, Scaled, V>(a, b, s, xr, xi, yr, yi, scale);
}
// Stages a and b to split y.
template <class V>
void fused(const typename Plan<LaneT<V>>::Stage& a, const typename Plan<LaneT<V>>::Stage& b, std::int64_t s,
           const LaneT<V>* xr, const LaneT<V>* xi, LaneT<V>* yr, LaneT<V>* yi) {
  if (b.len == b.radix) return fused_radix<false, false, false, false, V>(a, b, s, xr, xi, yr, yi, 1);
  fused_radix<false, true, false, false, V>(a, b, s, xr, xi, yr, yi, 1);
}
// Stages a and b (a plan's last) to pairs y.
template <class V>
void fused_to_pairs(const typename Plan<LaneT<V>>::Stage& a, const typename Plan<LaneT<V>>::Stage& b, std::int64_t s,
                    const LaneT<V>* xr, const LaneT<V>* xi, LaneT<V>* y, bool swap, LaneT<V> scale) {
  if (swap) {
    if (scale != 1) return fused_radix<true, false, true, true, V>(a, b, s, xr, xi, y, nullptr, scale);
    return fused_radix<true, false, true, false, V>(a, b, s, xr, xi, y, nullptr, scale);
  }
  if (scale != 1) return fused_radix<true, false, false, true, V>(a, b, s, xr, xi, y, nullptr, scale);
  fused_radix<true, false, false, false, V>(a, b, s, xr, xi, y, nullptr, scale);
}

// See vector_transform in fft_vector.hpp.
template <class V>
void transform(const Plan<LaneT<V>>& plan, const LaneT<V>* xr, const LaneT<V>* xi, LaneT<V>* yr, LaneT<V>* yi,
               bool in_pairs, bool out_pairs, bool conj, LaneT<V> scale, LaneT<V>* a, LaneT<V>* b) {
  using L = LaneT<V>;
  const std::int64_t n = plan.n;
  const std::size_t stages = plan.stages.size();
  const auto& passes = plan.passes;
  const std::size_t count = passes.size();
  L* const ar = a + kPad;
  L* const ai = a + n + 3 * kPad;
  // The other intermediate: y itself, split (re at y, im at y + n), where
  // the plan takes it (Plan::y_scratch) and x lies wholly apart from y;
  // b for pairs out otherwise; with split output y (x is read only by the
  // first stage, so y may alias it).
  const auto apart = [n](const L* u, const L* v) {
    const auto ua = reinterpret_cast<std::uintptr_t>(u), va = reinterpret_cast<std::uintptr_t>(v);
    const auto bytes = static_cast<std::uintptr_t>(2 * n) * sizeof(L);
    return ua + bytes <= va || va + bytes <= ua;
  };
  const bool y_scratch = plan.y_scratch && out_pairs && in_pairs && apart(xr, yr);
  L* const cr = y_scratch ? yr : out_pairs ? b + kPad : yr;
  L* const ci = y_scratch ? yr + n : out_pairs ? b + n + 3 * kPad : yi;
  // Split output: pass i writes a when (count - 1 - i) is odd, so the last
  // lands in y. In place with an odd count that would have the first pass
  // write over x while reading it: then a, y, a, ... and a copy at the end.
  const bool in_place = !in_pairs && !out_pairs && xr == yr;
  const bool copy_back = in_place && count % 2 == 1;
  const auto to_a = [&](std::size_t i) {
    if (y_scratch) return (count - 2 - i) % 2 == 0;  // the last pass reads a
    if (out_pairs || copy_back) return i % 2 == 0;
    return (count - 1 - i) % 2 == 1;
  };
  L* const fr = to_a(0) ? ar : cr;
  L* const fi = to_a(0) ? ai : ci;
  // conj only comes with pairs in and out (vector_transform).
  // Pairs out: the first stage orders k as the last one's pair stores take
  // them (store_pairs); split out: in order.
  const bool permute_k = out_pairs && stages > 1;
  const bool f0 = passes[0].fused;
  if (!in_pairs && permute_k)
    first_pass<false, false, true, V>(f0, plan, xr, xi, fr, fi);
  else if (!in_pairs)
    first_pass<false, false, false, V>(f0, plan, xr, xi, fr, fi);
  else if (!permute_k)
    first_pass<false, true, false, V>(f0, plan, xr, xi, fr, fi);
  else if (conj)
    first_pass<true, true, true, V>(f0, plan, xr, xi, fr, fi);
  else
    first_pass<false, true, true, V>(f0, plan, xr, xi, fr, fi);
  const L* sr = fr;
  const L* si = fi;
  for (std::size_t i = 1; i < count; ++i) {
    const auto& st = plan.stages[passes[i].start];
    const auto& next = plan.stages[passes[i].start + (passes[i].fused ? 1 : 0)];
    if (i + 1 == count && out_pairs) {
      if (passes[i].fused) return fused_to_pairs<V>(st, next, st.stride, sr, si, yr, conj, scale);
      return vertical_to_pairs<V>(st, st.stride, sr, si, yr, conj, scale);
    }
    L* dr = to_a(i) ? ar : cr;
    L* di = to_a(i) ? ai : ci;
    if (passes[i].fused)
      fused<V>(st, next, st.stride, sr, si, dr, di);
    else
      vertical<V>(st, st.stride, sr, si, dr, di);
    sr = dr, si = di;
  }
  if (copy_back) {
    std::memcpy(yr, ar, sizeof(L) * n);
    std::memcpy(yi, ai, sizeof(L) * n);
  }
}

// See vector_batched in fft_vector.hpp.
template <class V>
void batched(const Plan<LaneT<V>>& plan, LaneT<V>* re, LaneT<V>* im, LaneT<V>* work, std::int64_t batch) {
  using L = LaneT<V>;
  const std::int64_t len = plan.n * batch;
  L *cr = re, *ci = im, *nr = work + kPad, *ni = work + len + 3 * kPad;
  for (const auto& st : plan.stages) {
    vertical<V>(st, st.stride * batch, cr, ci, nr, ni);
    std::swap(cr, nr), std::swap(ci, ni);
  }
  if (cr != re) {
    std::memcpy(re, cr, sizeof(L) * len);
    std::memcpy(im, ci, sizeof(L) * len);
  }
}

}  // namespace
}  // namespace torsh::cpu::fft

// One level's entry points (fft_vector_isa.hpp) on vectors of `bytes`: what
// fft_vector_avx512.cpp and fft_vector_avx2.cpp define under their target
// pragmas.
#define TORSH_FFT_VECTOR_LEVEL(isa, bytes)                                                                       \
  namespace torsh::cpu::fft {                                                                                    \
  namespace isa {                                                                                                \
  namespace {                                                                                                    \
  using FloatV = float __attribute__((vector_size(bytes)));                                                      \
  using DoubleV = double __attribute__((vector_size(bytes)));                                                    \
  template <class T>                                                                                             \
  using Vec = std::conditional_t<std::is_same_v<T, float>, FloatV, DoubleV>;                                     \
  }                                                                                                              \
  template <class T>                                                                                             \
  void run_transform(const Plan<T>& plan, const T* xr, const T* xi, T* yr, T* yi, bool in_pairs, bool out_pairs, \
                     bool conj, T scale, T* a, T* b) {                                                           \
    transform<Vec<T>>(plan, xr, xi, yr, yi, in_pairs, out_pairs, conj, scale, a, b);                             \
  }                                                                                                              \
  template <class T>                                                                                             \
  void run_batched(const Plan<T>& plan, T* re, T* im, T* work, std::int64_t batch) {                             \
    batched<Vec<T>>(plan, re, im, work, batch);                                                                  \
  }                                                                                                              \
  }                                                                                                              \
  TORSH_FFT_VECTOR_INSTANTIATE(isa)                                                                              \
  }
