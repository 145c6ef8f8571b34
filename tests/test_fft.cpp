// FFTs on the CPU backend against a direct DFT summed in long double: every
// radix path (2, 3, 4, 5, 7, 8, generic primes, Bluestein), real transforms of
// even and odd length both ways, axes that are not the last, padding and
// truncation, the three normalisations, the N-D forms, long transforms split
// over threads (checked at sampled frequencies), and a clear error for each
// bad argument; the out= forms written directly, through a temporary (a
// strided out, out = x) and under graph capture. Other backends are compared with the CPU by
// tests/backend_ops (fft cases).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "torsh/torsh.hpp"

using namespace torsh;
namespace tf = torsh::ops::fft;
using cld = std::complex<long double>;

namespace {

Backend& host() {
  static Backend b = Backend::create(BackendType::Cpu);
  return b;
}

// Values as doubles, uploaded as f32 or f64.
Tensor make(const std::vector<double>& v, const Shape& s, DType t) {
  if (t == DType::F64) return host().from_host(v.data(), s, t);
  std::vector<float> f(v.begin(), v.end());
  return host().from_host(f.data(), s, t);
}

std::vector<double> randoms(std::size_t n, std::uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<double> d;
  std::vector<double> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

std::vector<double> values(const Tensor& t) {
  return t.dtype() == DType::F64 ? t.to_host<double>() : [&] {
    const auto f = t.to_host<float>();
    return std::vector<double>(f.begin(), f.end());
  }();
}

// sum_t x_t exp(sign 2 pi i t k / n), k of `ks` (all k < n when empty).
std::vector<cld> dft(const std::vector<cld>& x, int sign, const std::vector<std::int64_t>& ks = {}) {
  const auto n = static_cast<std::int64_t>(x.size());
  std::vector<std::int64_t> want = ks;
  if (want.empty())
    for (std::int64_t k = 0; k < n; ++k) want.push_back(k);
  std::vector<cld> root(static_cast<std::size_t>(n));
  for (std::int64_t t = 0; t < n; ++t) {
    const long double a = sign * 2 * std::numbers::pi_v<long double> * static_cast<long double>(t) / n;
    root[static_cast<std::size_t>(t)] = cld(std::cos(a), std::sin(a));
  }
  std::vector<cld> y;
  for (const std::int64_t k : want) {
    cld s = 0;
    std::int64_t tk = 0;  // t k mod n
    for (std::int64_t t = 0; t < n; ++t, tk = (tk + k) % n)
      s += x[static_cast<std::size_t>(t)] * root[static_cast<std::size_t>(tk)];
    y.push_back(s);
  }
  return y;
}

// Relative error bound for a transform of length n in dtype t.
double tol(DType t, std::int64_t n) {
  const double lg = std::log2(static_cast<double>(n) + 1) + 1;
  return (t == DType::F64 ? 4e-15 : 2e-6) * lg;
}

// max |a - b| / max |b|
double rel_err(const std::vector<cld>& a, const std::vector<cld>& b) {
  long double e = 0, m = 1e-30L;
  for (std::size_t i = 0; i < b.size(); ++i) e = std::max(e, std::abs(a[i] - b[i])), m = std::max(m, std::abs(b[i]));
  return static_cast<double>(e / m);
}

std::vector<cld> as_complex(const std::vector<double>& v) {
  std::vector<cld> c(v.size() / 2);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = cld(v[2 * i], v[2 * i + 1]);
  return c;
}

const std::vector<std::int64_t> kLengths = {1,   2,   3,   4,   5,   6,    7,    8,    9,    11,   12,   13,
                                            16,  17,  25,  31,  32,  37,   49,   60,   64,   97,   100,  121,
                                            128, 210, 243, 256, 512, 1000, 1024, 1031, 2048, 2310, 4096, 4097};

class Fft : public ::testing::TestWithParam<DType> {};

TEST_P(Fft, ComplexEveryLengthBothDirections) {
  const DType t = GetParam();
  for (const std::int64_t n : kLengths) {
    const std::int64_t batch = 3;
    const auto v = randoms(static_cast<std::size_t>(batch * n * 2), static_cast<std::uint32_t>(n));
    const Tensor x = make(v, Shape{batch, n, 2}, t);
    const auto fwd = as_complex(values(tf::fft(x)));
    const auto inv = as_complex(values(tf::ifft(x)));
    const auto cv = as_complex(v);
    for (std::int64_t b = 0; b < batch; ++b) {
      std::vector<cld> line(cv.begin() + b * n, cv.begin() + (b + 1) * n);
      if (t == DType::F32)
        for (auto& c : line) c = cld(static_cast<float>(c.real()), static_cast<float>(c.imag()));
      const auto ref = dft(line, -1);
      auto iref = dft(line, +1);
      for (auto& c : iref) c /= static_cast<long double>(n);
      const std::vector<cld> got(fwd.begin() + b * n, fwd.begin() + (b + 1) * n);
      const std::vector<cld> igot(inv.begin() + b * n, inv.begin() + (b + 1) * n);
      EXPECT_LE(rel_err(got, ref), tol(t, n)) << "fft n=" << n;
      EXPECT_LE(rel_err(igot, iref), tol(t, n)) << "ifft n=" << n;
    }
  }
}

TEST_P(Fft, RealBothWaysEvenAndOdd) {
  const DType t = GetParam();
  for (const std::int64_t n : kLengths) {
    const auto v = randoms(static_cast<std::size_t>(2 * n), static_cast<std::uint32_t>(n + 7));
    const Tensor x = make(v, Shape{2, n}, t);
    const Tensor spec = tf::rfft(x);
    ASSERT_EQ(spec.shape(), (Shape{2, n / 2 + 1, 2}));
    const auto got = as_complex(values(spec));
    for (std::int64_t b = 0; b < 2; ++b) {
      std::vector<cld> line;
      for (std::int64_t i = 0; i < n; ++i) {
        const double r = v[static_cast<std::size_t>(b * n + i)];
        line.emplace_back(t == DType::F32 ? static_cast<float>(r) : r, 0);
      }
      auto ref = dft(line, -1);
      ref.resize(static_cast<std::size_t>(n / 2 + 1));
      const std::vector<cld> g(got.begin() + b * (n / 2 + 1), got.begin() + (b + 1) * (n / 2 + 1));
      EXPECT_LE(rel_err(g, ref), tol(t, n)) << "rfft n=" << n;
    }
    // irfft of the spectrum gives the signal back (length n given: odd n needs it).
    const auto back = values(tf::irfft(spec, n));
    std::vector<cld> a, b;
    for (std::size_t i = 0; i < back.size(); ++i) a.emplace_back(back[i], 0), b.emplace_back(v[i], 0);
    EXPECT_LE(rel_err(a, b), 2 * tol(t, n)) << "irfft(rfft) n=" << n;
  }
}

TEST_P(Fft, IrfftMatchesDirectSumAndIgnoresImaginaryEnds) {
  const DType t = GetParam();
  for (const std::int64_t n : {1, 2, 5, 8, 9, 30, 37, 64, 99}) {
    const std::int64_t m = n / 2 + 1;
    auto v = randoms(static_cast<std::size_t>(2 * m), static_cast<std::uint32_t>(n));
    const auto got = values(tf::irfft(make(v, Shape{m, 2}, t), n));
    // The Hermitian extension with the imaginary parts that cannot exist dropped.
    std::vector<cld> full(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < m; ++k) {
      double im = v[static_cast<std::size_t>(2 * k + 1)];
      if (k == 0 || (n % 2 == 0 && k == n / 2)) im = 0;
      full[static_cast<std::size_t>(k)] = cld(v[static_cast<std::size_t>(2 * k)], im);
      if (k > 0) full[static_cast<std::size_t>((n - k) % n)] = std::conj(full[static_cast<std::size_t>(k)]);
    }
    auto ref = dft(full, +1);
    std::vector<cld> g;
    for (std::int64_t i = 0; i < n; ++i)
      ref[static_cast<std::size_t>(i)] /= n, g.emplace_back(got[static_cast<std::size_t>(i)], 0);
    for (auto& c : ref) c = cld(c.real(), 0);
    EXPECT_LE(rel_err(g, ref), tol(t, n)) << "irfft n=" << n;
  }
}

TEST_P(Fft, InnerAxesPaddingTruncationAndNorms) {
  const DType t = GetParam();
  const std::int64_t A = 3, B = 5, C = 6;
  const auto v = randoms(static_cast<std::size_t>(A * B * C * 2), 3);
  const Tensor x = make(v, Shape{A, B, C, 2}, t);
  const auto c = as_complex(v);
  const auto at = [&](std::int64_t a, std::int64_t b, std::int64_t cc) {
    return c[static_cast<std::size_t>((a * B + b) * C + cc)];
  };
  struct Case {
    std::int64_t axis, n;
    tf::Norm norm;
    bool inverse;
  };
  for (const Case k : {Case{0, 3, tf::Norm::Backward, false}, Case{1, 5, tf::Norm::Ortho, false},
                       Case{1, 8, tf::Norm::Forward, true}, Case{-2, 3, tf::Norm::Backward, true},
                       Case{0, 7, tf::Norm::Ortho, true}, Case{2, 4, tf::Norm::Forward, false}}) {
    const Tensor y = k.inverse ? tf::ifft(x, k.n, k.axis, k.norm) : tf::fft(x, k.n, k.axis, k.norm);
    const std::size_t ax = static_cast<std::size_t>(k.axis < 0 ? k.axis + 3 : k.axis);
    const std::int64_t dims[3] = {A, B, C};
    std::int64_t odims[3] = {A, B, C};
    odims[ax] = k.n;
    ASSERT_EQ(y.shape(), (Shape{odims[0], odims[1], odims[2], 2}));
    const auto got = as_complex(values(y));
    const long double n = static_cast<long double>(k.n);
    const long double s = k.norm == tf::Norm::Ortho                    ? 1 / std::sqrt(n)
                          : (k.norm == tf::Norm::Forward) != k.inverse ? 1 / n
                                                                       : 1;
    for (std::int64_t i = 0; i < odims[0]; ++i)
      for (std::int64_t j = 0; j < odims[1]; ++j)
        for (std::int64_t l = 0; l < odims[2]; ++l) {
          if ((ax == 0 ? j : i) != 0 && (ax == 2 ? j : l) != 0) continue;  // a few lines suffice
          std::vector<cld> line(static_cast<std::size_t>(k.n), 0);
          for (std::int64_t q = 0; q < std::min(k.n, dims[ax]); ++q)
            line[static_cast<std::size_t>(q)] = ax == 0 ? at(q, j, l) : ax == 1 ? at(i, q, l) : at(i, j, q);
          if (t == DType::F32)
            for (auto& z : line) z = cld(static_cast<float>(z.real()), static_cast<float>(z.imag()));
          const std::int64_t kk = ax == 0 ? i : ax == 1 ? j : l;
          const cld ref = dft(line, k.inverse ? +1 : -1, {kk})[0] * s;
          const cld g = got[static_cast<std::size_t>((i * odims[1] + j) * odims[2] + l)];
          EXPECT_LE(static_cast<double>(std::abs(g - ref)), 1e-5) << "axis " << k.axis << " n " << k.n;
        }
  }
}

// Power-of-two lines along an inner axis: the vector stages (AVX2 / AVX-512)
// run blocks of lines side by side, the scalar stages the rest of a block;
// real lines with a stride go through the in-place split form. Checked
// against the direct sum at sampled frequencies of every line.
TEST_P(Fft, PowerOfTwoLinesAlongAnInnerAxis) {
  const DType t = GetParam();
  for (const std::int64_t n : {64, 256, 1024, 8192}) {
    const std::int64_t inner = n >= 8192 ? 3 : 40;  // two or five full blocks and a partial one
    const auto v = randoms(static_cast<std::size_t>(n * inner * 2), 21);
    const Tensor x = make(v, Shape{n, inner, 2}, t);
    const Tensor r = make(std::vector<double>(v.begin(), v.begin() + n * inner), Shape{n, inner}, t);
    const Tensor y = tf::fft(x, {}, 0), yi = tf::ifft(x, {}, 0), yr = tf::rfft(r, {}, 0);
    const auto gy = as_complex(values(y)), gi = as_complex(values(yi)), gr = as_complex(values(yr));
    const Tensor back = tf::irfft(yr, n, 0);
    const auto gb = values(back);
    const std::vector<std::int64_t> ks = {0, 1, 5, n / 2, n - 1};
    for (std::int64_t j = 0; j < inner; ++j) {
      std::vector<cld> line(static_cast<std::size_t>(n)), real(static_cast<std::size_t>(n));
      for (std::int64_t q = 0; q < n; ++q) {
        const auto o = static_cast<std::size_t>(q * inner + j);
        line[static_cast<std::size_t>(q)] = cld(v[2 * o], v[2 * o + 1]);
        real[static_cast<std::size_t>(q)] = cld(v[o], 0);
        if (t == DType::F32) {
          line[static_cast<std::size_t>(q)] = cld(static_cast<float>(v[2 * o]), static_cast<float>(v[2 * o + 1]));
          real[static_cast<std::size_t>(q)] = cld(static_cast<float>(v[o]), 0);
        }
      }
      const auto f = dft(line, -1, ks), b = dft(line, +1, ks), fr = dft(real, -1, ks);
      std::vector<cld> got_f, got_b, got_r, ref_b, ref_r;
      for (std::size_t i = 0; i < ks.size(); ++i) {
        got_f.push_back(gy[static_cast<std::size_t>(ks[i] * inner + j)]);
        got_b.push_back(gi[static_cast<std::size_t>(ks[i] * inner + j)] * static_cast<long double>(n));
        if (ks[i] <= n / 2) got_r.push_back(gr[static_cast<std::size_t>(ks[i] * inner + j)]), ref_r.push_back(fr[i]);
      }
      EXPECT_LE(rel_err(got_f, f), tol(t, n)) << "fft n=" << n << " line " << j;
      EXPECT_LE(rel_err(got_b, b), tol(t, n)) << "ifft n=" << n << " line " << j;
      EXPECT_LE(rel_err(got_r, ref_r), tol(t, n)) << "rfft n=" << n << " line " << j;
      double e = 0;
      for (std::int64_t q = 0; q < n; ++q)
        e = std::max(e, std::abs(gb[static_cast<std::size_t>(q * inner + j)] -
                                 static_cast<double>(real[static_cast<std::size_t>(q)].real())));
      EXPECT_LE(e, t == DType::F64 ? 1e-12 : 1e-4) << "irfft(rfft) n=" << n << " line " << j;
    }
  }
}

TEST_P(Fft, NdFormsAgreeWithAxisByAxis) {
  const DType t = GetParam();
  const auto v = randoms(4 * 6 * 10 * 2, 11);
  const Tensor x = make(v, Shape{4, 6, 10, 2}, t);
  const Tensor r = make(randoms(4 * 6 * 10, 12), Shape{4, 6, 10}, t);
  const auto near = [&](const Tensor& a, const Tensor& b) {
    ASSERT_EQ(a.shape(), b.shape());
    const auto va = values(a), vb = values(b);
    double e = 0;
    for (std::size_t i = 0; i < va.size(); ++i) e = std::max(e, std::abs(va[i] - vb[i]));
    EXPECT_LE(e, t == DType::F64 ? 1e-12 : 2e-4);
  };
  near(tf::fftn(x), tf::fft(tf::fft(tf::fft(x, {}, 2), {}, 1), {}, 0));
  near(tf::fft2(x), tf::fft(tf::fft(x, {}, 2), {}, 1));
  near(tf::ifftn(x, tf::Axes{8, 3}, tf::Axes{0, 2}), tf::ifft(tf::ifft(x, 3, 2), 8, 0));
  near(tf::rfftn(r), tf::fft(tf::fft(tf::rfft(r, {}, 2), {}, 1), {}, 0));
  near(tf::rfft2(r, tf::Axes{5, 9}), tf::fft(tf::rfft(r, 9, 2), 5, 1));
  near(tf::irfftn(tf::rfftn(r), tf::Axes{4, 6, 10}), r);
  near(tf::irfft2(tf::rfft2(r)), r);
  near(tf::ifftn(tf::fftn(x, std::nullopt, std::nullopt, tf::Norm::Ortho), std::nullopt, std::nullopt, tf::Norm::Ortho),
       x);
}

// hfft against the direct sum over the Hermitian extension of its input (the
// imaginary parts that cannot exist dropped), ihfft against conj(DFT) / n,
// each norm's scale, and their out= forms bit for bit.
TEST_P(Fft, HermitianPairMatchesTheDirectSum) {
  const DType t = GetParam();
  for (const std::int64_t n : {1, 2, 5, 8, 9, 30, 37, 64, 99, 1024}) {
    const std::int64_t m = n / 2 + 1;
    const auto v = randoms(static_cast<std::size_t>(2 * m), static_cast<std::uint32_t>(n + 40));
    const Tensor a = make(v, Shape{m, 2}, t);
    std::vector<cld> ext(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < m; ++k) {
      const auto at = [&](std::int64_t i) {
        const double x = v[static_cast<std::size_t>(i)];
        return t == DType::F32 ? static_cast<long double>(static_cast<float>(x)) : static_cast<long double>(x);
      };
      const long double im = (k == 0 || (n % 2 == 0 && k == n / 2)) ? 0 : at(2 * k + 1);
      ext[static_cast<std::size_t>(k)] = cld(at(2 * k), im);
      if (k > 0) ext[static_cast<std::size_t>((n - k) % n)] = std::conj(ext[static_cast<std::size_t>(k)]);
    }
    const auto ref = dft(ext, -1);
    for (const tf::Norm norm : {tf::Norm::Backward, tf::Norm::Ortho, tf::Norm::Forward}) {
      const long double s = norm == tf::Norm::Backward ? 1.0L
                            : norm == tf::Norm::Ortho  ? 1.0L / std::sqrt(static_cast<long double>(n))
                                                       : 1.0L / n;
      const Tensor h = tf::hfft(a, n, -1, norm);
      ASSERT_EQ(h.shape(), (Shape{n}));
      const auto got = values(h);
      std::vector<cld> g, r;
      for (std::int64_t i = 0; i < n; ++i)
        g.emplace_back(got[static_cast<std::size_t>(i)], 0),
            r.emplace_back(ref[static_cast<std::size_t>(i)].real() * s, 0);
      EXPECT_LE(rel_err(g, r), tol(t, n)) << "hfft n=" << n;
      Tensor o = host().empty(h.shape(), t);
      tf::hfft_out(a, o, n, -1, norm);
      EXPECT_EQ(values(o), got) << "hfft_out n=" << n;
    }
    // ihfft of a real signal: conj of its DFT over n, the first m values.
    const auto xv = randoms(static_cast<std::size_t>(n), static_cast<std::uint32_t>(n + 41));
    const Tensor x = make(xv, Shape{n}, t);
    std::vector<cld> line;
    for (const double r : xv) line.emplace_back(t == DType::F32 ? static_cast<float>(r) : r, 0);
    auto iref = dft(line, +1);
    iref.resize(static_cast<std::size_t>(m));
    for (auto& c : iref) c /= static_cast<long double>(n);
    const Tensor ih = tf::ihfft(x);
    ASSERT_EQ(ih.shape(), (Shape{m, 2}));
    EXPECT_LE(rel_err(as_complex(values(ih)), iref), tol(t, n)) << "ihfft n=" << n;
    // Every other row of a larger out: written through a temporary, conjugated in place.
    Tensor big = host().zeros(Shape{2 * m, 2}, t);
    Tensor rows = big.slice(0, 0, 2 * m, 2);
    tf::ihfft_out(x, rows);
    EXPECT_EQ(values(rows), values(ih)) << "ihfft_out n=" << n;
    EXPECT_EQ(values(big.slice(0, 1, 2 * m, 2)), std::vector<double>(static_cast<std::size_t>(2 * m), 0.0));
    // hfft undoes ihfft (hfft's default length would be 2 (m - 1), so n is given).
    std::vector<cld> back, want;
    const auto hb = values(tf::hfft(ih, n));
    for (std::int64_t i = 0; i < n; ++i)
      back.emplace_back(hb[static_cast<std::size_t>(i)], 0), want.push_back(line[static_cast<std::size_t>(i)]);
    EXPECT_LE(rel_err(back, want), 2 * tol(t, n)) << "hfft(ihfft) n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Fft, ::testing::Values(DType::F32, DType::F64),
                         [](const auto& i) { return std::string(dtype_name(i.param)); });

// Long lines take the threaded stages; checked at sampled frequencies and by the round trip.
// out= gives the eager result bit for bit, whether out is written directly
// or through a temporary, and leaves the rest of a strided out's storage alone.
TEST_P(Fft, OutFormsMatchTheEagerOnes) {
  const DType t = GetParam();
  const Tensor c = make(randoms(2 * 3 * 60, 11), Shape{3, 60, 2}, t);
  const Tensor r = make(randoms(3 * 60, 12), Shape{3, 60}, t);
  const auto same = [](const Tensor& a, const Tensor& b) { EXPECT_EQ(values(a), values(b)); };
  for (const std::int64_t axis : {0, 1}) {
    Tensor o = host().empty(tf::fft(c, std::nullopt, axis).shape(), t);
    tf::fft_out(c, o, std::nullopt, axis);
    same(o, tf::fft(c, std::nullopt, axis));
    tf::ifft_out(c, o, std::nullopt, axis, tf::Norm::Ortho);
    same(o, tf::ifft(c, std::nullopt, axis, tf::Norm::Ortho));
  }
  Tensor padded = host().empty(Shape{3, 64, 2}, t);
  tf::fft_out(c, padded, 64);
  same(padded, tf::fft(c, 64));
  Tensor spec = host().empty(Shape{3, 31, 2}, t);
  tf::rfft_out(r, spec);
  same(spec, tf::rfft(r));
  Tensor back = host().empty(Shape{3, 60}, t);
  tf::irfft_out(spec, back, 60);
  same(back, tf::irfft(spec, 60));

  // The N-D forms: the last pass into out.
  Tensor nd = host().empty(Shape{3, 60, 2}, t);
  tf::fftn_out(c, nd);
  same(nd, tf::fftn(c));
  tf::ifftn_out(c, nd, std::nullopt, tf::Axes{1}, tf::Norm::Forward);
  same(nd, tf::ifftn(c, std::nullopt, tf::Axes{1}, tf::Norm::Forward));
  Tensor rnd = host().empty(Shape{3, 31, 2}, t);
  tf::rfftn_out(r, rnd);
  same(rnd, tf::rfftn(r));
  Tensor ind = host().empty(Shape{3, 60}, t);
  tf::irfftn_out(rnd, ind, tf::Axes{3, 60});
  same(ind, tf::irfftn(rnd, tf::Axes{3, 60}));
  Tensor self = host().empty(c.shape(), t);
  ops::copy_into(c, self);
  tf::fftn_out(self, self);
  same(self, tf::fftn(c));

  // Written through a temporary: out = x, and every other row of a larger tensor.
  Tensor x = make(randoms(2 * 60, 13), Shape{60, 2}, t);
  const Tensor want = tf::fft(x);
  tf::fft_out(x, x);
  same(x, want);
  Tensor big = host().zeros(Shape{6, 60, 2}, t);
  Tensor rows = big.slice(0, 0, 6, 2);
  tf::fft_out(c, rows);
  same(rows, tf::fft(c));
  for (const std::int64_t i : {1, 3, 5}) EXPECT_EQ(values(big.slice(0, i, i + 1)), std::vector<double>(120, 0.0));
}

TEST(FftOut, IsCapturedAndReplayed) {
  Tensor x = make(randoms(2 * 256, 14), Shape{256, 2}, DType::F32);
  Tensor y = host().empty(Shape{256, 2}, DType::F32);
  Graph g;
  {
    GraphCapture cap(host());
    tf::fft_out(x, y);
    g = cap.end();
  }
  const std::vector<double> fresh = values(make(randoms(2 * 256, 15), Shape{256, 2}, DType::F32));
  std::vector<float> f(fresh.begin(), fresh.end());
  x.copy_from_host(f.data(), f.size() * sizeof(float));
  g.replay();
  host().synchronize();
  EXPECT_EQ(values(y), values(tf::fft(x)));
}

TEST(FftLong, ThreadedStagesAndBluestein) {
  for (const std::int64_t n : {std::int64_t{1} << 20, std::int64_t{65537}, std::int64_t{3 * 5 * 7 * 1024}}) {
    const auto v = randoms(static_cast<std::size_t>(2 * n), 5);
    const Tensor x = make(v, Shape{n, 2}, DType::F64);
    const auto got = as_complex(values(tf::fft(x)));
    std::vector<std::int64_t> ks;
    for (std::int64_t i = 0; i < 12; ++i) ks.push_back((i * 7919 + i * i * 104729) % n);
    const auto ref = dft(as_complex(v), -1, ks);
    std::vector<cld> g;
    for (const auto k : ks) g.push_back(got[static_cast<std::size_t>(k)]);
    EXPECT_LE(rel_err(g, ref), 1e-12) << n;
    const auto back = values(tf::ifft(tf::fft(x)));
    double e = 0;
    for (std::size_t i = 0; i < back.size(); ++i) e = std::max(e, std::abs(back[i] - v[i]));
    EXPECT_LE(e, 1e-12) << n;
    // f32 real round trip at the same length
    const Tensor r = make(std::vector<double>(v.begin(), v.begin() + n), Shape{n}, DType::F32);
    const auto rb = values(tf::irfft(tf::rfft(r), n));
    double er = 0;
    for (std::int64_t i = 0; i < n; ++i)
      er = std::max(er, std::abs(rb[static_cast<std::size_t>(i)] -
                                 static_cast<double>(static_cast<float>(v[static_cast<std::size_t>(i)]))));
    EXPECT_LE(er, 1e-5) << n;
  }
}

// Every power of two from 2^13 to just below the four-step, f32 and f64,
// both directions, eager and into out: the lengths whose plans differ by CPU
// (vector stages with radix 16 up to 2^16 on Intel at 512 bits, and without
// at 256 bits where the L1 has 12 ways; the scalar ones past 8192 points
// elsewhere), each checked at bins across the line;
// and in f32 2^19 and 2^21, four-step forms whose row plans (1024, 2048
// points) take radix 16 there too.
TEST(FftLong, PowersOfTwoBelowTheFourStep) {
  constexpr std::int64_t kFourStepLength = std::int64_t{1} << 17;
  std::vector<std::pair<DType, std::int64_t>> cases;
  for (const DType t : {DType::F32, DType::F64})
    for (std::int64_t n = std::int64_t{1} << 13; n < kFourStepLength; n *= 2) cases.emplace_back(t, n);
  cases.emplace_back(DType::F32, std::int64_t{1} << 19);
  cases.emplace_back(DType::F32, std::int64_t{1} << 21);
  for (const auto& [t, n] : cases) {
    {
      const auto v = randoms(static_cast<std::size_t>(2 * n), static_cast<std::uint32_t>(n));
      const Tensor x = make(v, Shape{n, 2}, t);
      auto line = as_complex(v);
      if (t == DType::F32)
        for (auto& c : line) c = cld(static_cast<float>(c.real()), static_cast<float>(c.imag()));
      std::vector<std::int64_t> ks{0, 1, n / 2, n - 1};
      const std::int64_t bins = n < kFourStepLength ? 28 : 8;  // the direct sums of the longest are most of the time
      for (std::int64_t i = 1; i <= bins; ++i) ks.push_back((i * 7919 + i * i * 104729) % n);
      const auto ref = dft(line, -1, ks);
      auto iref = dft(line, +1, ks);
      for (auto& c : iref) c /= static_cast<long double>(n);
      Tensor out = host().empty(x.shape(), t);
      tf::fft_out(x, out);
      const auto fwd = as_complex(values(tf::fft(x))), into = as_complex(values(out));
      const auto inv = as_complex(values(tf::ifft(x)));
      std::vector<cld> g, gi, go;
      for (const auto k : ks) {
        const auto i = static_cast<std::size_t>(k);
        g.push_back(fwd[i]), gi.push_back(inv[i]), go.push_back(into[i]);
      }
      EXPECT_LE(rel_err(g, ref), tol(t, n)) << "fft n=" << n;
      EXPECT_LE(rel_err(go, ref), tol(t, n)) << "fft_out n=" << n;
      EXPECT_LE(rel_err(gi, iref), tol(t, n)) << "ifft n=" << n;
    }
  }
}

// Past Plan::kHalfTable the real untangling makes its twiddles from a fine
// and a coarse table: bins across many blocks against the direct sum, both
// ways (a round trip alone would pass with consistently wrong twiddles).
TEST(FftLong, RealTransformsPastTheTwiddleTable) {
  const std::int64_t n = std::int64_t{1} << 18;
  const auto v = randoms(static_cast<std::size_t>(n), 11);
  std::vector<cld> xc(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) xc[static_cast<std::size_t>(i)] = cld(v[static_cast<std::size_t>(i)], 0);
  std::vector<std::int64_t> ks{0, 1, 1023, 1024, 1025, n / 4 + 7, n / 2 - 1, n / 2};
  for (std::int64_t i = 0; i < 12; ++i) ks.push_back((i * 7919 + i * i * 104729) % (n / 2 + 1));
  const auto ref = dft(xc, -1, ks);
  for (const DType dt : {DType::F64, DType::F32}) {
    const Tensor x = make(v, Shape{n}, dt);
    const auto got = as_complex(values(tf::rfft(x)));
    std::vector<cld> g;
    for (const auto k : ks) g.push_back(got[static_cast<std::size_t>(k)]);
    EXPECT_LE(rel_err(g, ref), dt == DType::F64 ? 1e-12 : 2e-5) << dtype_name(dt);
    // irfft of the f64 spectrum (checked above against the direct sums)
    // gives x back, in either dtype.
    const Tensor spec = tf::rfft(make(v, Shape{n}, DType::F64));
    const auto back = values(tf::irfft(dt == DType::F64 ? spec : spec.cast(DType::F32), n));
    double e = 0;
    for (const auto t : ks)
      e = std::max(e, std::abs(back[static_cast<std::size_t>(t)] - v[static_cast<std::size_t>(t)]));
    EXPECT_LE(e, dt == DType::F64 ? 1e-12 : 1e-5) << dtype_name(dt);
  }
}

TEST(FftErrors, BadInputIsAClearError) {
  const Tensor c = make(randoms(16, 1), Shape{8, 2}, DType::F32);
  const Tensor real3 = make(randoms(24, 1), Shape{8, 3}, DType::F32);
  const auto code = [](auto&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::Internal;
  };
  EXPECT_EQ(code([&] { tf::fft(host().zeros(Shape{8, 2}, DType::I32)); }), ErrorCode::DTypeMismatch);
  EXPECT_EQ(code([&] { tf::fft(host().zeros(Shape{8, 2}, DType::F16)); }), ErrorCode::DTypeMismatch);
  EXPECT_EQ(code([&] { tf::fft(real3); }), ErrorCode::ShapeMismatch);
  EXPECT_EQ(code([&] { tf::irfft(real3); }), ErrorCode::ShapeMismatch);
  EXPECT_EQ(code([&] { tf::fft(c, 0); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(code([&] { tf::fft(host().zeros(Shape{0, 2}, DType::F32)); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(code([&] { tf::irfft(host().zeros(Shape{1, 2}, DType::F32)); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(code([&] { tf::fft(c, {}, 1); }), ErrorCode::OutOfRange);
  EXPECT_EQ(code([&] { tf::fftn(c, tf::Axes{4, 4}); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(code([&] {
              tf::fftn(real3.reshape({8, 3, 1}).slice(1, 0, 2).contiguous().reshape({4, 2, 2, 1}).slice(3, 0, 1));
            }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(code([&] {
              tf::fft2(make(randoms(2 * 4 * 4, 1), Shape{4, 4, 2}, DType::F32), std::nullopt, {0, 0});
            }),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(code([&] { tf::norm_from_name("orthonormal"); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(code([&] { tf::norm_from_name(""); }), ErrorCode::InvalidArgument);  // as NumPy
  try {
    tf::norm_from_name("bogus", "rfft2");
  } catch (const Error& e) {
    EXPECT_EQ(e.context().op, "rfft2");
  }
  // A length no memory holds is this op's error, not the allocator's.
  for (const std::int64_t huge : {std::int64_t{1} << 40, std::int64_t{1} << 62}) {
    try {
      tf::fft(c, huge);
      ADD_FAILURE() << "fft of length " << huge << " ran";
    } catch (const Error& e) {
      EXPECT_EQ(e.context().op, "fft") << e.what();
    }
  }
  // Every length of s is checked before the first pass: a 0 on the first
  // axis is reported against x's own shape, with no 2^26-point pass run first.
  try {
    tf::fftn(make(randoms(2 * 4 * 6, 1), Shape{4, 6, 2}, DType::F32), tf::Axes{0, std::int64_t{1} << 26});
    ADD_FAILURE() << "fftn with a length of 0 ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("[4, 6, 2]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(code([&] { tf::hfft(real3); }), ErrorCode::ShapeMismatch);
  EXPECT_EQ(code([&] { tf::hfft(host().zeros(Shape{8, 2}, DType::I32)); }), ErrorCode::DTypeMismatch);
  EXPECT_EQ(code([&] { tf::hfft(c, 0); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(code([&] { tf::ihfft(host().zeros(Shape{8}, DType::I64)); }), ErrorCode::DTypeMismatch);
  EXPECT_EQ(code([&] { tf::ihfft(c, std::nullopt, 2); }), ErrorCode::OutOfRange);
  try {
    tf::hfft(real3);
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("hfft"), std::string::npos) << w;
    EXPECT_NE(w.find("[8, 3]"), std::string::npos) << w;
  }
  // out=: the wrong shape, dtype or an undefined out is refused before anything is written.
  Tensor out = host().zeros(Shape{8, 2}, DType::F32);
  Tensor wide = host().zeros(Shape{9, 2}, DType::F32), f64 = host().zeros(Shape{8, 2}, DType::F64), none;
  EXPECT_EQ(code([&] { tf::fft_out(c, wide); }), ErrorCode::ShapeMismatch);
  EXPECT_EQ(code([&] { tf::rfft_out(c, out); }), ErrorCode::ShapeMismatch);
  EXPECT_EQ(code([&] { tf::fft_out(c, f64); }), ErrorCode::DTypeMismatch);
  EXPECT_EQ(code([&] { tf::fft_out(c, none); }), ErrorCode::InvalidState);
  EXPECT_EQ(code([&] { tf::fftn_out(c, wide); }), ErrorCode::ShapeMismatch);
  EXPECT_EQ(code([&] { tf::irfftn_out(c, f64); }), ErrorCode::DTypeMismatch);
  EXPECT_EQ(code([&] { tf::ihfft_out(make(randoms(8, 2), Shape{8}, DType::F32), wide); }), ErrorCode::ShapeMismatch);
  EXPECT_EQ(code([&] { tf::hfft_out(c, f64); }), ErrorCode::DTypeMismatch);
  Tensor one = host().zeros(Shape{1, 2}, DType::F32);
  Tensor spread = one.broadcast_to(Shape{8, 2});
  EXPECT_EQ(code([&] { tf::fft_out(c, spread); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(values(one), std::vector<double>(2, 0.0));
  EXPECT_EQ(values(wide), std::vector<double>(18, 0.0));
  EXPECT_EQ(values(f64), std::vector<double>(16, 0.0));
  try {
    tf::fft_out(c, wide);
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("[9, 2]"), std::string::npos) << w;
    EXPECT_NE(w.find("[8, 2]"), std::string::npos) << w;
  }
  try {
    tf::fft(host().zeros(Shape{8, 2}, DType::I32));
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("fft"), std::string::npos) << w;
    EXPECT_NE(w.find("i32"), std::string::npos) << w;
  }
}

}  // namespace
