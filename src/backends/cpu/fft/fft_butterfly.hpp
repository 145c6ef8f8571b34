#pragma once
// The radix-r butterflies of the Stockham stages, for scalars (fft_stages.cpp)
// and for GCC vectors of them (fft_simd_*.cpp, one butterfly per lane). In an
// unnamed namespace: each file compiles them for its own x86 level.
#include <type_traits>
#include <utility>

#include "fft_plan.hpp"

#define TORSH_INLINE __attribute__((always_inline)) inline

// GCC's -Wmaybe-uninitialized misreads the odd butterfly's arrays, filled
// up to the run-time half length h only, in every stage that inlines it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace torsh::cpu::fft {
namespace {

// The element type of T: T itself for a scalar, the lane type of a GCC vector.
template <class T>
auto lane_of() {
  if constexpr (std::is_arithmetic_v<T>)
    return T{};
  else
    return std::remove_cvref_t<decltype(std::declval<T>()[0])>{};
}
template <class T>
using Lane = decltype(lane_of<T>());

// The radix-r DFT of a[0..r) in place, forward sign. R = 0: r known at run
// time (odd primes above 7, by the direct sum). T is a float, a double or
// a GCC vector of them (the same code on every lane: fft_simd_*.cpp).
template <int R, class T>
TORSH_INLINE void butterfly(T* ar, T* ai, int r, const Lane<T>* rc, const Lane<T>* rs) {
  if constexpr (R == 2) {
    const T tr = ar[0] - ar[1], ti = ai[0] - ai[1];
    ar[0] += ar[1], ai[0] += ai[1];
    ar[1] = tr, ai[1] = ti;
  } else if constexpr (R == 4) {
    const T t0r = ar[0] + ar[2], t0i = ai[0] + ai[2], t1r = ar[0] - ar[2], t1i = ai[0] - ai[2];
    const T t2r = ar[1] + ar[3], t2i = ai[1] + ai[3], t3r = ar[1] - ar[3], t3i = ai[1] - ai[3];
    ar[0] = t0r + t2r, ai[0] = t0i + t2i;
    ar[2] = t0r - t2r, ai[2] = t0i - t2i;
    ar[1] = t1r + t3i, ai[1] = t1i - t3r;  // t1 + (-i) t3
    ar[3] = t1r - t3i, ai[3] = t1i + t3r;
  } else if constexpr (R == 8) {
    T er[4] = {ar[0], ar[2], ar[4], ar[6]}, ei[4] = {ai[0], ai[2], ai[4], ai[6]};
    T orr[4] = {ar[1], ar[3], ar[5], ar[7]}, oi[4] = {ai[1], ai[3], ai[5], ai[7]};
    butterfly<4, T>(er, ei, 4, rc, rs);
    butterfly<4, T>(orr, oi, 4, rc, rs);
    constexpr Lane<T> h = static_cast<Lane<T>>(0.70710678118654752440084436210484904);
    // o1 *= (h, -h); o2 *= -i; o3 *= (-h, -h)
    T x = orr[1], y = oi[1];
    orr[1] = h * (x + y), oi[1] = h * (y - x);
    x = orr[2], y = oi[2];
    orr[2] = y, oi[2] = -x;
    x = orr[3], y = oi[3];
    orr[3] = h * (y - x), oi[3] = -h * (x + y);
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      ar[k] = er[k] + orr[k], ai[k] = ei[k] + oi[k];
      ar[k + 4] = er[k] - orr[k], ai[k + 4] = ei[k] - oi[k];
    }
  } else if constexpr (R == 16) {
    // 16 = 4 x 4: radix-4 DFTs over a[j2 + 4 j1] (j1), the twiddles
    // w16^(j2 k1), radix-4 DFTs over j2; X[k1 + 4 k2] comes out of the second.
    T br[4][4], bi[4][4];
#pragma GCC unroll 4
    for (int j2 = 0; j2 < 4; ++j2) {
      T xr[4] = {ar[j2], ar[j2 + 4], ar[j2 + 8], ar[j2 + 12]}, xi[4] = {ai[j2], ai[j2 + 4], ai[j2 + 8], ai[j2 + 12]};
      butterfly<4, T>(xr, xi, 4, rc, rs);
#pragma GCC unroll 4
      for (int k1 = 0; k1 < 4; ++k1) br[k1][j2] = xr[k1], bi[k1][j2] = xi[k1];
    }
    using L = Lane<T>;
    constexpr L c1 = static_cast<L>(0.92387953251128675612818318939678829);  // cos(pi / 8)
    constexpr L s1 = static_cast<L>(0.38268343236508977172845998403039887);  // sin(pi / 8)
    constexpr L h = static_cast<L>(0.70710678118654752440084436210484904);
    const auto rotate = [](T& x, T& y, L wr, L wi) {
      const T t = x * wr - y * wi;
      y = x * wi + y * wr, x = t;
    };
    rotate(br[1][1], bi[1][1], c1, -s1);  // w16^1
    rotate(br[1][2], bi[1][2], h, -h);    // w16^2
    rotate(br[1][3], bi[1][3], s1, -c1);  // w16^3
    rotate(br[2][1], bi[2][1], h, -h);    // w16^2
    {                                     // w16^4 = -i
      const T t = br[2][2];
      br[2][2] = bi[2][2], bi[2][2] = -t;
    }
    rotate(br[2][3], bi[2][3], -h, -h);   // w16^6
    rotate(br[3][1], bi[3][1], s1, -c1);  // w16^3
    rotate(br[3][2], bi[3][2], -h, -h);   // w16^6
    rotate(br[3][3], bi[3][3], -c1, s1);  // w16^9
#pragma GCC unroll 4
    for (int k1 = 0; k1 < 4; ++k1) {
      butterfly<4, T>(br[k1], bi[k1], 4, rc, rs);
#pragma GCC unroll 4
      for (int k2 = 0; k2 < 4; ++k2) ar[k1 + 4 * k2] = br[k1][k2], ai[k1 + 4 * k2] = bi[k1][k2];
    }
  } else {
    // Odd r: with P_j = a_j + a_(r-j), M_j = a_j - a_(r-j) (j = 1..h),
    //   y_k = a_0 + sum P_j cos(2 pi j k / r) - i sum M_j sin(2 pi j k / r),
    // and y_(r-k) the same with the sine term's sign flipped.
    const int n = R ? R : r, h = (n - 1) / 2;
    constexpr int kCap = R ? (R - 1) / 2 : (kMaxGenericRadix - 1) / 2;
    T pr[kCap], pi[kCap], mr[kCap], mi[kCap];
    T y0r = ar[0], y0i = ai[0];
#pragma GCC unroll 16
    for (int j = 1; j <= h; ++j) {
      pr[j - 1] = ar[j] + ar[n - j], pi[j - 1] = ai[j] + ai[n - j];
      mr[j - 1] = ar[j] - ar[n - j], mi[j - 1] = ai[j] - ai[n - j];
      y0r += pr[j - 1], y0i += pi[j - 1];
    }
#pragma GCC unroll 16
    for (int k = 1; k <= h; ++k) {
      T sr = ar[0], si = ai[0], br{}, bi{};
#pragma GCC unroll 16
      for (int j = 1; j <= h; ++j) {
        const Lane<T> c = rc[j * n + k], s = rs[j * n + k];
        sr += pr[j - 1] * c, si += pi[j - 1] * c;
        br += mr[j - 1] * s, bi += mi[j - 1] * s;
      }
      ar[k] = sr + bi, ai[k] = si - br;
      ar[n - k] = sr - bi, ai[n - k] = si + br;
    }
    ar[0] = y0r, ai[0] = y0i;
  }
}

}  // namespace
}  // namespace torsh::cpu::fft

#pragma GCC diagnostic pop
