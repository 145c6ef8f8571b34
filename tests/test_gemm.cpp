// CPU GEMM against a double-precision reference: odd and tile-edge sizes,
// sizes that cross the cache blocks, transposes and strided views, alpha/beta,
// batches with broadcast batch dims, k == 0, f16/bf16 inputs with f32
// accumulation, and more threads than the machine has.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <thread>

#include "backends/cpu/gemm/gemm.hpp"
#include "torsh/backend/backend_impl.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;

namespace {

Backend cpu_backend() { return Backend::create(BackendType::Cpu); }

Tensor randn_like_host(const Shape& s, unsigned seed, DType dt = DType::F32) {
  std::mt19937 g(seed);
  std::normal_distribution<float> u(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(s.numel()));
  for (auto& x : v) x = u(g);
  Tensor t = cpu_backend().from_host(v.data(), s, DType::F32);
  return dt == DType::F32 ? t : t.cast(dt);
}

// Rounding of one output element in `dt` (half an ulp, relative), plus slack.
double out_eps(DType dt) {
  switch (dt) {
    case DType::BF16: return 1.0 / 256;
    case DType::F16: return 1.0 / 1024;
    default: return 1e-6;
  }
}

// Checks out[b] == alpha * a[b] @ b[b] + beta * c[b] for rank-3 tensors
// (batch dims already broadcast), reading every operand through to_vector()
// so the reference sees exactly the rounded inputs the kernel saw.
void expect_gemm(const Tensor& out, const Tensor& a, const Tensor& b, float alpha, float beta,
                 const std::optional<Tensor>& c, const std::string& what) {
  ASSERT_EQ(out.ndim(), 3u) << what;
  const std::int64_t B = out.shape()[0], m = out.shape()[1], n = out.shape()[2], k = a.shape()[2];
  const auto av = a.to_vector(), bv = b.to_vector(), got = out.to_vector();
  const std::vector<float> cv = c ? c->to_vector() : std::vector<float>{};
  // f32 accumulation over k terms: a few units of 2^-24 per term, relative to sum |a * b|.
  const double acc_eps = 4e-7 * std::sqrt(static_cast<double>(k) + 1) + 2e-7;
  const double oeps = out_eps(out.dtype());
  int bad = 0;
  std::vector<double> sum(static_cast<std::size_t>(n)), mag(static_cast<std::size_t>(n));
  for (std::int64_t bi = 0; bi < B; ++bi)
    for (std::int64_t i = 0; i < m; ++i) {
      std::fill(sum.begin(), sum.end(), 0.0);
      std::fill(mag.begin(), mag.end(), 0.0);
      for (std::int64_t p = 0; p < k; ++p) {
        const double x = av[(bi * m + i) * k + p];
        const float* brow = bv.data() + (bi * k + p) * n;
        for (std::int64_t j = 0; j < n; ++j) {
          const double t = x * brow[j];
          sum[j] += t;
          mag[j] += std::abs(t);
        }
      }
      for (std::int64_t j = 0; j < n; ++j) {
        const std::size_t o = static_cast<std::size_t>((bi * m + i) * n + j);
        double ref = alpha * sum[j], size = std::abs(alpha) * mag[j];
        if (beta != 0.0f) {
          ref += double(beta) * cv[o];
          size += std::abs(double(beta) * cv[o]);
        }
        const double tol = acc_eps * size + oeps * std::abs(ref) + 1e-30;
        if (!(std::abs(got[o] - ref) <= tol) && bad++ < 5)
          ADD_FAILURE() << what << ": [" << bi << ", " << i << ", " << j << "] got " << got[o] << " want " << ref
                        << " (tol " << tol << ")";
      }
    }
  EXPECT_EQ(bad, 0) << what << " (" << m << "x" << k << "x" << n << ", batch " << B << ")";
}

// The first element of a CPU tensor, for calling the kernels directly.
void* host_data(const Tensor& t) {
  const rt::TensorArg arg = t.arg();
  return static_cast<char*>(arg.buffer->host_ptr()) + arg.offset * static_cast<std::int64_t>(dtype_size(arg.dtype));
}

Tensor r3(const Tensor& t) { return t.ndim() == 3 ? t : t.unsqueeze(0); }

void check_matmul(std::int64_t m, std::int64_t k, std::int64_t n, DType dt, unsigned seed) {
  Tensor a = randn_like_host(Shape{m, k}, seed, dt), b = randn_like_host(Shape{k, n}, seed + 1, dt);
  Tensor out = ops::matmul(a, b);
  ASSERT_EQ(out.dtype(), dt);
  expect_gemm(
      r3(out), r3(a), r3(b), 1.0f, 0.0f, std::nullopt,
      std::string(dtype_name(dt)) + " matmul " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n));
}

