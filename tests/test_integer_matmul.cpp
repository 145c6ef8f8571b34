// int8 matrix products with ONNX's MatMulInteger / QLinearMatMul semantics on
// the CPU backend, against a direct int64 sum of the definition: every dtype
// pair, per-tensor and per-row / per-column zero points, shapes that are not
// multiples of any tile or of four k, batches (b shared, batched, broadcast),
// int32 wrap-around, each instruction set's tile on its own, requantization to
// u8 / i8 / f32, prepared weights (ops::IntegerWeight), and a clear error for
// each bad input. The other backends are
// compared with the CPU by tests/backend_ops (integer_matmul cases).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "backends/cpu/igemm/igemm.hpp"
#include "backends/cpu/quant/qmatmul_kernels.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;

namespace {

Backend& host() {
  static Backend b = Backend::create(BackendType::Cpu);
  return b;
}

// Random bytes of a u8 or i8 tensor (stored as the raw byte either way).
std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, 255);
  std::vector<std::uint8_t> v(n);
  for (auto& x : v) x = static_cast<std::uint8_t>(d(rng));
  return v;
}

int value(std::uint8_t byte, DType t) { return t == DType::I8 ? static_cast<std::int8_t>(byte) : byte; }

Tensor bytes_tensor(const std::vector<std::uint8_t>& v, const Shape& s, DType t) {
  return host().from_host(v.data(), s, t);
}

struct Problem {
  std::int64_t batch, m, n, k;
  DType at, bt;
  std::vector<std::uint8_t> a, b, za, zb;  // za: 1 or m values, zb: 1 or n values
  bool b_batched = false;
};

Problem make(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, DType at, DType bt, bool per_row,
             bool per_col, bool b_batched, std::uint32_t seed) {
  Problem p{batch,
            m,
            n,
            k,
            at,
            bt,
            random_bytes(static_cast<std::size_t>(batch * m * k), seed),
            random_bytes(static_cast<std::size_t>((b_batched ? batch : 1) * k * n), seed + 1),
            random_bytes(static_cast<std::size_t>(per_row ? m : 1), seed + 2),
            random_bytes(static_cast<std::size_t>(per_col ? n : 1), seed + 3),
            b_batched};
  return p;
}

// The definition, in int64, wrapped to int32 at the end.
std::vector<std::int32_t> reference(const Problem& p) {
  std::vector<std::int32_t> out(static_cast<std::size_t>(p.batch * p.m * p.n));
  for (std::int64_t bi = 0; bi < p.batch; ++bi)
    for (std::int64_t i = 0; i < p.m; ++i)
      for (std::int64_t j = 0; j < p.n; ++j) {
        const int za = value(p.za[p.za.size() == 1 ? 0 : static_cast<std::size_t>(i)], p.at);
        const int zb = value(p.zb[p.zb.size() == 1 ? 0 : static_cast<std::size_t>(j)], p.bt);
        std::int64_t s = 0;
        for (std::int64_t kk = 0; kk < p.k; ++kk) {
          const int av = value(p.a[static_cast<std::size_t>((bi * p.m + i) * p.k + kk)], p.at);
          const int bv = value(p.b[static_cast<std::size_t>(((p.b_batched ? bi : 0) * p.k + kk) * p.n + j)], p.bt);
          s += static_cast<std::int64_t>(av - za) * (bv - zb);
        }
        out[static_cast<std::size_t>((bi * p.m + i) * p.n + j)] =
            static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(s)));
      }
  return out;
}

Tensor a_of(const Problem& p) {
  return bytes_tensor(p.a, p.batch == 1 ? Shape{p.m, p.k} : Shape{p.batch, p.m, p.k}, p.at);
}
Tensor b_of(const Problem& p) {
  return bytes_tensor(p.b, p.b_batched ? Shape{p.batch, p.k, p.n} : Shape{p.k, p.n}, p.bt);
}
Tensor za_of(const Problem& p) {
  return bytes_tensor(p.za, p.za.size() == 1 ? Shape{} : Shape{static_cast<std::int64_t>(p.za.size())}, p.at);
}
Tensor zb_of(const Problem& p) {
  return bytes_tensor(p.zb, p.zb.size() == 1 ? Shape{} : Shape{static_cast<std::int64_t>(p.zb.size())}, p.bt);
}

template <class F>
ErrorCode error_of(const char* op, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
    return e.code();
  }
  ADD_FAILURE() << "no error";
  return ErrorCode::Internal;
}

constexpr DType kPairs[][2] = {
    {DType::U8, DType::I8}, {DType::U8, DType::U8}, {DType::I8, DType::I8}, {DType::I8, DType::U8}};

}  // namespace

TEST(MatmulInteger, EveryDtypePairAndZeroPointKindMatchesTheDefinition) {
  std::uint32_t seed = 1;
  for (const auto& pr : kPairs)
    for (bool per_row : {false, true})
      for (bool per_col : {false, true})
        for (auto [m, n, k] :
             {std::array<std::int64_t, 3>{1, 1, 1}, {3, 5, 7}, {15, 33, 13}, {29, 70, 130}, {64, 64, 64}}) {
          const Problem p = make(1, m, n, k, pr[0], pr[1], per_row, per_col, false, seed++);
          const Tensor y = ops::matmul_integer(a_of(p), b_of(p), za_of(p), zb_of(p));
          ASSERT_EQ(y.dtype(), DType::I32);
          ASSERT_EQ(y.shape(), (Shape{m, n}));
          EXPECT_EQ(y.to_host<std::int32_t>(), reference(p))
              << dtype_name(pr[0]) << " x " << dtype_name(pr[1]) << " m=" << m << " n=" << n << " k=" << k
              << " per_row=" << per_row << " per_col=" << per_col;
        }
}

