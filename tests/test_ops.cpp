// The op layer on the CPU backend, against independent f64 references.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "device_test_util.hpp"
#include "ops/widened_reduction.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
using torsh::test::error_code_of;
using torsh::test::make;
using torsh::test::rand_vec;

namespace {
Backend cpu() { return Backend::create(BackendType::Cpu); }

// out = a @ b for row-major [m,k] x [k,n], accumulated in double.
std::vector<double> ref_mm(const std::vector<float>& a, const std::vector<float>& b, int m, int k, int n) {
  std::vector<double> c(static_cast<std::size_t>(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += double(a[i * k + p]) * b[p * n + j];
      c[i * n + j] = s;
    }
  return c;
}

}  // namespace

TEST(OpsBinary, BroadcastAndStrided) {
  auto av = rand_vec(12, 1), bv = rand_vec(4, 2);
  Tensor a = make(av, {3, 4}), b = make(bv, {4});
  auto sum = ops::add(a, b).to_vector();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_FLOAT_EQ(sum[i * 4 + j], av[i * 4 + j] + bv[j]);
  // [3,1] * [1,4] -> [3,4]
  Tensor c = make({1, 2, 3}, {3, 1}), d = make({1, 10, 100, 1000}, {1, 4});
  auto prod = ops::mul(c, d).to_vector();
  EXPECT_EQ(prod[2 * 4 + 3], 3000.f);
  // Transposed (non-contiguous) input.
  Tensor at = a.transpose(0, 1);  // [4,3]
  auto diff = ops::sub(at, at.contiguous()).to_vector();
  for (float x : diff) EXPECT_EQ(x, 0.f);
  auto mx = ops::maximum(make({1, std::nanf(""), 3}, {3}), make({2, 0, 1}, {3})).to_vector();
  EXPECT_EQ(mx[0], 2.f);
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_EQ(mx[2], 3.f);
  auto q = ops::div(make({1, -1, 0}, {3}), make({0, 0, 0}, {3})).to_vector();
  EXPECT_TRUE(std::isinf(q[0]) && q[0] > 0);
  EXPECT_TRUE(std::isinf(q[1]) && q[1] < 0);
  EXPECT_TRUE(std::isnan(q[2]));
}

TEST(OpsBinary, OddSizesAndDtypes) {
  for (int n : {1, 7, 33, 1023, 70001}) {
    auto av = rand_vec(n, n), bv = rand_vec(n, n + 1);
    auto r = ops::add(make(av, {n}), make(bv, {n})).to_vector();
    for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(r[i], av[i] + bv[i]) << n;
  }
  std::vector<std::int32_t> xi = {1, 2, 3}, yi = {10, 20, 30};
  Tensor xt = cpu().from_host(xi.data(), Shape{3}, DType::I32), yt = cpu().from_host(yi.data(), Shape{3}, DType::I32);
  EXPECT_EQ(ops::mul(xt, yt).to_host<std::int32_t>(), (std::vector<std::int32_t>{10, 40, 90}));
  Tensor h = make({1.5f, 2.25f}, {2}).cast(DType::BF16);
  EXPECT_EQ(ops::add(h, h).to_vector(), (std::vector<float>{3.0f, 4.5f}));
}

TEST(OpsBinary, InPlaceAndBadInput) {
  Tensor a = make({1, 2, 3}, {3});
  ops::binary_out(rt::BinaryOp::Add, a, a, a);
  EXPECT_EQ(a.to_vector(), (std::vector<float>{2, 4, 6}));
  Tensor b = make({1, 2}, {2});
  EXPECT_EQ(error_code_of([&] { ops::add(a, b); }), ErrorCode::ShapeMismatch);
  Tensor i = a.cast(DType::I32);
  EXPECT_EQ(error_code_of([&] { ops::add(a, i); }), ErrorCode::DTypeMismatch);
  Tensor out = make({9, 9}, {2});
  EXPECT_EQ(error_code_of([&] { ops::binary_out(rt::BinaryOp::Add, a, a, out); }), ErrorCode::ShapeMismatch);
  EXPECT_EQ(out.to_vector(), (std::vector<float>{9, 9}));  // untouched
  Tensor big = make({1, 2, 3, 4}, {4});
  Tensor part = big.slice(0, 1, 4);  // overlaps `big` but is not the same view
  Tensor src = make({1, 1, 1}, {3});
  EXPECT_EQ(error_code_of([&] { ops::binary_out(rt::BinaryOp::Add, big.slice(0, 0, 3), src, part); }),
            ErrorCode::InvalidArgument);
  std::vector<std::int32_t> zi = {1, 0};
  Tensor zt = cpu().from_host(zi.data(), Shape{2}, DType::I32);
  // Integer division is true division in f64 (NumPy's rule): 1/1 = 1, 0/0 = NaN, never a trap.
  Tensor q = ops::div(zt, zt);
  EXPECT_EQ(q.dtype(), DType::F64);
  EXPECT_EQ(q.to_vector()[0], 1.0f);
  EXPECT_TRUE(std::isnan(q.to_vector()[1]));
  Tensor freed = make({1, 2, 3}, {3});
  const_cast<Buffer&>(freed.buffer()).free();
  EXPECT_EQ(error_code_of([&] { ops::add(freed, a); }), ErrorCode::InvalidState);
}

// Integer sums, means and variances of tensors whose widened copy passes the
// bound reduce in slices (the bound lowered here so small tensors take that
// path): every axis set, keepdim, a transposed view, leading axes of 1 and
// each integer width agree with the whole-copy path and with a host sum.
TEST(OpsIntegers, LargeSumsMeansAndVariancesReduceInSlices) {
  struct Reset {
    ~Reset() { ops::set_widened_reduction_bytes(0); }
  } reset;
  std::mt19937 g(7);
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<std::int32_t> v(1 * 6 * 5 * 7);
  for (auto& x : v) x = d(g);
  const Tensor i32 = cpu().from_host(v.data(), Shape{1, 6, 5, 7}, DType::I32);
  const std::vector<Tensor> inputs = {
      i32, i32.cast(DType::I8),
      ops::add(i32, cpu().from_host(std::vector<std::int32_t>{128}.data(), Shape{}, DType::I32)).cast(DType::U8),
      i32.permute({0, 2, 1, 3}), i32.cast(DType::I64)};
  const std::vector<std::vector<std::int64_t>> axis_sets = {{}, {0}, {1}, {-1}, {1, 2}, {0, 3}, {1, 2, 3}, {2}};
  for (const Tensor& x : inputs)
    for (const auto& axes : axis_sets)
      for (const bool keep : {false, true}) {
        ops::set_widened_reduction_bytes(0);
        const Tensor s0 = ops::sum(x, axes, keep), m0 = ops::mean(x, axes, keep), v0 = ops::var(x, axes, 1, keep);
        for (const std::int64_t bytes : {8, 40, 300}) {
          ops::set_widened_reduction_bytes(bytes);
          const Tensor s = ops::sum(x, axes, keep), m = ops::mean(x, axes, keep), var = ops::var(x, axes, 1, keep);
          const auto where = ::testing::Message() << dtype_name(x.dtype()) << " axes " << axes.size() << " keep "
                                                  << keep << " bytes " << bytes;
          ASSERT_EQ(s.shape(), s0.shape()) << where;
          ASSERT_EQ(s.dtype(), s0.dtype()) << where;
          EXPECT_EQ(s.to_vector(), s0.to_vector()) << where;
          ASSERT_EQ(m.shape(), m0.shape()) << where;
          EXPECT_EQ(m.dtype(), DType::F64) << where;
          const auto mv = m.to_vector(), mv0 = m0.to_vector(), vv = var.to_vector(), vv0 = v0.to_vector();
          for (std::size_t i = 0; i < mv.size(); ++i) EXPECT_NEAR(mv[i], mv0[i], 1e-5) << where;
          ASSERT_EQ(var.shape(), v0.shape()) << where;
          for (std::size_t i = 0; i < vv.size(); ++i) {
            if (std::isnan(vv0[i])) {  // n - correction = 0 (axis 0 has one value): NaN both ways
              EXPECT_TRUE(std::isnan(vv[i])) << where;
              continue;
            }
            EXPECT_NEAR(vv[i], vv0[i], 1e-3 + 1e-5 * std::abs(vv0[i])) << where;
          }
        }
      }
  // The whole sum against the host's.
  ops::set_widened_reduction_bytes(16);
  double host = 0;
  for (const auto x : v) host += x;
  EXPECT_EQ(ops::sum(i32).to_vector()[0], static_cast<float>(host));
}

// Integers follow NumPy: sums widen to i64, means are f64, divide is true
// division, add/sub/mul wrap, negative integer powers are refused.
TEST(OpsIntegers, FollowNumPysRules) {
  std::vector<std::uint8_t> u = {200, 100, 250};
  Tensor tu = cpu().from_host(u.data(), Shape{3}, DType::U8);
  Tensor s = ops::sum(tu);
  EXPECT_EQ(s.dtype(), DType::I64);
  EXPECT_EQ(s.to_vector()[0], 550.0f);
  std::vector<std::int32_t> big = {2147483647, 2147483647, 5};
  Tensor tb = cpu().from_host(big.data(), Shape{3}, DType::I32);
  EXPECT_EQ(ops::sum(tb).to_vector()[0], 4294967299.0f);
  Tensor m = ops::mean(tu);
  EXPECT_EQ(m.dtype(), DType::F64);
  EXPECT_NEAR(m.to_vector()[0], 550.0 / 3, 1e-4);
  std::vector<std::int32_t> a = {7, -7, 1}, b = {2, 2, 3};
  Tensor ta = cpu().from_host(a.data(), Shape{3}, DType::I32), tb2 = cpu().from_host(b.data(), Shape{3}, DType::I32);
  EXPECT_EQ(ops::div(ta, tb2).to_vector(), (std::vector<float>{3.5f, -3.5f, 1.0f / 3}));
  Tensor ia = ta;
  EXPECT_EQ(error_code_of([&] { ops::binary_(rt::BinaryOp::Div, ia, tb2); }), ErrorCode::DTypeMismatch);
  // Wrapping, two's complement: 2147483647 + 1 = -2147483648.
  std::vector<std::int32_t> one = {1, 1, 1};
  Tensor t1 = cpu().from_host(one.data(), Shape{3}, DType::I32);
  EXPECT_EQ(ops::add(tb, t1).to_vector()[0], -2147483648.0f);
  // Exact integer powers (3^20 = 3486784401 does not fit f32's 24 bits exactly, but 3^15 does).
  std::vector<std::int64_t> base = {3, -2, 0}, ex = {15, 3, 0};
  Tensor tbase = cpu().from_host(base.data(), Shape{3}, DType::I64),
         tex = cpu().from_host(ex.data(), Shape{3}, DType::I64);
  EXPECT_EQ(ops::pow(tbase, tex).to_vector(), (std::vector<float>{14348907.0f, -8.0f, 1.0f}));
  std::vector<std::int64_t> neg = {1, -1, 2};
  Tensor tneg = cpu().from_host(neg.data(), Shape{3}, DType::I64);
  EXPECT_EQ(error_code_of([&] { ops::pow(tbase, tneg); }), ErrorCode::InvalidArgument);
}

TEST(OpsMatmul, MatchesReferenceOnOddShapes) {
  for (auto [m, k, n] :
       std::vector<std::array<int, 3>>{{1, 1, 1}, {7, 13, 5}, {33, 17, 65}, {64, 64, 64}, {1, 300, 1}}) {
    auto av = rand_vec(m * k, m + k), bv = rand_vec(k * n, n);
    auto got = ops::matmul(make(av, {m, k}), make(bv, {k, n})).to_vector();
    auto ref = ref_mm(av, bv, m, k, n);
    for (std::size_t i = 0; i < ref.size(); ++i)
      ASSERT_NEAR(got[i], ref[i], 1e-5 * (1 + k)) << m << "x" << k << "x" << n;
  }
}

TEST(OpsMatmul, BatchedTransposedVectorAndGemm) {
  const int B = 3, m = 4, k = 5, n = 6;
  auto av = rand_vec(B * m * k, 11), bv = rand_vec(k * n, 12);
  Tensor a = make(av, {B, m, k}), b = make(bv, {k, n});
  auto got = ops::matmul(a, b).to_vector();  // b broadcast over the batch
  ASSERT_EQ(got.size(), std::size_t(B * m * n));
  for (int bi = 0; bi < B; ++bi) {
    std::vector<float> sa(av.begin() + bi * m * k, av.begin() + (bi + 1) * m * k);
    auto ref = ref_mm(sa, bv, m, k, n);
    for (int i = 0; i < m * n; ++i) EXPECT_NEAR(got[bi * m * n + i], ref[i], 1e-5);
  }
  // Transposed operand through strides: (b^T)^T == b.
  Tensor bt = make(bv, {k, n}).transpose(0, 1).contiguous().transpose(0, 1);
  auto got2 = ops::matmul(make(av, {B, m, k}), bt).to_vector();
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got2[i], got[i], 1e-6);
  // 1-D operands follow NumPy.
  Tensor v = make({1, 2, 3, 4, 5}, {5});
  EXPECT_EQ(ops::matmul(make(av, {B, m, k}), v).shape(), (Shape{B, m}));
  EXPECT_EQ(ops::matmul(v, v).shape(), Shape{});
  EXPECT_FLOAT_EQ(ops::matmul(v, v).to_vector()[0], 55.f);
  // gemm: alpha * a^T @ b + beta * c
  auto a2 = rand_vec(k * m, 21), cv = rand_vec(m * n, 22);
  Tensor g = ops::gemm(make(a2, {k, m}), make(bv, {k, n}), 2.0f, 0.5f, make(cv, {m, n}), true, false);
  std::vector<float> a2t(m * k);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) a2t[i * k + p] = a2[p * m + i];
  auto ref = ref_mm(a2t, bv, m, k, n);
  auto gv = g.to_vector();
  for (int i = 0; i < m * n; ++i) EXPECT_NEAR(gv[i], 2.0 * ref[i] + 0.5 * cv[i], 1e-5);
  // beta == 0 ignores NaN in c.
  std::vector<float> nanc(m * n, std::nanf(""));
  auto g0 = ops::gemm(make(a2, {k, m}), make(bv, {k, n}), 1.0f, 0.0f, make(nanc, {m, n}), true).to_vector();
  for (float x : g0) EXPECT_FALSE(std::isnan(x));
  // k == 0 gives zeros.
  auto z = ops::matmul(cpu().empty(Shape{2, 0}, DType::F32), cpu().empty(Shape{0, 3}, DType::F32)).to_vector();
  EXPECT_EQ(z, std::vector<float>(6, 0.f));
}