// A row-major m x n C (dtype `out`) of `c` as a problem over the operands a and b.
torsh::cpu::gemm::Problem problem(const torsh::cpu::gemm::Mat& a, const torsh::cpu::gemm::Mat& b, const Tensor& c,
                                  DType out, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, float beta) {
  torsh::cpu::gemm::Problem p;
  p.a = a;
  p.b = b;
  p.c = host_data(c);
  p.c_dtype = out;
  p.c_rs = n;
  p.c_cs = 1;
  p.m = m;
  p.n = n;
  p.k = k;
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

}  // namespace

TEST(Gemm, OddAndEdgeSizesF32) {
  // 14 x 32 is the AVX-512 register tile, 6 x 16 the AVX2 one: cover full,
  // partial and single-row/column tiles of both, and the unpacked tiny path.
  const std::vector<std::array<std::int64_t, 3>> shapes = {
      {1, 1, 1},    {4, 4, 4},     {7, 7, 7},    {1, 33, 1},    {33, 1, 33},   {13, 17, 31}, {14, 64, 32},
      {15, 65, 33}, {28, 100, 64}, {29, 3, 47},  {6, 200, 16},  {7, 9, 17},    {1, 1023, 1}, {1, 257, 1023},
      {1023, 7, 1}, {33, 1023, 7}, {64, 64, 64}, {100, 1, 100}, {47, 130, 95},
  };
  unsigned seed = 1;
  for (auto [m, k, n] : shapes) check_matmul(m, k, n, DType::F32, seed += 2);
}

TEST(Gemm, CrossesCacheBlocks) {
  // k past one and two k blocks (384 f32, 768 bf16 pairs), n past a 512-column
  // block and m past a 1008-row block, none of them tile multiples.
  check_matmul(1023, 770, 515, DType::F32, 5);
  check_matmul(97, 1537, 45, DType::F32, 6);
  check_matmul(1023, 770, 515, DType::BF16, 7);
  check_matmul(200, 385, 530, DType::F16, 8);
}

TEST(Gemm, ZeroK) {
  Tensor a = cpu_backend().empty(Shape{5, 0}, DType::F32), b = cpu_backend().empty(Shape{0, 7}, DType::F32);
  for (float x : ops::matmul(a, b).to_vector()) EXPECT_EQ(x, 0.0f);
  Tensor c = randn_like_host(Shape{5, 7}, 3);
  auto g = ops::gemm(a, b, 2.0f, 0.5f, c).to_vector(), cv = c.to_vector();
  for (std::size_t i = 0; i < cv.size(); ++i) EXPECT_FLOAT_EQ(g[i], 0.5f * cv[i]);
  std::vector<float> nan(35, std::nanf(""));
  Tensor cn = cpu_backend().from_host(nan.data(), Shape{5, 7}, DType::F32);
  for (float x : ops::gemm(a, b, 1.0f, 0.0f, cn).to_vector()) EXPECT_EQ(x, 0.0f);
}

