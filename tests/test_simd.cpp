// The contiguous f32 loops of the CPU backend, both the AVX2 bodies (when this
// CPU has AVX2) and the portable target_clones loops, against double-precision
// references: every length up to 40 (vector bodies and masked tails), special
// values, and a sentinel past the end that must survive.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/platform/isa.hpp"
#include "backends/cpu/simd/simd.hpp"
#include "backends/cpu/simd/simd_avx2.hpp"
#include "backends/cpu/simd/simd_avx512.hpp"
#include "backends/cpu/simd/stream_store.hpp"

namespace simd = torsh::cpu::simd;
using torsh::rt::UnaryOp;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kSentinel = 12345.0f;

double reference(UnaryOp op, double x) {
  switch (op) {
    case UnaryOp::Exp: return std::exp(x);
    case UnaryOp::Tanh: return std::tanh(x);
    case UnaryOp::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case UnaryOp::Silu: return x / (1.0 + std::exp(-x));
    case UnaryOp::Gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case UnaryOp::GeluTanh: return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    default: return std::nan("");
  }
}

std::vector<float> inputs(std::size_t n, unsigned seed) {
  const float specials[] = {0.0f,   -0.0f,   1e-30f, -1e-30f, 0.1f,  -0.1f,  1.0f,         -1.0f,
                            5.0f,   -5.0f,   20.0f,  -20.0f,  87.0f, -87.0f, 88.5f,        -88.5f,
                            100.0f, -100.0f, 1e4f,   -1e4f,   kInf,  -kInf,  std::nanf("")};
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i % 3 == 0 ? specials[(i / 3 + seed) % std::size(specials)] : normal(rng);
  return v;
}

// Which loop runs: the dispatched one (the best this CPU has), the portable
// one, or one instruction-set level called directly.
enum class Level { Dispatched, Portable, Avx2, Avx512 };

const char* level_name(Level l) {
  switch (l) {
    case Level::Portable: return " portable";
    case Level::Avx2: return " avx2";
    case Level::Avx512: return " avx512";
    default: return "";
  }
}

// y = op(x) at `level`; false when that level has no body for op.
bool run_unary(Level level, UnaryOp op, const float* x, float* y, std::int64_t n, bool stream) {
  switch (level) {
    case Level::Portable: simd::unary_f32_portable(op, x, y, n); return true;
    case Level::Avx2: return simd::unary_f32_avx2(op, x, y, n, stream);
    case Level::Avx512: return simd::unary_f32_avx512(op, x, y, n, stream);
    default: simd::unary_f32(op, x, y, n, stream); return true;
  }
}

// stream: the non-temporal path, into a y that starts off its 32-byte
// boundary (so its plain-store head runs too).
void check_unary(UnaryOp op, const char* name, Level level, bool stream = false) {
  for (std::size_t n : {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 31, 33, 40, 64, 65, 127, 1023}) {
    const auto x = inputs(n, static_cast<unsigned>(n));
    std::vector<float> buf(n + 3, kSentinel);
    float* y = buf.data() + 1 + (reinterpret_cast<std::uintptr_t>(buf.data() + 1) % 32 == 0 ? 1 : 0);
    if (!run_unary(level, op, x.data(), y, static_cast<std::int64_t>(n), stream)) return;
    if (stream) torsh::cpu::stream_fence();
    EXPECT_EQ(y[-1], kSentinel) << name << " wrote before y, n = " << n;
    EXPECT_EQ(y[n], kSentinel) << name << " wrote past n = " << n;
    for (std::size_t i = 0; i < n; ++i) {
      const double ref = reference(op, x[i]);
      const std::string where =
          std::string(name) + level_name(level) + (stream ? " streamed" : "") + " x=" + std::to_string(x[i]);
      if (std::isnan(ref)) {
        EXPECT_TRUE(std::isnan(y[i])) << where << " got " << y[i];
      } else if (std::isinf(ref) || std::fabs(ref) > 3.4e38) {
        EXPECT_EQ(y[i], ref > 0 ? kInf : -kInf) << where;
      } else {
        // The erf approximation is good to 1.5e-7 absolute; the rest to a few ulp.
        const double abs_part = op == UnaryOp::Exp ? 0.0 : 2e-6 * (1.0 + std::fabs(x[i]));
        const double tol = abs_part + 4e-6 * std::fabs(ref) + 1.2e-38;
        EXPECT_NEAR(y[i], ref, tol) << where;
      }
    }
  }
}

