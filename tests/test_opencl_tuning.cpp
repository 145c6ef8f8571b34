// OpenCL auto-tuning: with auto-tuning on, the grid-stride kernels run with a
// measured work-group size per (device, kernel, size class) and matmul with a
// measured GEMM implementation per (device, dtype, size class); both still
// compute the right answer and leave their choice in the cache file.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "torsh/runtime/autotune.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;

namespace {
class OpenClTuning : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto av = Backend::available();
    if (std::find(av.begin(), av.end(), BackendType::OpenCl) == av.end()) {
      std::string why = "not a known backend";
      for (const auto& st : backend_statuses())
        if (st.type == BackendType::OpenCl) why = st.reason;
      GTEST_SKIP() << "OpenCL backend unavailable: " << why;
    }
    dev = Backend::create(BackendType::OpenCl);
    path_ = ::testing::TempDir() + "torsh_opencl_tuning_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json";
    std::filesystem::remove(path_);
    autotune::set_cache_path(path_);
    autotune::set_enabled(true);
  }
  void TearDown() override {
    autotune::set_enabled(false);
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  Backend dev;
  std::string path_;
};

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i % 1000);
  return v;
}
}  // namespace

TEST_F(OpenClTuning, TunedKernelsAreCorrectAndTheirChoicesPersist) {
  // Below the tuned range, inside it, and past its top class.
  for (std::size_t n : {1000u, 5000u, 70001u, (1u << 22) + 3u}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto av = ramp(n, 0.5f), bv = ramp(n, 2.0f);
    Tensor a = dev.from_host(av.data(), {static_cast<std::int64_t>(n)}, DType::F32);
    Tensor b = dev.from_host(bv.data(), {static_cast<std::int64_t>(n)}, DType::F32);
    // maximum takes the tuned grid-stride kernel on every device (+ - * / take one item
    // per element on CPU devices, with nothing to tune).
    const auto sum = ops::maximum(a, b).to_vector();
    ASSERT_EQ(sum.size(), n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(sum[i], std::max(av[i], bv[i])) << "element " << i;
    // The operands themselves are never used for measuring.
    ASSERT_EQ(a.to_vector(), av);
    ASSERT_EQ(b.to_vector(), bv);
    // The next launch of this size class uses the device's remembered choice without asking the tuner.
    const auto before = autotune::stats();
    ops::maximum(a, b);
    EXPECT_EQ(autotune::stats().measured, before.measured);
    EXPECT_EQ(autotune::stats().cache_hits, before.cache_hits);
  }
  // A broadcast (strided kernel) and a transpose (strided copy) in the tuned range.
  const auto mv = ramp(64 * 100, 1.0f), rv = ramp(100, 3.0f);
  Tensor m = dev.from_host(mv.data(), {64, 100}, DType::F32);
  Tensor r = dev.from_host(rv.data(), {100}, DType::F32);
  const auto bsum = ops::add(m, r).to_vector();
  for (std::size_t i = 0; i < bsum.size(); ++i) ASSERT_EQ(bsum[i], mv[i] + rv[i % 100]);
  const auto t = m.transpose(0, 1).contiguous().to_vector();
  for (std::size_t i = 0; i < 100; ++i)
    for (std::size_t j = 0; j < 64; ++j) ASSERT_EQ(t[i * 64 + j], mv[j * 100 + i]);

  // Keys are "opencl:<device>|work_group_1d:<kernel>|<size class>|f32". Dense maxima take the
  // contiguous kernel wherever the pool placed their operands, the broadcast the strided one, so
  // the size classes are checked over both binary kernels.
  const auto j = nlohmann::json::parse(std::ifstream(path_));
  const std::set<std::string> names{"local=32", "local=64", "local=128", "local=256", "driver"};
  std::set<std::string> kernels, binary_classes;
  for (const auto& [key, entry] : j.at("entries").items()) {
    const auto at = key.find("work_group_1d:");
    if (at == std::string::npos) continue;
    EXPECT_EQ(key.rfind("opencl:", 0), 0u) << key;
    EXPECT_TRUE(names.count(entry.at("choice").get<std::string>())) << key << " chose " << entry.at("choice");
    EXPECT_GE(entry.at("ms").size(), 2u) << key;  // every candidate was measured
    const auto bar = key.find('|', at);
    const std::string kernel = key.substr(at, bar - at);
    kernels.insert(kernel);
    if (kernel.rfind("work_group_1d:binary_f32_", 0) == 0)
      binary_classes.insert(key.substr(bar + 1, key.find('|', bar + 1) - bar - 1));
  }
  EXPECT_TRUE(kernels.count("work_group_1d:binary_f32_contig"));
  EXPECT_TRUE(kernels.count("work_group_1d:binary_f32_strided"));
  EXPECT_TRUE(kernels.count("work_group_1d:copy_b32_strided"));
  EXPECT_EQ(binary_classes, (std::set<std::string>{"n=2^12", "n=2^16", "n>=2^22"}));  // n = 1000 is not tuned
}

TEST_F(OpenClTuning, MatmulPicksAnImplementationPerSizeClassAndStaysCorrect) {
  Backend cpu = Backend::create(BackendType::Cpu);
  const std::set<std::string> names{"t16x16_r1x1",   "t32x32_r4x4", "t64x64_r4x4", "t64x64_r8x4", "t128x64_r8x4",
                                    "t128x128_r8x8", "t8x128_r1x8", "t128x8_r8x1", "clblast"};
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    // 96 x 72 @ 72 x 80 (tuned: 2^19 multiply-adds), then 100 x 70 @ 70 x 90 of the same size class.
    for (auto [m, k, n] : {std::array<std::int64_t, 3>{96, 72, 80}, std::array<std::int64_t, 3>{100, 70, 90}}) {
      const Tensor a = ops::randn(dev, Shape{m, k}, 1).cast(dt), b = ops::randn(dev, Shape{k, n}, 2).cast(dt);
      const auto before = autotune::stats();
      const Tensor c = ops::matmul(a, b);
      const auto after = autotune::stats();
      const auto got = c.cast(DType::F32).to_vector();
      const auto want = ops::matmul(a.to(cpu), b.to(cpu)).cast(DType::F32).to_vector();
      ASSERT_EQ(got.size(), want.size());
      const float tol = dt == DType::F32 ? 1e-4f : dt == DType::F16 ? 2e-2f : 1e-1f;
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], tol * std::max(1.0f, std::abs(want[i]))) << "element " << i;
      // The first shape measures its class once; the second finds it remembered.
      if (m == 96)
        EXPECT_EQ(after.measured, before.measured + 1);
      else
        EXPECT_EQ(after.measured, before.measured);
    }
  }
  // Keys are "opencl:<device>|matmul|m=2^6 n=2^6 k=2^6|<dtype>", each with every candidate measured.
  const auto j = nlohmann::json::parse(std::ifstream(path_));
  std::set<std::string> dtypes;
  for (const auto& [key, entry] : j.at("entries").items()) {
    if (key.find("|matmul|") == std::string::npos) continue;
    EXPECT_NE(key.find("|m=2^6 n=2^6 k=2^6|"), std::string::npos) << key;
    EXPECT_TRUE(names.count(entry.at("choice").get<std::string>())) << key << " chose " << entry.at("choice");
    EXPECT_GE(entry.at("ms").size(), 8u) << key;  // every variant (and CLBlast where built in) was measured
    dtypes.insert(key.substr(key.rfind('|') + 1));
  }
  EXPECT_EQ(dtypes, (std::set<std::string>{"f32", "f16", "bf16"}));
}

TEST_F(OpenClTuning, OffMeansTheBuiltInDefaultAndNoCacheEntries) {
  autotune::set_enabled(false);
  const auto av = ramp(70001, 1.0f);
  Tensor a = dev.from_host(av.data(), {70001}, DType::F32);
  const auto twice = ops::add(a, a).to_vector();
  for (std::size_t i = 0; i < av.size(); ++i) ASSERT_EQ(twice[i], 2 * av[i]);
  const Tensor x = ops::randn(dev, Shape{96, 72}, 1), y = ops::randn(dev, Shape{72, 80}, 2);
  EXPECT_EQ(ops::matmul(x, y).to_vector().size(), 96u * 80u);
  EXPECT_FALSE(std::filesystem::exists(path_));
}