TEST(Gemm, TransposesAlphaBeta) {
  // The last shape has several k blocks: beta must apply once, not per block.
  // Then matrix-vector shapes, which skip packing.
  for (auto [m, k, n] : std::vector<std::array<std::int64_t, 3>>{
           {5, 3, 4}, {37, 129, 70}, {130, 800, 70}, {1, 700, 300}, {400, 500, 1}, {1, 40, 5000}})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (auto [alpha, beta] : std::vector<std::array<float, 2>>{{1.0f, 0.0f}, {-0.5f, 2.0f}, {2.0f, 1.0f}}) {
          const unsigned s = static_cast<unsigned>(m + k + n + ta * 2 + tb);
          Tensor a = ta ? randn_like_host(Shape{k, m}, s) : randn_like_host(Shape{m, k}, s);
          Tensor b = tb ? randn_like_host(Shape{n, k}, s + 1) : randn_like_host(Shape{k, n}, s + 1);
          Tensor c = randn_like_host(Shape{m, n}, s + 2);
          Tensor out = ops::gemm(a, b, alpha, beta, c, ta, tb);
          Tensor la = ta ? a.transpose(0, 1) : a, lb = tb ? b.transpose(0, 1) : b;
          expect_gemm(r3(out), r3(la), r3(lb), alpha, beta, r3(c),
                      "gemm ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) +
                          " alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta));
        }
}

TEST(Gemm, BetaZeroIgnoresNaN) {
  for (auto [m, k, n] : std::vector<std::array<std::int64_t, 3>>{{3, 4, 5}, {70, 500, 90}})
    for (DType dt : {DType::F32, DType::BF16, DType::F16}) {
      Tensor a = randn_like_host(Shape{m, k}, 1, dt), b = randn_like_host(Shape{k, n}, 2, dt);
      std::vector<float> nan(static_cast<std::size_t>(m * n), std::nanf(""));
      Tensor c = cpu_backend().from_host(nan.data(), Shape{m, n}, DType::F32).cast(dt);
      Tensor out = ops::gemm(a, b, 1.5f, 0.0f, c);
      for (float x : out.to_vector()) ASSERT_FALSE(std::isnan(x)) << dtype_name(dt);
      expect_gemm(r3(out), r3(a), r3(b), 1.5f, 0.0f, std::nullopt, "beta 0, NaN C");
    }
}

TEST(Gemm, BatchedWithBroadcastBatchDims) {
  // [2, 1, m, k] @ [3, k, n] -> [2, 3, m, n]: a repeats over the 3, b over the 2.
  for (auto [m, k, n] : std::vector<std::array<std::int64_t, 3>>{{5, 6, 7}, {40, 70, 50}, {130, 257, 140}}) {
    Tensor a = randn_like_host(Shape{2, 1, m, k}, 11), b = randn_like_host(Shape{3, k, n}, 12);
    Tensor out = ops::matmul(a, b);
    ASSERT_EQ(out.shape(), (Shape{2, 3, m, n}));
    Tensor ab = a.broadcast_to(Shape{2, 3, m, k}).contiguous().reshape({6, m, k});
    Tensor bb = b.broadcast_to(Shape{2, 3, k, n}).contiguous().reshape({6, k, n});
    expect_gemm(out.reshape({6, m, n}), ab, bb, 1.0f, 0.0f, std::nullopt, "broadcast batch");
  }
  // Batched gemm with alpha/beta, one shared b, an odd batch count.
  Tensor a = randn_like_host(Shape{3, 90, 300}, 13), b = randn_like_host(Shape{300, 80}, 14);
  Tensor c = randn_like_host(Shape{3, 90, 80}, 15);
  Tensor out = ops::gemm(a, b, 0.75f, -1.0f, c);
  expect_gemm(out, a, b.unsqueeze(0).broadcast_to(Shape{3, 300, 80}).contiguous(), 0.75f, -1.0f, c, "batched gemm");
}

TEST(Gemm, StridedViews) {
  // Leading dimensions larger than the row (slices of wider matrices), a
  // column step of 2, and transposed views without a copy.
  Tensor wide_a = randn_like_host(Shape{150, 260}, 21), wide_b = randn_like_host(Shape{300, 190}, 22);
  Tensor a = wide_a.slice(1, 3, 3 + 203), b = wide_b.slice(0, 1, 1 + 203).slice(1, 5, 5 + 77);
  expect_gemm(r3(ops::matmul(a, b)), r3(a), r3(b), 1.0f, 0.0f, std::nullopt, "sliced operands");
  Tensor stepped = wide_b.slice(0, 0, 260).slice(1, 0, 190, 2);  // column stride 2
  expect_gemm(r3(ops::matmul(wide_a, stepped)), r3(wide_a), r3(stepped), 1.0f, 0.0f, std::nullopt, "column step 2");
  Tensor at = randn_like_host(Shape{203, 150}, 23).transpose(0, 1);
  expect_gemm(r3(ops::matmul(at, b)), r3(at), r3(b), 1.0f, 0.0f, std::nullopt, "transposed view");
}

TEST(Gemm, HalfInputsAccumulateInF32) {
  // Long k: a half-precision accumulator would lose ~1e-2 relative here.
  for (DType dt : {DType::BF16, DType::F16}) {
    check_matmul(1, 4096, 1, dt, 31);
    check_matmul(7, 2001, 33, dt, 32);
    check_matmul(64, 1025, 96, dt, 33);
    check_matmul(29, 31, 61, dt, 34);
    check_matmul(1, 2001, 300, dt, 35);
    check_matmul(300, 2001, 1, dt, 36);
  }
  // Odd k with bf16 pairs, transposed operands and beta, in one k block and in
  // several (where the half-precision output is accumulated in f32 first).
  for (DType dt : {DType::BF16, DType::F16})
    for (std::int64_t k : {77, 1601}) {
      Tensor a = randn_like_host(Shape{k, 45}, 35, dt), b = randn_like_host(Shape{66, k}, 36, dt);
      Tensor c = randn_like_host(Shape{45, 66}, 37, dt);
      Tensor out = ops::gemm(a, b, 1.25f, 0.5f, c, true, true);
      expect_gemm(r3(out), r3(a.transpose(0, 1)), r3(b.transpose(0, 1)), 1.25f, 0.5f, r3(c),
                  std::string(dtype_name(dt)) + " gemm tt, k " + std::to_string(k));
    }
}

TEST(Gemm, SpecialValues) {
  // f16 subnormals convert exactly; inf and NaN propagate as in IEEE arithmetic.
  const std::int64_t m = 40, k = 64, n = 40;  // large enough for the packed path
  std::vector<float> av(m * k, 0.0f), bv(k * n, 1.0f);
  for (std::int64_t i = 0; i < m; ++i) av[i * k + i] = std::ldexp(1.0f, -24 + static_cast<int>(i % 10));
  av[3 * k + 5] = std::numeric_limits<float>::infinity();
  av[7 * k + 1] = std::nanf("");
  for (DType dt : {DType::F32, DType::F16}) {
    Tensor a = cpu_backend().from_host(av.data(), Shape{m, k}, DType::F32).cast(dt);
    Tensor b = cpu_backend().from_host(bv.data(), Shape{k, n}, DType::F32).cast(dt);
    auto got = ops::matmul(a, b).to_vector();
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const float x = got[i * n + j];
        if (i == 3)
          EXPECT_TRUE(std::isinf(x) && x > 0) << dtype_name(dt);
        else if (i == 7)
          EXPECT_TRUE(std::isnan(x)) << dtype_name(dt);
        else
          EXPECT_EQ(x, std::ldexp(1.0f, -24 + static_cast<int>(i % 10))) << dtype_name(dt) << " row " << i;
      }
  }
}