TEST(MatmulInteger, WithoutZeroPointsIsThePlainProduct) {
  const Problem p0 = make(1, 9, 17, 23, DType::U8, DType::I8, false, false, false, 99);
  Problem p = p0;
  p.za = {0};
  p.zb = {0};
  EXPECT_EQ(ops::matmul_integer(a_of(p), b_of(p)).to_host<std::int32_t>(), reference(p));
}

TEST(MatmulInteger, BatchesShareBroadcastOrBatchB) {
  for (bool b_batched : {false, true}) {
    const Problem p = make(3, 10, 19, 21, DType::I8, DType::U8, true, true, b_batched, 7);
    const Tensor y = ops::matmul_integer(a_of(p), b_of(p), za_of(p), zb_of(p));
    ASSERT_EQ(y.shape(), (Shape{3, 10, 19}));
    EXPECT_EQ(y.to_host<std::int32_t>(), reference(p)) << "b_batched=" << b_batched;
  }
  // a without a batch against a batched b: a broadcast to every batch.
  Problem p = make(2, 6, 5, 11, DType::U8, DType::I8, false, false, true, 11);
  p.a.resize(static_cast<std::size_t>(p.m * p.k));
  const Tensor a2 = bytes_tensor(p.a, Shape{p.m, p.k}, p.at);
  Problem full = p;
  full.a.insert(full.a.end(), p.a.begin(), p.a.end());
  EXPECT_EQ(ops::matmul_integer(a2, b_of(p), za_of(p), zb_of(p)).to_host<std::int32_t>(), reference(full));
}

TEST(MatmulInteger, StridedOperandsAreRead) {
  const Problem p = make(1, 12, 8, 20, DType::U8, DType::I8, false, true, false, 5);
  // b given as the transpose of a contiguous [n, k].
  std::vector<std::uint8_t> bt(p.b.size());
  for (std::int64_t kk = 0; kk < p.k; ++kk)
    for (std::int64_t j = 0; j < p.n; ++j)
      bt[static_cast<std::size_t>(j * p.k + kk)] = p.b[static_cast<std::size_t>(kk * p.n + j)];
  const Tensor b = bytes_tensor(bt, Shape{p.n, p.k}, p.bt).transpose(0, 1);
  EXPECT_EQ(ops::matmul_integer(a_of(p), b, za_of(p), zb_of(p)).to_host<std::int32_t>(), reference(p));
}

TEST(MatmulInteger, SumsWrapAsInt32) {
  // 255 * 127 summed 70000 times is 2.27e9, past 2^31 - 1.
  const std::int64_t k = 70000;
  Problem p{
      1,   2,  3, k, DType::U8, DType::I8, std::vector<std::uint8_t>(2 * k, 255), std::vector<std::uint8_t>(k * 3, 127),
      {0}, {0}};
  const auto want = reference(p);
  EXPECT_LT(want[0], 0);  // wrapped
  EXPECT_EQ(ops::matmul_integer(a_of(p), b_of(p)).to_host<std::int32_t>(), want);
}

TEST(MatmulInteger, EachInstructionSetsTileMatchesTheDefinition) {
  using namespace torsh::cpu::igemm;
  using IKernel = torsh::cpu::igemm::Kernel;
  const std::pair<const IKernel*, torsh::cpu::Isa> kernels[] = {{&kernel_generic(), torsh::cpu::Isa::Generic},
                                                                {&kernel_avx2(), torsh::cpu::Isa::Avx2},
                                                                {&kernel_avx_vnni(), torsh::cpu::Isa::AvxVnni},
                                                                {&kernel_avx512_vnni(), torsh::cpu::Isa::Avx512Vnni}};
  int ran = 0;
  for (auto [kn, isa] : kernels) {
    if (!torsh::cpu::isa_usable(isa)) continue;
    ++ran;
    for (std::int64_t k : {1, 2, 3, 4, 5, 9, 64, 131}) {
      const Problem p =
          make(1, kn->mr, kn->nr, k, DType::U8, DType::I8, false, false, false, static_cast<std::uint32_t>(k));
      std::vector<unsigned char> pa(panel_bytes(*kn, kn->mr, k)), pb(panel_bytes(*kn, kn->nr, k));
      std::vector<std::int32_t> ra(static_cast<std::size_t>(kn->mr)), cb(static_cast<std::size_t>(kn->nr));
      pack_a(*kn, p.a.data(), kn->mr, k, false, 0, pa.data(), ra.data());
      pack_b(*kn, p.b.data(), k, kn->nr, false, 0, pb.data(), cb.data());
      std::vector<std::int32_t> c(static_cast<std::size_t>(kn->mr * kn->nr));
      kn->tile(pa.data(), pb.data(), (k + k_per_lane(kn->lane) - 1) / k_per_lane(kn->lane),
               torsh::cpu::igemm::TileOut{c.data(), kn->nr});
      Problem plain = p;
      plain.za = {0};
      plain.zb = {0};
      EXPECT_EQ(c, reference(plain)) << kn->name << " k=" << k;
    }
  }
  EXPECT_GE(ran, 1);
  std::cout << "[ igemm ] active tile: " << active_kernel().name << "\n";
}