TEST(OpsMatmul, HalfPrecisionAccumulatesInF32) {
  const int m = 8, k = 256, n = 8;
  auto av = rand_vec(m * k, 31), bv = rand_vec(k * n, 32);
  for (DType dt : {DType::F16, DType::BF16}) {
    Tensor a = make(av, {m, k}).cast(dt), b = make(bv, {k, n}).cast(dt);
    auto got = ops::matmul(a, b).to_vector();
    auto ar = a.to_vector(), br = b.to_vector();  // rounded inputs
    auto ref = ref_mm(ar, br, m, k, n);
    const double tol = dt == DType::F16 ? 2e-2 : 1.5e-1;  // output rounding only
    for (int i = 0; i < m * n; ++i) EXPECT_NEAR(got[i], ref[i], tol * (1 + std::abs(ref[i])) / 8) << dtype_name(dt);
  }
}

TEST(OpsMatmul, BadInput) {
  Tensor a = make(rand_vec(6, 1), {2, 3}), b = make(rand_vec(8, 2), {4, 2});
  try {
    ops::matmul(a, b);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::ShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("[2, 3] @ [4, 2]"), std::string::npos);
  }
  EXPECT_EQ(error_code_of([&] { ops::matmul(a.cast(DType::I32), a.cast(DType::I32)); }), ErrorCode::DTypeMismatch);
  EXPECT_EQ(error_code_of([&] { ops::gemm(a, b, 1.f, 1.f); }), ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_code_of([&] { ops::gemm(a, a, 1.f, 1.f, std::nullopt, false, true); }), ErrorCode::InvalidArgument);
}