// Softmax semantics of PyTorch: a NaN or +inf anywhere, or a row of -inf,
// gives a row of NaN; -inf beside finite values gives 0 (log: -inf).
void check_softmax_row(const std::vector<float>& x, bool log, bool portable, const std::string& what) {
  const std::size_t n = x.size();
  std::vector<float> y(n + 1, kSentinel);
  if (portable)
    simd::softmax_row_f32_portable(x.data(), y.data(), static_cast<std::int64_t>(n), log);
  else
    simd::softmax_row_f32(x.data(), y.data(), static_cast<std::int64_t>(n), log, x.data());  // a prefetch hint
  const std::string where = what + (log ? " log" : "") + (portable ? " portable" : "") + " n=" + std::to_string(n);
  EXPECT_EQ(y[n], kSentinel) << where << ": wrote past n";
  double mx = -INFINITY;
  bool poison = false;
  for (float v : x) {
    poison |= std::isnan(v) || v == kInf;
    mx = std::max(mx, static_cast<double>(v));
  }
  poison |= mx == -INFINITY;
  double sum = 0;
  if (!poison)
    for (float v : x) sum += std::exp(v - mx);
  for (std::size_t i = 0; i < n; ++i) {
    if (poison) {
      EXPECT_TRUE(std::isnan(y[i])) << where << " i=" << i;
      continue;
    }
    if (log) {
      const double ref = x[i] - mx - std::log(sum);
      if (std::isinf(ref))
        EXPECT_EQ(y[i], -kInf) << where << " i=" << i;
      else
        EXPECT_NEAR(y[i], ref, 1e-5 + 2.5e-7 * std::fabs(ref)) << where << " i=" << i;
    } else {
      EXPECT_NEAR(y[i], std::exp(x[i] - mx) / sum, 1e-6) << where << " i=" << i;
    }
  }
}

}  // namespace

TEST(Simd, UnaryActivationsMatchDouble) {
  const std::pair<UnaryOp, const char*> ops[] = {{UnaryOp::Exp, "exp"},         {UnaryOp::Tanh, "tanh"},
                                                 {UnaryOp::Sigmoid, "sigmoid"}, {UnaryOp::Silu, "silu"},
                                                 {UnaryOp::Gelu, "gelu"},       {UnaryOp::GeluTanh, "gelu_tanh"}};
  for (auto [op, name] : ops) {
    check_unary(op, name, Level::Dispatched);
    check_unary(op, name, Level::Portable);
    check_unary(op, name, Level::Dispatched, true);
    if (torsh::cpu::isa_usable(torsh::cpu::Isa::Avx2)) {
      check_unary(op, name, Level::Avx2);
      check_unary(op, name, Level::Avx2, true);
    }
  }
  if (!torsh::cpu::isa_usable(torsh::cpu::Isa::Avx2))
    GTEST_SKIP() << "no AVX2+FMA on this CPU: only the portable loops were checked";
}

TEST(Simd, Avx512ActivationsMatchDouble) {
  if (!torsh::cpu::isa_usable(torsh::cpu::Isa::Avx512)) GTEST_SKIP() << "no AVX-512 on this CPU";
  check_unary(UnaryOp::Gelu, "gelu", Level::Avx512);
  check_unary(UnaryOp::Gelu, "gelu", Level::Avx512, true);
}