// AVX2 without VNNI: the vpmaddubsw tile sums pairs of products in int16 with
// saturation, so it must be exact wherever its bound admits it and never be
// taken past it.
TEST(MatmulInteger, Avx2MaddubsTileIsExactWithinItsBound) {
  using namespace torsh::cpu::igemm;
  if (!torsh::cpu::isa_usable(torsh::cpu::Isa::Avx2)) GTEST_SKIP() << "no AVX2";
  const auto& kn = kernel_avx2_maddubs();
  for (std::int64_t k : {1, 2, 3, 4, 7, 64, 131}) {
    Problem p =
        make(1, kn.mr, kn.nr, k, DType::U8, DType::I8, false, false, false, static_cast<std::uint32_t>(k + 500));
    // Weights in [-64, 64], column 1 all 64, and a' up to 255: 255 x 128 = 32640 at most per pair.
    for (std::size_t i = 0; i < p.b.size(); ++i)
      p.b[i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(i % kn.nr == 1 ? 64 : -64 + int(p.b[i] % 129)));
    for (std::size_t i = 0; i < p.a.size(); i += 3) p.a[i] = 255;
    std::vector<unsigned char> pa(panel_bytes(kn, kn.mr, k)), pb(panel_bytes(kn, kn.nr, k));
    std::vector<std::int32_t> ra(static_cast<std::size_t>(kn.mr)), cb(static_cast<std::size_t>(kn.nr));
    pack_a(kn, p.a.data(), kn.mr, k, false, 0, pa.data(), ra.data());
    pack_b(kn, p.b.data(), k, kn.nr, false, 0, pb.data(), cb.data());
    std::vector<std::int32_t> c(static_cast<std::size_t>(kn.mr * kn.nr));
    kn.tile(pa.data(), pb.data(), (k + 3) / 4, TileOut{c.data(), kn.nr});
    p.za = {0};
    p.zb = {0};
    EXPECT_EQ(c, reference(p)) << "k=" << k;
  }
}

TEST(MatmulInteger, OperandsAtTheInt16PairLimitStayExact) {
  // Through the op on whatever this CPU (or TORSH_CPU_ISA) runs; on AVX2
  // without VNNI each case lands on one side of the vpmaddubsw bound
  // max a' x max(|b'0| + |b'1|) <= 32767.
  struct Case {
    const char* what;
    int a_max, b0, b1;
  };
  for (const Case c :
       {Case{"7-bit weights, a' to 255", 255, 64, -64}, Case{"pairs of 128 at a' 255 (32640)", 255, 64, 64},
        Case{"pairs of 129 at a' 255 (32895: past int16)", 255, 65, 64},
        Case{"pairs of 129 at a' 254 (32766)", 254, 65, 64}, Case{"full-range weights at a' 255", 255, -128, -128}}) {
    for (bool prepared : {false, true}) {
      Problem p = make(1, 37, 45, 70, DType::U8, DType::I8, false, false, false, 321);
      for (auto& v : p.a) v = static_cast<std::uint8_t>(v % (c.a_max + 1));
      p.a[0] = p.a[1] = static_cast<std::uint8_t>(c.a_max);
      // Every pair (2t, 2t + 1) of a column is (b0, b1) or smaller; column 0 holds the extreme.
      for (std::int64_t kk = 0; kk < p.k; ++kk)
        for (std::int64_t j = 0; j < p.n; ++j) {
          const int lim = kk % 2 ? c.b1 : c.b0;
          const int v = j == 0 ? lim : lim * static_cast<int>(p.b[static_cast<std::size_t>(kk * p.n + j)] % 100) / 100;
          p.b[static_cast<std::size_t>(kk * p.n + j)] = static_cast<std::uint8_t>(static_cast<std::int8_t>(v));
        }
      p.za = {0};
      p.zb = {0};
      const auto got = prepared ? ops::matmul_integer(a_of(p), ops::IntegerWeight(b_of(p))).to_host<std::int32_t>()
                                : ops::matmul_integer(a_of(p), b_of(p)).to_host<std::int32_t>();
      EXPECT_EQ(got, reference(p)) << c.what << (prepared ? ", prepared weight" : "");
    }
  }
}

// qlinear_matmul of p (scales per channel or per tensor) against the
// requantization formula in f32 on the exact sums, and without y_scale
// against the dequantized product.
void expect_qlinear_formula(const Problem& p, bool per_ch, DType yt) {
  const std::int64_t m = p.m, n = p.n;
  std::vector<float> sa(per_ch ? m : 1), sb(per_ch ? n : 1);
  for (std::size_t i = 0; i < sa.size(); ++i) sa[i] = 0.01f + 0.003f * static_cast<float>(i % 13);
  for (std::size_t i = 0; i < sb.size(); ++i) sb[i] = 0.02f + 0.001f * static_cast<float>(i % 21);
  const float sy = 3.7f * std::sqrt(static_cast<float>(p.k) / 37.0f);
  const std::uint8_t zy_byte = yt == DType::U8 ? 128 : static_cast<std::uint8_t>(-5);
  const auto sums = reference(p);
  const auto to = [&](const std::vector<float>& v) {
    return host().from_host(v.data(), v.size() == 1 ? Shape{} : Shape{static_cast<std::int64_t>(v.size())}, DType::F32);
  };
  const Tensor y = ops::qlinear_matmul(a_of(p), to(sa), za_of(p), b_of(p), to(sb), zb_of(p), to({sy}),
                                       bytes_tensor({zy_byte}, Shape{}, yt));
  ASSERT_EQ(y.dtype(), yt);
  const std::vector<std::uint8_t> got = y.to_host<std::uint8_t>();
  const int lo = yt == DType::U8 ? 0 : -128, hi = yt == DType::U8 ? 255 : 127;
  const auto mul = [&](std::int64_t i, std::int64_t j) {
    return sa[per_ch ? static_cast<std::size_t>(i) : 0] * sb[per_ch ? static_cast<std::size_t>(j) : 0];
  };
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const float q = std::nearbyint(static_cast<float>(sums[static_cast<std::size_t>(i * n + j)]) * (mul(i, j) / sy)) +
                      static_cast<float>(value(zy_byte, yt));
      const int want = static_cast<int>(std::min<float>(std::max<float>(q, lo), hi));
      ASSERT_EQ(value(got[static_cast<std::size_t>(i * n + j)], yt), want) << i << "," << j << " k=" << p.k;
    }
  // Without y_scale: the dequantized f32 product.
  const std::vector<float> f =
      ops::qlinear_matmul(a_of(p), to(sa), za_of(p), b_of(p), to(sb), zb_of(p)).to_host<float>();
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      ASSERT_EQ(f[static_cast<std::size_t>(i * n + j)],
                static_cast<float>(sums[static_cast<std::size_t>(i * n + j)]) * mul(i, j))
          << i << "," << j << " k=" << p.k;
}