TEST(Gemm, HalfInputsAreExact) {
  // Small integers are exact in f16 and bf16 and their products sum exactly in
  // f32, so the result must be the exact integer product rounded once, to the
  // output dtype: nothing may be lost on the way in.
  const std::int64_t m = 40, k = 300, n = 50;
  std::vector<float> av(m * k), bv(k * n), want(m * n);
  for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t p = 0; p < k; ++p) s += double(av[i * k + p]) * bv[p * n + j];
      want[i * n + j] = static_cast<float>(s);
    }
  for (DType dt : {DType::F16, DType::BF16}) {
    Tensor a = cpu_backend().from_host(av.data(), Shape{m, k}, DType::F32).cast(dt);
    Tensor b = cpu_backend().from_host(bv.data(), Shape{k, n}, DType::F32).cast(dt);
    auto got = ops::matmul(a, b).to_vector();
    auto rounded = cpu_backend().from_host(want.data(), Shape{m, n}, DType::F32).cast(dt).to_vector();
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], rounded[i]) << dtype_name(dt) << " element " << i;
  }
}

TEST(Gemm, ThreadCountsThatDoNotDivideTheWork) {
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int threads : {1, 3}) {
    Backend::builder().backend_type(BackendType::Cpu).num_threads(threads).build();
    check_matmul(301, 129, 97, DType::F32, 41);
    check_matmul(5, 300, 1000, DType::F32, 42);
    check_matmul(101, 64, 3, DType::BF16, 43);
    check_matmul(2000, 50, 1, DType::F32, 44);
    check_matmul(1, 50, 2000, DType::F16, 45);
  }
  Backend::builder().backend_type(BackendType::Cpu).num_threads(hw).build();
}

TEST(Gemm, ConcurrentCallers) {
  // While one caller holds the pool, another's tasks run one after another on
  // its own thread, each with its own packing buffers.
  std::vector<std::thread> callers;
  for (unsigned t = 0; t < 3; ++t)
    callers.emplace_back([t] {
      for (unsigned rep = 0; rep < 4; ++rep) check_matmul(150 + t, 170, 190 + rep, DType::F32, 60 + 4 * t + rep);
    });
  for (auto& c : callers) c.join();
}