// The AVX-512 gelu evaluates the AVX2 one's operations lane for lane on the
// same coefficients: equal bit for bit (NaN for NaN), streamed or not.
TEST(Simd, Avx512GeluEqualsAvx2BitForBit) {
  if (!torsh::cpu::isa_usable(torsh::cpu::Isa::Avx2) || !torsh::cpu::isa_usable(torsh::cpu::Isa::Avx512))
    GTEST_SKIP() << "needs AVX2+FMA and AVX-512";
  for (std::size_t n : {1, 15, 16, 17, 63, 64, 65, 1000}) {
    auto x = inputs(n, 7u + static_cast<unsigned>(n));
    for (std::size_t i = 0; i < n; i += 5) x[i] = static_cast<float>(i) * 0.37f - 30.0f;  // across every erf piece
    for (bool stream : {false, true}) {
      std::vector<float> a(n + 16), b(n + 16);
      float* ya = a.data() + 3;  // off the 64-byte boundary: the streamed head runs too
      float* yb = b.data() + 3;
      ASSERT_TRUE(simd::unary_f32_avx2(UnaryOp::Gelu, x.data(), ya, static_cast<std::int64_t>(n), stream));
      ASSERT_TRUE(simd::unary_f32_avx512(UnaryOp::Gelu, x.data(), yb, static_cast<std::int64_t>(n), stream));
      torsh::cpu::stream_fence();
      for (std::size_t i = 0; i < n; ++i) {
        if (std::isnan(ya[i]))
          EXPECT_TRUE(std::isnan(yb[i])) << "x=" << x[i];
        else
          EXPECT_EQ(ya[i], yb[i]) << "x=" << x[i] << " n=" << n << (stream ? " streamed" : "");
      }
    }
  }
}

TEST(Simd, SoftmaxRowsMatchDouble) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (bool portable : {false, true})
    for (bool log : {false, true})
      for (std::size_t n : {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 40, 1023, 4096}) {
        std::vector<float> x(n);
        for (auto& v : x) v = normal(rng);
        check_softmax_row(x, log, portable, "random");
        auto big = x;
        big[n / 2] = 1e4f;
        check_softmax_row(big, log, portable, "1e4");
        if (n > 1) {
          auto masked = x;  // attention-style mask: -inf entries, one at the tail
          for (std::size_t i = 0; i < n; i += 3) masked[i] = -kInf;
          masked[n - 1] = -kInf;
          check_softmax_row(masked, log, portable, "masked");
        }
        check_softmax_row(std::vector<float>(n, -kInf), log, portable, "all -inf");
        auto with_nan = x;
        with_nan[n - 1] = std::nanf("");
        check_softmax_row(with_nan, log, portable, "NaN at the tail");
        auto with_inf = x;
        with_inf[0] = kInf;
        check_softmax_row(with_inf, log, portable, "+inf");
      }
}

TEST(Simd, NormRowsMatchDouble) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (bool portable : {false, true})
    for (bool rms : {false, true})
      for (int affine = 0; affine < 4; ++affine)
        for (std::size_t n : {1, 2, 7, 8, 9, 17, 31, 32, 33, 40, 1023, 4096}) {
          std::vector<float> x(n), w(n), b(n);
          for (std::size_t i = 0; i < n; ++i) {
            x[i] = 100.0f + normal(rng);  // far from zero: a one-pass variance would cancel
            w[i] = normal(rng);
            b[i] = normal(rng);
          }
          const float* wp = affine & 1 ? w.data() : nullptr;
          const float* bp = affine & 2 ? b.data() : nullptr;
          std::vector<float> y(n + 1, kSentinel);
          const float eps = 1e-5f;
          if (portable)
            simd::norm_row_f32_portable(x.data(), y.data(), wp, bp, static_cast<std::int64_t>(n), eps, rms);
          else
            simd::norm_row_f32(x.data(), y.data(), wp, bp, static_cast<std::int64_t>(n), eps, rms, w.data());
          const std::string where = std::string(rms ? "rms_norm" : "layer_norm") + (portable ? " portable" : "") +
                                    " affine=" + std::to_string(affine) + " n=" + std::to_string(n);
          EXPECT_EQ(y[n], kSentinel) << where << ": wrote past n";
          double mean = 0, ss = 0;
          if (!rms) {
            for (float v : x) mean += v;
            mean /= static_cast<double>(n);
          }
          for (float v : x) ss += (v - mean) * (v - mean);
          const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
          for (std::size_t i = 0; i < n; ++i) {
            const double ref = (x[i] - mean) * inv * (wp ? w[i] : 1.0) + (bp ? b[i] : 0.0);
            EXPECT_NEAR(y[i], ref, 2e-4 * (1.0 + std::fabs(ref))) << where << " i=" << i;
          }
        }
}