TEST(QlinearMatmul, RequantizesAsTheFormulaInF32) {
  std::uint32_t seed = 40;
  for (const auto& pr : kPairs)
    for (DType yt : {DType::U8, DType::I8})
      for (bool per_ch : {false, true})
        expect_qlinear_formula(make(1, 13, 21, 37, pr[0], pr[1], per_ch, per_ch, false, seed++), per_ch, yt);
}

// Past a block of k (512 to 1024 values by tile), the product can run in
// blocks of k over items of rows x columns, the sums held between blocks:
// shapes over several items in both directions, odd edges, every zero-point
// kind, a batch with a prepared weight, and the requantized forms.
TEST(MatmulInteger, LongKRunsInBlocksAndMatchesTheDefinition) {
  // The blocks are taken on their own only past most of the last-level
  // cache; forced here on shapes a test can check.
  torsh::cpu::igemm::force_long_k_blocks(1);
  struct Reset {
    ~Reset() { torsh::cpu::igemm::force_long_k_blocks(-1); }
  } reset;
  std::uint32_t seed = 900;
  for (const auto& pr : {kPairs[0], kPairs[2]})
    for (bool per_ch : {false, true}) {
      const Problem p = make(1, 401, 353, 1100, pr[0], pr[1], per_ch, per_ch, false, seed++);
      EXPECT_EQ(ops::matmul_integer(a_of(p), b_of(p), za_of(p), zb_of(p)).to_host<std::int32_t>(), reference(p))
          << dtype_name(pr[0]) << " x " << dtype_name(pr[1]) << " per_ch=" << per_ch;
    }
  const Problem p = make(2, 45, 40, 2100, DType::U8, DType::U8, false, true, false, seed++);
  const ops::IntegerWeight w(b_of(p));
  for (int call = 0; call < 2; ++call)
    EXPECT_EQ(ops::matmul_integer(a_of(p), w, za_of(p), zb_of(p)).to_host<std::int32_t>(), reference(p)) << call;
  expect_qlinear_formula(make(1, 201, 353, 1100, DType::U8, DType::I8, false, false, false, seed++), false, DType::U8);
  expect_qlinear_formula(make(1, 97, 70, 1100, DType::I8, DType::I8, true, true, false, seed++), true, DType::I8);
}

TEST(QlinearMatmul, HalvesRoundToEvenAndSaturate) {
  // a = [1], b = [k ones]: sums are exactly 1..; scales put them on halves.
  const std::vector<std::uint8_t> a{1, 2, 3, 5, 200};
  const std::vector<std::uint8_t> b{1};
  const Tensor y = ops::qlinear_matmul(
      bytes_tensor(a, Shape{5, 1}, DType::U8), host().from_host(std::vector<float>{0.5f}.data(), Shape{}, DType::F32),
      bytes_tensor({0}, Shape{}, DType::U8), bytes_tensor(b, Shape{1, 1}, DType::I8),
      host().from_host(std::vector<float>{1.0f}.data(), Shape{}, DType::F32), bytes_tensor({0}, Shape{}, DType::I8),
      host().from_host(std::vector<float>{1.0f}.data(), Shape{}, DType::F32), bytes_tensor({0}, Shape{}, DType::I8));
  // 0.5, 1.0, 1.5, 2.5, 100 -> 0, 1, 2, 2, 100
  const auto got = y.to_host<std::int8_t>();
  EXPECT_EQ(got, (std::vector<std::int8_t>{0, 1, 2, 2, 100}));
  const Tensor sat = ops::qlinear_matmul(
      bytes_tensor({255}, Shape{1, 1}, DType::U8),
      host().from_host(std::vector<float>{10.0f}.data(), Shape{}, DType::F32), bytes_tensor({0}, Shape{}, DType::U8),
      bytes_tensor({127}, Shape{1, 1}, DType::I8),
      host().from_host(std::vector<float>{10.0f}.data(), Shape{}, DType::F32), bytes_tensor({0}, Shape{}, DType::I8),
      host().from_host(std::vector<float>{1e-30f}.data(), Shape{}, DType::F32), bytes_tensor({0}, Shape{}, DType::U8));
  EXPECT_EQ(sat.to_host<std::uint8_t>(), std::vector<std::uint8_t>{255});
}

// Scales whose quotient overflows: an infinite multiplier saturates nonzero
// sums and turns zero sums (0 x inf = NaN) into the zero point, in the
// vector requantization of whole tiles and in the tail tiles alike.
TEST(QlinearMatmul, AnInfiniteMultiplierSaturatesAndZeroSumsGiveTheZeroPoint) {
  for (std::int64_t m : {5, 40}) {
    std::vector<std::uint8_t> a(static_cast<std::size_t>(m));
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint8_t>(i % 3 == 0 ? 0 : i);
    const std::int64_t n = 40;
    std::vector<std::uint8_t> b(static_cast<std::size_t>(n));
    for (std::size_t j = 0; j < b.size(); ++j) b[j] = static_cast<std::uint8_t>(j % 2 == 0 ? 1 : -1);
    const auto f32 = [](float v) { return host().from_host(std::vector<float>{v}.data(), Shape{}, DType::F32); };
    const Tensor y =
        ops::qlinear_matmul(bytes_tensor(a, Shape{m, 1}, DType::U8), f32(1e30f), bytes_tensor({0}, Shape{}, DType::U8),
                            bytes_tensor(b, Shape{1, n}, DType::I8), f32(1e30f), bytes_tensor({0}, Shape{}, DType::I8),
                            f32(1e-30f), bytes_tensor({10}, Shape{}, DType::U8));
    const auto got = y.to_host<std::uint8_t>();
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const int want = a[static_cast<std::size_t>(i)] == 0 ? 10 : j % 2 == 0 ? 255 : 0;
        ASSERT_EQ(got[static_cast<std::size_t>(i * n + j)], want) << "m=" << m << " at " << i << "," << j;
      }
  }
}