TEST(Gemm, F64) {
  check_matmul(37, 90, 41, DType::F64, 51);
  check_matmul(3, 3, 3, DType::F64, 52);
}

// Every micro-kernel this CPU can run, called directly, so the AVX2 and
// portable kernels are checked on machines whose dispatcher picks AVX-512.
TEST(Gemm, EveryKernelThisCpuRuns) {
  namespace g = torsh::cpu::gemm;
  std::vector<const g::Kernel*> kernels = {&g::kernel_generic_f32()};
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    kernels.push_back(&g::kernel_avx2_f32());
    kernels.push_back(&g::kernel_avx2_f32_deep_k());
  }
  const bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  if (avx512) {
    kernels.push_back(&g::kernel_avx512_f32());
    kernels.push_back(&g::kernel_avx512_f32_deep_k());
  }
  if (avx512 && __builtin_cpu_supports("avx512bf16")) {
    kernels.push_back(&g::kernel_avx512_bf16());
    kernels.push_back(&g::kernel_avx512_bf16_deep_k());
  }
#endif
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (const g::Kernel* kern : kernels) {
    const bool pairs = kern->panel == g::Panel::Bf16Pairs;
    // bf16 pair panels take only bf16; f32 panels take every input dtype.
    const std::vector<DType> inputs =
        pairs ? std::vector<DType>{DType::BF16} : std::vector<DType>{DType::F32, DType::F16, DType::BF16};
    for (DType in : inputs)
      for (auto [m, k, n] : std::vector<std::array<std::int64_t, 3>>{
               {1, 1, 1}, {13, 37, 29}, {70, 301, 100}, {29, 1601, 45}, {17, 4501, 40}})
        for (int trans = 0; trans < 4; ++trans)
          for (DType out : {in, DType::F32}) {
            const bool ta = trans & 1, tb = trans & 2;
            const float alpha = trans == 3 ? -0.5f : 1.0f, beta = trans >= 2 ? 2.0f : 0.0f;
            std::vector<float> av(m * k), bv(k * n), cv(m * n);
            for (auto* v : {&av, &bv, &cv})
              for (auto& x : *v) x = normal(rng);
            // Round the inputs to their dtype first so the reference sees what the kernel sees.
            auto rounded = [&](std::vector<float>& v, DType dt) {
              Tensor t =
                  cpu_backend().from_host(v.data(), Shape{static_cast<std::int64_t>(v.size())}, DType::F32).cast(dt);
              v = t.to_vector();
              return t;
            };
            Tensor at = rounded(av, in), bt = rounded(bv, in), ct = rounded(cv, out);
            if (ta) at = at.reshape({m, k}).transpose(0, 1).contiguous();  // stored [k, m]
            if (tb) bt = bt.reshape({k, n}).transpose(0, 1).contiguous();  // stored [n, k]
            g::run_blocked(*kern, problem({host_data(at), in, ta ? 1 : k, ta ? m : 1},
                                          {host_data(bt), in, tb ? 1 : n, tb ? k : 1}, ct, out, m, n, k, alpha, beta));
            Tensor a3 = cpu_backend().from_host(av.data(), Shape{1, m, k}, DType::F32);
            Tensor b3 = cpu_backend().from_host(bv.data(), Shape{1, k, n}, DType::F32);
            Tensor c3 = cpu_backend().from_host(cv.data(), Shape{1, m, n}, DType::F32);
            expect_gemm(ct.reshape({1, m, n}), a3, b3, alpha, beta,
                        beta != 0.0f ? std::optional<Tensor>(c3) : std::nullopt,
                        std::string(kern->name) + " " + std::string(dtype_name(in)) + "->" +
                            std::string(dtype_name(out)) + " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
          }
  }
}