TEST(OpsSoftmax, StableOnAnyAxis) {
  const int r = 5, c = 7;
  auto v = rand_vec(r * c, 3, -5, 5);
  v[3] = 1e4f;  // large magnitude in row 0
  Tensor x = make(v, {r, c});
  for (int axis : {0, 1, -1}) {
    auto got = ops::softmax(x, axis).to_vector();
    auto lgot = ops::log_softmax(x, axis).to_vector();
    const int ax = axis < 0 ? 1 : axis;
    const int n = ax == 0 ? r : c, lines = ax == 0 ? c : r;
    for (int l = 0; l < lines; ++l) {
      auto at = [&](int i) { return ax == 0 ? i * c + l : l * c + i; };
      double mx = -1e300, sum = 0;
      for (int i = 0; i < n; ++i) mx = std::max(mx, double(v[at(i)]));
      for (int i = 0; i < n; ++i) sum += std::exp(v[at(i)] - mx);
      for (int i = 0; i < n; ++i) {
        EXPECT_NEAR(got[at(i)], std::exp(v[at(i)] - mx) / sum, 1e-6);
        const double ref = v[at(i)] - mx - std::log(sum);
        EXPECT_NEAR(lgot[at(i)], ref, 1e-5 + 2.5e-7 * std::abs(ref));  // f32 output rounding
      }
    }
  }
  auto inf = ops::softmax(make({-INFINITY, -INFINITY}, {2})).to_vector();
  EXPECT_TRUE(std::isnan(inf[0]));  // 0/0, as PyTorch
  auto withnan = ops::softmax(make({1, std::nanf(""), 2}, {3})).to_vector();
  EXPECT_TRUE(std::isnan(withnan[0]));
  EXPECT_EQ(ops::softmax(cpu().empty(Shape{0, 3}, DType::F32)).numel(), 0);
  EXPECT_EQ(error_code_of([&] { ops::softmax(x, 2); }), ErrorCode::OutOfRange);
  EXPECT_EQ(error_code_of([&] { ops::softmax(x.cast(DType::I32)); }), ErrorCode::DTypeMismatch);
}