// p's product with b (a tensor or an ops::IntegerWeight) from four threads
// at once, each against the definition.
template <class B>
void expect_definition_on_four_threads(const Problem& p, const B& b) {
  const auto want = reference(p);
  const Tensor a = a_of(p), za = za_of(p), zb = zb_of(p);
  std::vector<std::vector<std::int32_t>> got(4);
  std::vector<std::thread> ts;
  for (std::size_t t = 0; t < got.size(); ++t)
    ts.emplace_back([&, t] { got[t] = ops::matmul_integer(a, b, za, zb).template to_host<std::int32_t>(); });
  for (auto& t : ts) t.join();
  for (const auto& g : got) EXPECT_EQ(g, want);
}

// With more row panels than threads, each thread packs and multiplies its own
// range of rows and, done, takes column panels of others' ranges: thread
// counts that do not divide the panels, partial edge panels, a batch (a
// packed once per batch), a prepared weight, both zero-point kinds, the
// requantized forms, and callers on several threads at once (whose tasks
// run one after another on each caller).
TEST(MatmulInteger, RowRangesOnAnyThreadCountMatchTheDefinition) {
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::uint32_t seed = 1300;
  for (int threads : {2, 3, 5}) {
    Backend::builder().backend_type(BackendType::Cpu).num_threads(threads).build();
    for (const auto& pr : {kPairs[0], kPairs[3]})
      for (bool per_ch : {false, true}) {
        const Problem p = make(2, 157, 70, 131, pr[0], pr[1], per_ch, per_ch, false, seed++);
        const auto want = reference(p);
        EXPECT_EQ(ops::matmul_integer(a_of(p), b_of(p), za_of(p), zb_of(p)).to_host<std::int32_t>(), want)
            << threads << " threads, " << dtype_name(pr[0]) << " x " << dtype_name(pr[1]) << " per_ch=" << per_ch;
        const ops::IntegerWeight w(b_of(p));
        for (int call = 0; call < 2; ++call)
          EXPECT_EQ(ops::matmul_integer(a_of(p), w, za_of(p), zb_of(p)).to_host<std::int32_t>(), want)
              << threads << " threads, prepared, call " << call;
      }
    expect_qlinear_formula(make(1, 300, 45, 70, DType::U8, DType::I8, false, false, false, seed++), false, DType::U8);
    expect_qlinear_formula(make(1, 230, 33, 9, DType::I8, DType::I8, true, true, false, seed++), true, DType::I8);
  }
  const Problem p = make(1, 200, 96, 100, DType::U8, DType::I8, false, false, false, seed++);
  expect_definition_on_four_threads(p, b_of(p));
  Backend::builder().backend_type(BackendType::Cpu).num_threads(hw).build();
}

// A prepared weight (ops::IntegerWeight) gives what the plain tensor gives,
// on its first product (which packs it) and on later ones (which reuse the
// panels), for every dtype pair, batched a and each zero-point kind.
TEST(IntegerWeight, ProductsEqualThoseWithThePlainTensor) {
  std::uint32_t seed = 300;
  for (const auto& pr : kPairs)
    for (bool per_col : {false, true})
      for (auto [batch, m, n, k] : {std::array<std::int64_t, 4>{1, 1, 1, 1}, {1, 15, 33, 13}, {3, 29, 70, 130}}) {
        const Problem p = make(batch, m, n, k, pr[0], pr[1], per_col, per_col, false, seed++);
        const ops::IntegerWeight w(b_of(p));
        const auto want = reference(p);
        for (int call = 0; call < 3; ++call)
          ASSERT_EQ(ops::matmul_integer(a_of(p), w, za_of(p), zb_of(p)).to_host<std::int32_t>(), want)
              << dtype_name(pr[0]) << " x " << dtype_name(pr[1]) << " batch=" << batch << " m=" << m << " n=" << n
              << " k=" << k << " call " << call;
        // Another a (other rows) with the same packed weight.
        Problem q = make(1, 7, n, k, pr[0], pr[1], false, per_col, false, seed++);
        q.b = p.b;
        q.zb = p.zb;
        EXPECT_EQ(ops::matmul_integer(a_of(q), w, za_of(q), zb_of(q)).to_host<std::int32_t>(), reference(q));
      }
}

TEST(IntegerWeight, QlinearMatmulEqualsThePlainTensor) {
  const Problem p = make(1, 13, 21, 37, DType::U8, DType::I8, true, true, false, 77);
  std::vector<float> sa(13, 0.02f), sb(21, 0.01f);
  for (std::size_t i = 0; i < sb.size(); ++i) sb[i] += 0.001f * static_cast<float>(i);
  const Tensor tsa = host().from_host(sa.data(), Shape{13}, DType::F32),
               tsb = host().from_host(sb.data(), Shape{21}, DType::F32);
  const float sy = 0.9f;
  const Tensor tsy = host().from_host(&sy, Shape{}, DType::F32), tzy = bytes_tensor({100}, Shape{}, DType::U8);
  const ops::IntegerWeight w(b_of(p));
  for (int call = 0; call < 2; ++call) {
    EXPECT_EQ(ops::qlinear_matmul(a_of(p), tsa, za_of(p), w, tsb, zb_of(p), tsy, tzy).to_host<std::uint8_t>(),
              ops::qlinear_matmul(a_of(p), tsa, za_of(p), b_of(p), tsb, zb_of(p), tsy, tzy).to_host<std::uint8_t>());
    EXPECT_EQ(ops::qlinear_matmul(a_of(p), tsa, za_of(p), w, tsb, zb_of(p)).to_host<float>(),
              ops::qlinear_matmul(a_of(p), tsa, za_of(p), b_of(p), tsb, zb_of(p)).to_host<float>());
  }
}