// The non-temporal copy at every alignment of the destination and lengths
// around its 4- and 16-float steps: every element once, nothing outside.
TEST(Simd, StreamingCopyWritesExactlyTheRange) {
  std::vector<float> src(300);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.5f - 7.0f;
  for (std::size_t off = 0; off < 8; ++off)
    for (std::size_t n : {0, 1, 3, 4, 5, 15, 16, 17, 33, 64, 255, 290}) {
      std::vector<float> dst(n + 10, kSentinel);
      torsh::cpu::copy_streaming(src.data(), dst.data() + off, static_cast<std::int64_t>(n));
      torsh::cpu::stream_fence();
      for (std::size_t i = 0; i < dst.size(); ++i) {
        const bool inside = i >= off && i < off + n;
        EXPECT_EQ(dst[i], inside ? src[i - off] : kSentinel) << "offset " << off << " n " << n << " i " << i;
      }
    }
}

namespace {

float binary_reference(torsh::rt::BinaryOp op, float x, float y) {
  using B = torsh::rt::BinaryOp;
  switch (op) {
    case B::Add: return x + y;
    case B::Sub: return x - y;
    case B::Mul: return x * y;
    case B::Div: return x / y;
    case B::Maximum: return (std::isnan(x) || std::isnan(y)) ? std::nanf("") : (x > y ? x : y);
    case B::Minimum: return (std::isnan(x) || std::isnan(y)) ? std::nanf("") : (x < y ? x : y);
    case B::Pow: break;  // not checked here: its only body is the portable loop
  }
  return std::nanf("");
}

using BinaryFn = bool (*)(torsh::rt::BinaryOp, const float*, const float*, std::int64_t, float*, std::int64_t, bool);

// Every op but pow, elementwise and with b broadcast, plain and streamed into an
// output off its vector boundary, every length to 200: exact results (NaN
// where either input is NaN), nothing written past the end.
void check_binary(BinaryFn fn, const char* level) {
  using B = torsh::rt::BinaryOp;
  for (B op : {B::Add, B::Sub, B::Mul, B::Div, B::Maximum, B::Minimum})
    for (std::int64_t bs : {1, 0})
      for (bool stream : {false, true})
        for (std::size_t n = 0; n <= 200; n += n < 40 ? 1 : 37) {
          std::vector<float> a = inputs(n, 7), b = inputs(n + 1, 8);
          if (n > 5) a[5] = std::nanf(""), b[3] = -0.0f;
          std::vector<float> out(n + 5, kSentinel);
          float* y = out.data() + 1;  // off the 32- and 64-byte boundaries: the plain head runs too
          ASSERT_TRUE(fn(op, a.data(), b.data(), bs, y, static_cast<std::int64_t>(n), stream)) << level;
          if (stream) torsh::cpu::stream_fence();
          for (std::size_t i = 0; i < n; ++i) {
            const float want = binary_reference(op, a[i], bs ? b[i] : b[0]);
            if (std::isnan(want))
              EXPECT_TRUE(std::isnan(y[i])) << level << " op " << int(op) << " n " << n << " i " << i;
            else
              EXPECT_EQ(y[i], want) << level << " op " << int(op) << " bs " << bs << " n " << n << " i " << i;
          }
          EXPECT_EQ(out[0], kSentinel);
          EXPECT_EQ(y[n], kSentinel) << level << " wrote past the end, n " << n;
        }
}

}  // namespace

TEST(Simd, BinaryBodiesAreExactPlainAndStreamed) {
  check_binary(
      [](torsh::rt::BinaryOp op, const float* a, const float* b, std::int64_t bs, float* y, std::int64_t n,
         bool stream) {
        simd::binary_f32(op, a, b, bs, y, n, stream);
        return true;
      },
      "dispatch");
  if (torsh::cpu::isa_usable(torsh::cpu::Isa::Avx2)) check_binary(simd::binary_f32_avx2, "avx2");
  // Passes on what it checked; the log says which bodies this CPU could run.
  if (torsh::cpu::isa_usable(torsh::cpu::Isa::Avx512))
    check_binary(simd::binary_f32_avx512, "avx512");
  else
    std::cout << "[ simd ] no AVX-512 here (or capped): the AVX-512 body was not checked\n";
}