// Every kernel with blocks far smaller than its own, in both loop orders and
// on 1 to 3 threads, so small products cross many k, row and column blocks,
// work items split columns, k blocks are packed all at once or one ahead of
// their use (or, within one row block, by each item for itself), and a
// half-precision C with several k blocks is accumulated in bands of a few rows.
TEST(Gemm, TinyBlocksInBothLoopOrders) {
  namespace g = torsh::cpu::gemm;
  std::vector<const g::Kernel*> kernels = {&g::kernel_generic_f32()};
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) kernels.push_back(&g::kernel_avx2_f32());
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    kernels.push_back(&g::kernel_avx512_f32());
#endif
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  for (const g::Kernel* base : kernels)
    for (g::Resident order : {g::Resident::APanel, g::Resident::BPanel})
      for (DType out : {DType::F32, DType::F16})
        for (int threads : {1, 2, 3})
          for (int shape : {0, 1, 2, 3}) {
            g::Kernel kern = *base;
            kern.resident = order;
            kern.kc = 16;
            kern.mc = 2 * kern.mr;
            kern.nc = 2 * kern.nr;
            // 0, 1: several row blocks, k blocks packed all at once or one ahead
            // of their use (on several threads with C in place: column chunks,
            // A shared for all k blocks or one k block at a time); 2, 3: one row
            // block (items pack their own B), with several k blocks or one.
            const bool whole_k = shape == 0, one_block = shape >= 2;
            const std::int64_t m = one_block ? 2 * kern.mr - 1 : 5 * kern.mr + 3, k = shape == 3 ? 9 : 53,
                               n = (one_block ? 13 : 3) * kern.nr + 5;  // one block: items of several panels
            std::vector<float> av(m * k), bv(k * n), cv(m * n);
            for (auto* v : {&av, &bv, &cv})
              for (auto& x : *v) x = normal(rng);
            Tensor at = cpu_backend().from_host(av.data(), Shape{m, k}, DType::F32);
            Tensor bt = cpu_backend().from_host(bv.data(), Shape{k, n}, DType::F32);
            Tensor ct = cpu_backend().from_host(cv.data(), Shape{m, n}, DType::F32).cast(out);
            cv = ct.to_vector();
            const g::Problem p = problem({host_data(at), DType::F32, k, 1}, {host_data(bt), DType::F32, n, 1}, ct, out,
                                         m, n, k, 0.75f, -1.5f);
            // Room for two tile rows of the f32 copy: bands of 2 * MR rows.
            g::Limits lim;
            lim.acc_budget = static_cast<std::size_t>(2 * kern.mr * (n + kern.nr)) * sizeof(float);
            lim.whole_k_bytes = whole_k ? lim.whole_k_bytes : 0;    // 0: k blocks packed one fork ahead of their use
            lim.shared_a_bytes = whole_k ? lim.shared_a_bytes : 1;  // 1: A shared one k block at a time
            g::run_blocked(kern, p, threads, lim);
            Tensor c3 = cpu_backend().from_host(cv.data(), Shape{1, m, n}, DType::F32);
            expect_gemm(ct.reshape({1, m, n}), at.reshape({1, m, k}), bt.reshape({1, k, n}), 0.75f, -1.5f, c3,
                        std::string(kern.name) + (order == g::Resident::APanel ? " A-resident " : " B-resident ") +
                            std::string(dtype_name(out)) + " threads=" + std::to_string(threads) +
                            (one_block ? " one row block k=" + std::to_string(k)
                             : whole_k ? " whole-k"
                                       : " pipelined"));
          }
}

// One row times a half-precision B stored transposed (x @ W^T, a linear
// layer's weight kept in f16 / bf16): dot products along W's rows, widened in
// registers, against the same product in f32 of the same rounded values;
// rows that are not a multiple of the 4-row block or of the vector width.
TEST(Gemm, HalfPrecisionMatrixVectorAgainstF32) {
  for (DType dt : {DType::F16, DType::BF16})
    for (auto [k, n] :
         std::vector<std::array<std::int64_t, 2>>{{700, 301}, {40, 5003}, {576, 1537}, {7, 3}, {33, 64}}) {
      const unsigned s = static_cast<unsigned>(k * 7 + n);
      Tensor x = randn_like_host(Shape{1, k}, s, dt), w = randn_like_host(Shape{n, k}, s + 1, dt);
      const std::vector<float> got = ops::gemm(x, w, 1.0f, 0.0f, std::nullopt, false, true).to_vector();
      const std::vector<float> want =
          ops::gemm(x.cast(DType::F32), w.cast(DType::F32), 1.0f, 0.0f, std::nullopt, false, true).to_vector();
      ASSERT_EQ(got.size(), static_cast<std::size_t>(n));
      // The result is rounded to dt: half an ulp of dt relative, plus f32 summation order.
      const float rel = dt == DType::F16 ? 1.0f / 1024 : 1.0f / 128;
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], rel * std::abs(want[i]) + 1e-4f * std::sqrt(float(k)))
            << dtype_name(dt) << " k=" << k << " n=" << n << " i=" << i;
    }
}