TEST(IntegerWeight, KeepsItsValuesWhenTheSourceChanges) {
  const Problem p = make(1, 6, 10, 12, DType::U8, DType::I8, false, false, false, 5);
  const auto want = reference(p);
  const std::vector<std::uint8_t> zeros(p.b.size(), 0);
  // Overwritten after the weight's first product (which packed it) and before it.
  const Tensor b1 = b_of(p), b2 = b_of(p);
  const ops::IntegerWeight w1(b1), w2(b2);
  EXPECT_EQ(ops::matmul_integer(a_of(p), w1, za_of(p), zb_of(p)).to_host<std::int32_t>(), want);
  for (const Tensor& b : {b1, b2}) {
    Buffer buf = b.buffer();
    buf.copy_from_host(zeros.data(), zeros.size(), 0);
  }
  EXPECT_EQ(ops::matmul_integer(a_of(p), w1, za_of(p), zb_of(p)).to_host<std::int32_t>(), want);
  EXPECT_EQ(ops::matmul_integer(a_of(p), w2, za_of(p), zb_of(p)).to_host<std::int32_t>(), want);
}

TEST(IntegerWeight, IsSharedSafelyAcrossThreads) {
  const Problem p = make(1, 40, 96, 200, DType::U8, DType::I8, false, true, false, 11);
  expect_definition_on_four_threads(p, ops::IntegerWeight(b_of(p)));
}

TEST(IntegerWeight, BadInputIsRefusedClearly) {
  EXPECT_EQ(error_of("IntegerWeight",
                     [] {
                       ops::IntegerWeight w(host().zeros(Shape{4, 4}, DType::F32));
                     }),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of("IntegerWeight",
                     [] {
                       ops::IntegerWeight w(bytes_tensor(std::vector<std::uint8_t>(8), Shape{2, 2, 2}, DType::U8));
                     }),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of("IntegerWeight", [] { ops::IntegerWeight w{Tensor{}}; }), ErrorCode::InvalidState);
  const ops::IntegerWeight none;
  EXPECT_EQ(error_of("matmul_integer",
                     [&] {
                       ops::matmul_integer(bytes_tensor({1, 2}, Shape{1, 2}, DType::U8), none);
                     }),
            ErrorCode::InvalidState);
  // The product's own checks still apply: inner dimensions must agree.
  const ops::IntegerWeight w(bytes_tensor(std::vector<std::uint8_t>(6), Shape{3, 2}, DType::I8));
  EXPECT_EQ(error_of("matmul_integer",
                     [&] {
                       ops::matmul_integer(bytes_tensor({1, 2}, Shape{1, 2}, DType::U8), w);
                     }),
            ErrorCode::ShapeMismatch);
}

TEST(MatmulInteger, EmptyShapesGiveEmptyOrZeroResults) {
  EXPECT_EQ(ops::matmul_integer(bytes_tensor({}, Shape{0, 4}, DType::U8),
                                bytes_tensor(std::vector<std::uint8_t>(12), Shape{4, 3}, DType::I8))
                .shape(),
            (Shape{0, 3}));
  // k = 0: every sum is empty, 0.
  const Tensor z =
      ops::matmul_integer(bytes_tensor({}, Shape{2, 0}, DType::U8), bytes_tensor({}, Shape{0, 3}, DType::I8));
  EXPECT_EQ(z.to_host<std::int32_t>(), std::vector<std::int32_t>(6, 0));
}

