#pragma once
// rt::FftArgs on a GPU as a sequence of fft.kern.h passes, shared by every
// C-family backend: gather the lines into rows, one Stockham stage per radix
// (ping-ponging between two row buffers), scatter the result scaled. Lengths
// with a prime factor above 7 go through Bluestein's chirp-z transform: a
// power-of-two convolution whose kernel is transformed on the device per
// call. The backend supplies its buffers and launches through `Gpu`:
//   Buf alloc(std::size_t bytes);           freed when it goes out of scope,
//                                           after the stream's work (stream-ordered)
//   void gather(x, a, lines, n, inner, kind, len_x);
//   void stage(from, to, lines, n, len, s, r, sign);
//   void scatter(a, out, lines, n, inner, kind, len_out, scale);
//   void chirp(a, p, lines, n, m, sign, mode);
//   void pointwise(p, b, lines, m);
// where a, p, b, from, to are Buf& and x / out the args' tensors; and, where
// the backend has fft_local (one work-group per line, the stages in local
// memory), for lines of at most kFftLocalMax values with radix stages only:
//   void local(lines, n, inner, kind, len_x, len_out, radices, sign, scale);
// radices packed 4 bits per stage, the first stage's in the low bits.
#include <cstdint>
#include <utility>
#include <vector>

#include "torsh/backend/op_args.hpp"

namespace torsh::gpu {

// The stage radices of n (8s, then 4 or 2, then 3, 5, 7), or empty when n
// has another prime factor.
inline std::vector<int> fft_radices(std::int64_t n) {
  std::vector<int> r;
  while (n % 8 == 0) r.push_back(8), n /= 8;
  if (n % 4 == 0) r.push_back(4), n /= 4;
  if (n % 2 == 0) r.push_back(2), n /= 2;
  for (const int p : {3, 5, 7})
    while (n % p == 0) r.push_back(p), n /= p;
  if (n != 1) r.clear();
  return r;
}

// fft_local's two local buffers hold 2048 f32 / 1024 f64 values each.
inline std::int64_t fft_local_max(std::size_t elem) { return elem == 4 ? 1024 : 512; }

template <class Gpu>
concept HasFftLocal = requires(Gpu& g) {
  g.local(1, 1, 1, 0, 1, 1, 0, 0, 1.0);
};

template <class Gpu>
void run_fft_passes(Gpu& g, const rt::FftArgs& a, std::size_t elem) {
  const std::int64_t n = a.n, lines = a.outer * a.inner, spectrum = n / 2 + 1;
  const int kind = static_cast<int>(a.kind);
  const int sign = a.inverse ? 1 : -1;
  const std::int64_t len_x = a.kind == rt::FftKind::C2R ? spectrum : n;
  const std::int64_t len_out = a.kind == rt::FftKind::R2C ? spectrum : n;
  const auto rows = [&](std::int64_t count, std::int64_t len) {
    return static_cast<std::size_t>(count * len) * 2 * elem;
  };
  // Runs the stages of length len over `count` rows; returns the buffer holding the result.
  const auto transform = [&](auto& x, auto& y, std::int64_t count, std::int64_t len, int sgn) -> decltype(x)& {
    auto* from = &x;
    auto* to = &y;
    std::int64_t sub = len;
    for (const int r : fft_radices(len)) {
      g.stage(*from, *to, count, len, sub, len / sub, r, sgn);
      std::swap(from, to);
      sub /= r;
    }
    return *from;
  };
  if constexpr (HasFftLocal<Gpu>) {
    const std::vector<int> radices = fft_radices(n);
    if (n <= fft_local_max(elem) && (n == 1 || !radices.empty()) && radices.size() <= 7) {
      int packed = 0;
      for (std::size_t i = radices.size(); i-- > 0;) packed = packed << 4 | radices[i];
      g.local(lines, n, a.inner, kind, len_x, len_out, packed, sign, a.scale);
      return;
    }
  }
  auto buf_a = g.alloc(rows(lines, n));
  g.gather(buf_a, lines, n, a.inner, kind, len_x);
  if (n == 1 || !fft_radices(n).empty()) {
    auto buf_b = g.alloc(rows(lines, n));
    auto& result = transform(buf_a, buf_b, lines, n, sign);
    g.scatter(result, lines, n, a.inner, kind, len_out, a.scale);
    return;
  }
  std::int64_t m = 1;
  while (m < 2 * n - 1) m *= 2;
  auto kern = g.alloc(rows(1, m));
  auto kern2 = g.alloc(rows(1, m));
  g.chirp(buf_a, kern, 1, n, m, sign, 1);
  auto& kt = transform(kern, kern2, 1, m, -1);
  auto p = g.alloc(rows(lines, m));
  auto q = g.alloc(rows(lines, m));
  g.chirp(buf_a, p, lines, n, m, sign, 0);
  auto& pt = transform(p, q, lines, m, -1);
  g.pointwise(pt, kt, lines, m);
  auto& conv = transform(pt, &pt == &p ? q : p, lines, m, 1);
  g.chirp(buf_a, conv, lines, n, m, sign, 2);
  g.scatter(buf_a, lines, n, a.inner, kind, len_out, a.scale);
}

}  // namespace torsh::gpu
