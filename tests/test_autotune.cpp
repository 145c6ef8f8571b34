// Auto-tuning: measured choices persist in the cache file; corrupt, stale and
// unwritable caches warn and fall back to measuring, never crash or mislead.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "torsh/runtime/autotune.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;

namespace {
class Autotune : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "torsh_autotune_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() +
            ".json";
    std::filesystem::remove(path_);
    autotune::set_enabled(true);
    autotune::set_cache_path(path_);
  }
  void TearDown() override {
    autotune::set_enabled(false);
    std::filesystem::remove(path_);
  }
  void write(const std::string& text) {
    std::ofstream(path_) << text;
    autotune::reload();
  }
  // "slow" sleeps, "fast" does not; counts how often each ran.
  std::vector<autotune::Candidate> candidates() {
    return {{"slow",
             [this] {
               ++slow_runs_;
               std::this_thread::sleep_for(std::chrono::milliseconds(2));
             }},
            {"fast", [this] { ++fast_runs_; }}};
  }
  bool warned(const std::string& word) const {
    for (const auto& w : autotune::warnings())
      if (w.find(word) != std::string::npos && w.find(path_) != std::string::npos) return true;
    return false;
  }
  std::string path_;
  int slow_runs_ = 0, fast_runs_ = 0;
  const autotune::Key key_{"test-device", "test_op", "n=2^4", DType::F32};
};
}  // namespace

TEST_F(Autotune, PicksTheFastestAndPersistsIt) {
  EXPECT_EQ(autotune::choose(key_, candidates(), 3), "fast");
  EXPECT_GT(slow_runs_, 0);
  const auto j = nlohmann::json::parse(std::ifstream(path_));
  EXPECT_EQ(j["library"], autotune::library_version());
  EXPECT_EQ(j["entries"][key_.str()]["choice"], "fast");
  EXPECT_TRUE(j["entries"][key_.str()]["ms"].contains("slow"));

  // A later process (simulated by reloading the file) does not measure again.
  autotune::reload();
  slow_runs_ = fast_runs_ = 0;
  const auto hits = autotune::stats().cache_hits;
  EXPECT_EQ(autotune::lookup(key_), "fast");
  EXPECT_EQ(autotune::choose(key_, candidates()), "fast");
  EXPECT_EQ(slow_runs_ + fast_runs_, 0);
  EXPECT_EQ(autotune::stats().cache_hits, hits + 1);
}