TEST(MatmulInteger, BadInputIsRefusedClearly) {
  const Tensor a = bytes_tensor(std::vector<std::uint8_t>(6), Shape{2, 3}, DType::U8);
  const Tensor b = bytes_tensor(std::vector<std::uint8_t>(12), Shape{3, 4}, DType::I8);
  const Tensor f = host().zeros(Shape{2, 3}, DType::F32);
  EXPECT_EQ(error_of("matmul_integer", [&] { ops::matmul_integer(f, b); }), ErrorCode::DTypeMismatch);
  EXPECT_EQ(error_of("matmul_integer",
                     [&] {
                       ops::matmul_integer(a, bytes_tensor(std::vector<std::uint8_t>(8), Shape{2, 4}, DType::I8));
                     }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_of("matmul_integer", [&] { ops::matmul_integer(a.reshape({6}), b); }), ErrorCode::ShapeMismatch);
  // A zero point of the other dtype, or of the wrong length.
  EXPECT_EQ(error_of("matmul_integer", [&] { ops::matmul_integer(a, b, bytes_tensor({1}, Shape{}, DType::I8)); }),
            ErrorCode::DTypeMismatch);
  EXPECT_EQ(error_of("matmul_integer",
                     [&] {
                       ops::matmul_integer(a, b, bytes_tensor({1, 2, 3}, Shape{3}, DType::U8));
                     }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_of("matmul_integer",
                     [&] {
                       ops::matmul_integer(a, b, std::nullopt, bytes_tensor({1, 2, 3}, Shape{3}, DType::I8));
                     }),
            ErrorCode::ShapeMismatch);
  const auto scalar = [](float v) { return host().from_host(&v, Shape{}, DType::F32); };
  const Tensor zu = bytes_tensor({0}, Shape{}, DType::U8), zi = bytes_tensor({0}, Shape{}, DType::I8);
  for (float bad : {0.0f, -1.0f, std::numeric_limits<float>::infinity(), std::nanf("")})
    EXPECT_EQ(error_of("qlinear_matmul", [&] { ops::qlinear_matmul(a, scalar(bad), zu, b, scalar(1.0f), zi); }),
              ErrorCode::InvalidArgument)
        << bad;
  EXPECT_EQ(
      error_of("qlinear_matmul", [&] { ops::qlinear_matmul(a, scalar(1.0f), zu, b, scalar(1.0f), zi, scalar(1.0f)); }),
      ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of("qlinear_matmul",
                     [&] {
                       ops::qlinear_matmul(a, scalar(1.0f), zu, b, scalar(1.0f), zi, scalar(1.0f),
                                           host().zeros(Shape{}, DType::I32));
                     }),
            ErrorCode::DTypeMismatch);
  EXPECT_EQ(error_of("qlinear_matmul",
                     [&] { ops::qlinear_matmul(a, host().zeros(Shape{}, DType::F16), zu, b, scalar(1.0f), zi); }),
            ErrorCode::DTypeMismatch);
}

// ---------------------------------------------------------------- convolutions

namespace {

struct ConvProblem {
  std::int64_t n, c, h, w, k, r, s, groups;
  ops::Conv2dParams p;
  DType xt, wt;
  std::vector<std::uint8_t> x, wv, zw;  // zw: 1 or k values
  std::uint8_t zx;
};

// The definition: padding holds x's zero point (0 after the subtraction).
std::vector<std::int32_t> conv_reference(const ConvProblem& c, std::int64_t& P, std::int64_t& Q,
                                         const std::vector<std::int32_t>* bias = nullptr) {
  P = (c.h + 2 * c.p.pad_h - c.p.dil_h * (c.r - 1) - 1) / c.p.stride_h + 1;
  Q = (c.w + 2 * c.p.pad_w - c.p.dil_w * (c.s - 1) - 1) / c.p.stride_w + 1;
  const std::int64_t cg = c.c / c.groups, kg = c.k / c.groups;
  std::vector<std::int32_t> out(static_cast<std::size_t>(c.n * c.k * P * Q));
  const int zx = value(c.zx, c.xt);
  for (std::int64_t ni = 0; ni < c.n; ++ni)
    for (std::int64_t ko = 0; ko < c.k; ++ko) {
      const std::int64_t g = ko / kg;
      const int zw = value(c.zw[c.zw.size() == 1 ? 0 : static_cast<std::size_t>(ko)], c.wt);
      for (std::int64_t pi = 0; pi < P; ++pi)
        for (std::int64_t qi = 0; qi < Q; ++qi) {
          std::int64_t sum = bias ? (*bias)[static_cast<std::size_t>(ko)] : 0;
          for (std::int64_t ci = 0; ci < cg; ++ci)
            for (std::int64_t ri = 0; ri < c.r; ++ri)
              for (std::int64_t si = 0; si < c.s; ++si) {
                const std::int64_t y = pi * c.p.stride_h - c.p.pad_h + ri * c.p.dil_h;
                const std::int64_t x = qi * c.p.stride_w - c.p.pad_w + si * c.p.dil_w;
                if (y < 0 || y >= c.h || x < 0 || x >= c.w) continue;
                const int xv =
                    value(c.x[static_cast<std::size_t>(((ni * c.c + g * cg + ci) * c.h + y) * c.w + x)], c.xt);
                const int wv = value(c.wv[static_cast<std::size_t>(((ko * cg + ci) * c.r + ri) * c.s + si)], c.wt);
                sum += static_cast<std::int64_t>(xv - zx) * (wv - zw);
              }
          out[static_cast<std::size_t>(((ni * c.k + ko) * P + pi) * Q + qi)] = static_cast<std::int32_t>(sum);
        }
    }
  return out;
}

ConvProblem make_conv(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, std::int64_t k, std::int64_t r,
                      std::int64_t s, std::int64_t groups, ops::Conv2dParams p, DType xt, DType wt, bool per_channel,
                      std::uint32_t seed) {
  p.groups = groups;
  ConvProblem cp{n,
                 c,
                 h,
                 w,
                 k,
                 r,
                 s,
                 groups,
                 p,
                 xt,
                 wt,
                 random_bytes(static_cast<std::size_t>(n * c * h * w), seed),
                 random_bytes(static_cast<std::size_t>(k * (c / groups) * r * s), seed + 1),
                 random_bytes(static_cast<std::size_t>(per_channel ? k : 1), seed + 2),
                 random_bytes(1, seed + 3)[0]};
  return cp;
}

}  // namespace

TEST(ConvInteger, MatchesTheDefinitionAcrossGeometries) {
  struct G {
    std::int64_t n, c, h, w, k, r, s, groups, stride, pad, dil;
  };
  std::uint32_t seed = 300;
  for (const G& g :
       {G{1, 3, 7, 9, 4, 3, 3, 1, 1, 1, 1}, G{2, 4, 8, 6, 6, 3, 3, 2, 2, 1, 1}, G{1, 2, 9, 9, 3, 3, 2, 1, 1, 0, 2},
        G{1, 4, 5, 5, 4, 1, 1, 4, 1, 0, 1}, G{1, 1, 4, 4, 2, 5, 5, 1, 1, 2, 1}})
    for (const auto& pr : kPairs)
      for (bool per_ch : {false, true}) {
        ops::Conv2dParams p;
        p.stride_h = p.stride_w = g.stride;
        p.pad_h = p.pad_w = g.pad;
        p.dil_h = p.dil_w = g.dil;
        const ConvProblem c = make_conv(g.n, g.c, g.h, g.w, g.k, g.r, g.s, g.groups, p, pr[0], pr[1], per_ch, seed++);
        std::int64_t P = 0, Q = 0;
        const auto want = conv_reference(c, P, Q);
        const Tensor y = ops::conv_integer(bytes_tensor(c.x, Shape{c.n, c.c, c.h, c.w}, c.xt),
                                           bytes_tensor(c.wv, Shape{c.k, c.c / c.groups, c.r, c.s}, c.wt),
                                           bytes_tensor({c.zx}, Shape{}, c.xt),
                                           bytes_tensor(c.zw, per_ch ? Shape{c.k} : Shape{}, c.wt), c.p);
        ASSERT_EQ(y.shape(), (Shape{c.n, c.k, P, Q}));
        EXPECT_EQ(y.to_host<std::int32_t>(), want)
            << "groups " << g.groups << " stride " << g.stride << " pad " << g.pad << " dil " << g.dil << " "
            << dtype_name(pr[0]) << " x " << dtype_name(pr[1]) << " per_channel " << per_ch;
      }
}

TEST(QlinearConv, RequantizesTheSumsWithBias) {
  ops::Conv2dParams p;
  p.pad_h = p.pad_w = 1;
  const ConvProblem c = make_conv(2, 4, 6, 5, 6, 3, 3, 2, p, DType::U8, DType::I8, true, 77);
  std::vector<std::int32_t> bias{-500, 0, 1200, 7, -3, 99999};
  std::int64_t P = 0, Q = 0;
  const auto sums = conv_reference(c, P, Q, &bias);
  std::vector<float> ws{0.01f, 0.02f, 0.015f, 0.03f, 0.005f, 0.012f};
  const float xs = 0.05f, ys = 0.9f;
  const auto f = [](std::vector<float> v) {
    return host().from_host(v.data(), v.size() == 1 ? Shape{} : Shape{static_cast<std::int64_t>(v.size())}, DType::F32);
  };
  const Tensor y = ops::qlinear_conv(
      bytes_tensor(c.x, Shape{c.n, c.c, c.h, c.w}, c.xt), f({xs}), bytes_tensor({c.zx}, Shape{}, c.xt),
      bytes_tensor(c.wv, Shape{c.k, c.c / c.groups, c.r, c.s}, c.wt), f(ws), bytes_tensor(c.zw, Shape{c.k}, c.wt),
      f({ys}), bytes_tensor({10}, Shape{}, DType::U8), host().from_host(bias.data(), Shape{6}, DType::I32), c.p);
  const auto got = y.to_host<std::uint8_t>();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const std::int64_t ko = static_cast<std::int64_t>(i) / (P * Q) % c.k;
    const float q =
        std::nearbyint(static_cast<float>(sums[i]) * ((xs * ws[static_cast<std::size_t>(ko)]) / ys)) + 10.0f;
    ASSERT_EQ(got[i], static_cast<std::uint8_t>(std::min(std::max(q, 0.0f), 255.0f))) << i;
  }
}

TEST(ConvInteger, BadInputIsRefusedClearly) {
  const Tensor x = bytes_tensor(std::vector<std::uint8_t>(2 * 3 * 4 * 4), Shape{2, 3, 4, 4}, DType::U8);
  const Tensor w = bytes_tensor(std::vector<std::uint8_t>(4 * 3 * 3 * 3), Shape{4, 3, 3, 3}, DType::I8);
  EXPECT_EQ(error_of("conv_integer", [&] { ops::conv_integer(x.reshape({2, 3, 16}), w); }), ErrorCode::ShapeMismatch);
  ops::Conv2dParams g2;
  g2.groups = 2;
  EXPECT_EQ(error_of("conv_integer", [&] { ops::conv_integer(x, w, std::nullopt, std::nullopt, g2); }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_of("conv_integer",
                     [&] {
                       ops::conv_integer(x, w, bytes_tensor({1, 2}, Shape{2}, DType::U8));
                     }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_of("conv_integer", [&] { ops::conv_integer(x, w, bytes_tensor({1}, Shape{}, DType::I8)); }),
            ErrorCode::DTypeMismatch);
  ops::Conv2dParams big;
  EXPECT_EQ(
      error_of(
          "conv_integer",
          [&] {
            ops::conv_integer(x, bytes_tensor(std::vector<std::uint8_t>(4 * 3 * 25), Shape{4, 3, 5, 5}, DType::I8));
          }),
      ErrorCode::ShapeMismatch);
  ops::Conv2dParams zero_stride;
  zero_stride.stride_h = 0;
  EXPECT_EQ(error_of("conv_integer", [&] { ops::conv_integer(x, w, std::nullopt, std::nullopt, zero_stride); }),
            ErrorCode::InvalidArgument);
  // Per-channel parameters: one value or one per output channel (K = 4),
  // with or without groups; x's scale one value.
  for (const std::int64_t len : {2, 3, 5, 6})
    for (const std::int64_t groups : {1, 2}) {
      const Tensor wz = bytes_tensor(std::vector<std::uint8_t>(static_cast<std::size_t>(len)), Shape{len}, DType::I8);
      ops::Conv2dParams p;
      p.groups = groups;
      const Tensor xg =
          groups == 1 ? x : bytes_tensor(std::vector<std::uint8_t>(2 * 4 * 4 * 4), Shape{2, 4, 4, 4}, DType::U8);
      const Tensor wg =
          groups == 1 ? w : bytes_tensor(std::vector<std::uint8_t>(4 * 2 * 9), Shape{4, 2, 3, 3}, DType::I8);
      EXPECT_EQ(error_of("w_zero_point", [&] { ops::conv_integer(xg, wg, std::nullopt, wz, p); }),
                ErrorCode::ShapeMismatch)
          << len << " zero points, groups " << groups;
    }
  const auto f = [](std::vector<float> v) {
    return host().from_host(v.data(), Shape{static_cast<std::int64_t>(v.size())}, DType::F32);
  };
  const Tensor zu = bytes_tensor({0}, Shape{}, DType::U8), zi = bytes_tensor({0}, Shape{}, DType::I8);
  EXPECT_EQ(error_of("x_scale",
                     [&] {
                       ops::qlinear_conv(x, f({0.1f, 0.2f}), zu, w, f({1}), zi, f({1}), zu);
                     }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_of("w_scale",
                     [&] {
                       ops::qlinear_conv(x, f({1}), zu, w, f({1, 1, 1}), zi, f({1}), zu);
                     }),
            ErrorCode::ShapeMismatch);
  const std::vector<std::int32_t> b6(6, 0);
  EXPECT_EQ(error_of("bias",
                     [&] {
                       ops::qlinear_conv(x, f({1}), zu, w, f({1}), zi, f({1}), zu,
                                         host().from_host(b6.data(), Shape{6}, DType::I32));
                     }),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_of("empty kernel",
                     [&] {
                       ops::conv_integer(x, bytes_tensor({}, Shape{4, 3, 0, 1}, DType::I8));
                     }),
            ErrorCode::ShapeMismatch);
}