// One split of the decode attention: the AVX-512 bodies (reading f32, f16
// and bf16 keys and values as stored) and the portable loops (on widened
// rows) against a double reference, over key counts with 16-key blocks and
// tails, rows that see fewer keys than the chunk (causal), head sizes with and
// without a 64-wide block, and a second call that continues the online softmax.
TEST(Simd, AttentionRowsMatchDoubleInEveryKvDtype) {
  using torsh::DType;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  struct Shape {
    std::int64_t nq, nk, D, Dv;
  };
  for (const Shape sh : {Shape{3, 256, 64, 64}, Shape{1, 37, 16, 48}, Shape{5, 100, 128, 128}, Shape{2, 16, 32, 16},
                         Shape{4, 300, 64, 80}})
    for (DType kv : {DType::F32, DType::F16, DType::BF16})
      for (bool portable : {false, true}) {
        const std::int64_t n = 2 * sh.nk;  // two calls of nk keys each
        std::vector<float> q(static_cast<std::size_t>(sh.nq * sh.D)), k(static_cast<std::size_t>(n * sh.D)),
            v(static_cast<std::size_t>(n * sh.Dv));
        for (auto* x : {&q, &k, &v})
          for (float& e : *x) e = u(rng);
        // The stored keys and values, and their exact f32 values for the reference.
        std::vector<std::uint16_t> k16(k.size()), v16(v.size());
        auto round = [&](std::vector<float>& x, std::vector<std::uint16_t>& bits) {
          for (std::size_t i = 0; i < x.size(); ++i) {
            if (kv == DType::F16) {
              bits[i] = torsh::f32_to_f16(x[i]);
              x[i] = torsh::f16_to_f32(bits[i]);
            } else if (kv == DType::BF16) {
              bits[i] = torsh::f32_to_bf16(x[i]);
              x[i] = torsh::bf16_to_f32(bits[i]);
            }
          }
        };
        round(k, k16), round(v, v16);
        const void* kp = kv == DType::F32 ? static_cast<const void*>(k.data()) : k16.data();
        const void* vp = kv == DType::F32 ? static_cast<const void*>(v.data()) : v16.data();
        const std::size_t es = kv == DType::F32 ? 4 : 2;
        std::vector<std::int64_t> jmax(static_cast<std::size_t>(sh.nq));
        for (std::int64_t i = 0; i < sh.nq; ++i) jmax[static_cast<std::size_t>(i)] = n - 3 * i;  // causal-like
        std::vector<float> s(static_cast<std::size_t>(sh.nq * sh.nk)), m(static_cast<std::size_t>(sh.nq), -kInf),
            l(static_cast<std::size_t>(sh.nq)), acc(static_cast<std::size_t>(sh.nq * sh.Dv));
        for (std::int64_t c = 0; c < 2; ++c) {
          std::vector<std::int64_t> jm(jmax);
          for (auto& j : jm) j -= c * sh.nk;
          simd::attention_rows(q.data(), sh.nq, static_cast<const char*>(kp) + c * sh.nk * sh.D * es,
                               static_cast<const char*>(vp) + c * sh.nk * sh.Dv * es, kv, sh.nk, sh.D, sh.Dv, jm.data(),
                               s.data(), m.data(), l.data(), acc.data(), portable);
        }
        for (std::int64_t i = 0; i < sh.nq; ++i) {
          const std::int64_t nj = jmax[static_cast<std::size_t>(i)];
          std::vector<double> sc(static_cast<std::size_t>(nj));
          double mx = -1e300, sum = 0;
          for (std::int64_t j = 0; j < nj; ++j) {
            double d = 0;
            for (std::int64_t e = 0; e < sh.D; ++e) d += double(q[i * sh.D + e]) * k[j * sh.D + e];
            sc[static_cast<std::size_t>(j)] = d;
            mx = std::max(mx, d);
          }
          for (auto& e : sc) sum += (e = std::exp(e - mx));
          for (std::int64_t e = 0; e < sh.Dv; ++e) {
            double o = 0;
            for (std::int64_t j = 0; j < nj; ++j) o += sc[static_cast<std::size_t>(j)] * v[j * sh.Dv + e];
            const double got = acc[i * sh.Dv + e] / l[static_cast<std::size_t>(i)];
            ASSERT_NEAR(got, o / sum, 2e-5 * std::sqrt(double(sh.D)))
                << "nq=" << sh.nq << " nk=" << sh.nk << " D=" << sh.D << " Dv=" << sh.Dv
                << " kv=" << torsh::dtype_name(kv) << " portable=" << portable << " row " << i << " col " << e;
          }
        }
      }
}