TEST_F(Autotune, DisabledTakesTheFirstCandidateWithoutMeasuring) {
  autotune::set_enabled(false);
  EXPECT_EQ(autotune::choose(key_, candidates()), "slow");
  EXPECT_EQ(slow_runs_ + fast_runs_, 0);
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(Autotune, CorruptCacheWarnsAndMeasures) {
  write("{\"library\": \"torsh\", \"entries\": {");
  EXPECT_TRUE(warned("corrupt"));
  EXPECT_EQ(autotune::choose(key_, candidates(), 3), "fast");
  EXPECT_GT(fast_runs_, 0);
  EXPECT_TRUE(nlohmann::json::accept(std::ifstream(path_)));  // rewritten whole
}

TEST_F(Autotune, StaleCacheFromAnotherVersionIsIgnored) {
  nlohmann::json j = {{"format", 1}, {"library", "torsh-0.0.0/old"}, {"entries", {{key_.str(), {{"choice", "slow"}}}}}};
  write(j.dump());
  EXPECT_TRUE(warned("stale"));
  EXPECT_EQ(autotune::lookup(key_), std::nullopt);
  EXPECT_EQ(autotune::choose(key_, candidates(), 3), "fast");
}

TEST_F(Autotune, UnexpectedLayoutIsIgnored) {
  write(nlohmann::json({{"library", autotune::library_version()}, {"entries", 5}}).dump());
  EXPECT_TRUE(warned("unexpected layout"));
  EXPECT_EQ(autotune::choose(key_, candidates(), 3), "fast");
}

TEST_F(Autotune, ChoiceNoLongerOfferedIsMeasuredAgain) {
  write(nlohmann::json(
            {{"library", autotune::library_version()}, {"entries", {{key_.str(), {{"choice", "removed-variant"}}}}}})
            .dump());
  EXPECT_EQ(autotune::choose(key_, candidates(), 3), "fast");
  EXPECT_GT(fast_runs_, 0);
}

TEST_F(Autotune, UnwritableCacheWarnsAndKeepsTheChoiceInMemory) {
  const std::string blocker = path_ + ".file";
  std::ofstream(blocker) << "a file where a directory should be";
  path_ = blocker + "/cache.json";
  autotune::set_cache_path(path_);
  EXPECT_EQ(autotune::choose(key_, candidates(), 3), "fast");
  EXPECT_TRUE(warned("cannot write"));
  EXPECT_EQ(autotune::lookup(key_), "fast");
  std::filesystem::remove(blocker);
}

TEST_F(Autotune, CpuElementwiseThreadCountIsTunedPerSizeClass) {
  Backend cpu = Backend::builder().backend_type(BackendType::Cpu).num_threads(2).build();
  for (std::int64_t n : {std::int64_t{1} << 11, std::int64_t{1} << 19}) {
    std::vector<float> a(static_cast<std::size_t>(n)), b(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(i % 13), b[i] = 0.5f * float(i % 7);
    Tensor x = cpu.from_host(a.data(), {n}, DType::F32), y = cpu.from_host(b.data(), {n}, DType::F32);
    const auto got = ops::add(x, y).to_vector();
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(got[i], a[i] + b[i]);
  }
  const auto j = nlohmann::json::parse(std::ifstream(path_));
  int tuned = 0;
  for (const auto& [k, v] : j["entries"].items())
    if (k.find("elementwise_threads") != std::string::npos) {
      ++tuned;
      // The device names the CPU generation and the ISA the kernels were held
      // to, so a cache shared across machines never hands one CPU's choice to another.
      const std::string device = k.substr(0, k.find('|'));
      EXPECT_TRUE(device.ends_with(" avx512 x2") || device.ends_with(" avx2 x2") || device.ends_with(" generic x2"))
          << device;
#if defined(__x86_64__) && defined(__linux__)
      EXPECT_NE(device.find(" family "), std::string::npos) << device;
#endif
      const std::string c = v["choice"];
      EXPECT_TRUE(c == "threads=1" || c == "threads=2") << c;
    }
  EXPECT_EQ(tuned, 2);
}

// SpMV's prefetch distance is measured once per machine and thread count,
// recorded under the CPU's key, and the product stays exact whatever it picks.
TEST_F(Autotune, CpuSpmvPrefetchDistanceIsMeasured) {
  Backend cpu = Backend::builder().backend_type(BackendType::Cpu).num_threads(2).build();
  // 300 x 200, row r holds columns c with (r * 7 + c) % 5 == 0; integer values, so sums are exact.
  const std::int64_t rows = 300, cols = 200;
  std::vector<float> dense(static_cast<std::size_t>(rows * cols), 0.f), xv(static_cast<std::size_t>(cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      if ((r * 7 + c) % 5 == 0) dense[static_cast<std::size_t>(r * cols + c)] = float((r + c) % 9) - 4.f;
  for (std::int64_t c = 0; c < cols; ++c) xv[static_cast<std::size_t>(c)] = float(c % 11) - 5.f;
  const auto a = CsrMatrix::from_dense(cpu.from_host(dense.data(), {rows, cols}, DType::F32));
  const auto got = ops::spmm(a, cpu.from_host(xv.data(), {cols}, DType::F32)).to_vector();
  for (std::int64_t r = 0; r < rows; ++r) {
    float want = 0;
    for (std::int64_t c = 0; c < cols; ++c)
      want += dense[static_cast<std::size_t>(r * cols + c)] * xv[static_cast<std::size_t>(c)];
    ASSERT_EQ(got[static_cast<std::size_t>(r)], want) << "row " << r;
  }
  const auto j = nlohmann::json::parse(std::ifstream(path_));
  int tuned = 0;
  for (const auto& [k, v] : j["entries"].items())
    if (k.find("spmv_prefetch_ahead") != std::string::npos) {
      ++tuned;
      EXPECT_TRUE(k.substr(0, k.find('|')).ends_with(" x2")) << k;
      const std::string c = v["choice"];
      EXPECT_TRUE(c == "ahead=384" || c == "ahead=0" || c == "ahead=128" || c == "ahead=256" || c == "ahead=768" ||
                  c == "ahead=1536")
          << c;
      EXPECT_EQ(v["ms"].size(), 6u) << "every distance timed";
    }
  EXPECT_EQ(tuned, 1);
}

namespace {
// Sets (or, with nullptr, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};
}  // namespace

// With HOME empty (or relative) and no XDG_CACHE_HOME, the cache must not land
// in whatever folder the process runs in.
TEST(AutotuneCachePath, NeverTheCurrentDirectory) {
  ScopedEnv cache("TORSH_AUTOTUNE_CACHE", nullptr);
  for (const char* xdg : {static_cast<const char*>(nullptr), "", "relative/cache"}) {
    for (const char* home : {static_cast<const char*>(nullptr), "", "."}) {
      ScopedEnv x("XDG_CACHE_HOME", xdg);
      ScopedEnv h("HOME", home);
      autotune::set_cache_path("");  // back to the default, from the environment now
      const std::string p = autotune::cache_path();
      const std::string where =
          std::string("XDG_CACHE_HOME=") + (xdg ? xdg : "<unset>") + " HOME=" + (home ? home : "<unset>");
      EXPECT_EQ(p, autotune::default_cache_path()) << where;
      EXPECT_EQ(p.front(), '/') << where << ": " << p;
      EXPECT_NE(std::filesystem::path(p).parent_path(), std::filesystem::current_path()) << where << ": " << p;
    }
  }
  {
    ScopedEnv x("XDG_CACHE_HOME", "/xdg/cache");
    EXPECT_EQ(autotune::default_cache_path(), "/xdg/cache/torsh/autotune.json");
  }
  {
    ScopedEnv x("XDG_CACHE_HOME", nullptr);
    ScopedEnv h("HOME", "/home/someone");
    EXPECT_EQ(autotune::default_cache_path(), "/home/someone/.cache/torsh/autotune.json");
  }
  {
    ScopedEnv c("TORSH_AUTOTUNE_CACHE", "/explicit/tune.json");
    EXPECT_EQ(autotune::default_cache_path(), "/explicit/tune.json");
  }
}
