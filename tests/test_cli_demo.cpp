// `torsh demo --size`: a value that is not a positive integer, or whose
// matrices and f64 reference would not fit in memory, is refused with a clear
// message and exit status 2 before anything is allocated.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

struct DemoRun {
  int status = -1;
  std::string output;
};

DemoRun run_demo(const std::string& args) {
#ifdef TORSH_TEST_CLI
  const std::string cmd = std::string(TORSH_TEST_CLI) + " demo " + args + " 2>&1";
  DemoRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
  const int w = pclose(p);
  r.status = WIFEXITED(w) ? WEXITSTATUS(w) : 128 + WTERMSIG(w);
  return r;
#else
  return {};
#endif
}

std::uint64_t mem_available() {
  std::ifstream f("/proc/meminfo");
  for (std::string key; f >> key;) {
    std::uint64_t kib = 0;
    f >> kib;
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

}  // namespace

class CliDemo : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef TORSH_TEST_CLI
    GTEST_SKIP() << "the torsh tool is not built (TORSH_BUILD_TOOLS=OFF)";
#endif
  }
};

TEST_F(CliDemo, SizeThatIsNotAPositiveIntegerIsRefused) {
  for (const char* bad : {"abc", "0", "-3", "12abc", "", "1e3"}) {
    const DemoRun r = run_demo(std::string("--backend cpu --size '") + bad + "'");
    EXPECT_EQ(r.status, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("is not a positive integer"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("stoi"), std::string::npos) << r.output;
  }
}

TEST_F(CliDemo, SizeThatDoesNotFitInMemoryIsRefused) {
  for (const char* big : {"100000", "99999999999999999999999"}) {
    const DemoRun r = run_demo(std::string("--backend cpu --size ") + big);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("of memory"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("is available: use --size "), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("bad_alloc"), std::string::npos) << r.output;
  }
  // 30000 needs about 47 GiB; on a machine with that much free it would run (for hours), so it is only checked below.
  if (mem_available() < (std::uint64_t{48} << 30)) {
    const DemoRun r = run_demo("--backend cpu --size 30000");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("--size 30000 needs about"), std::string::npos) << r.output;
  }
}

TEST_F(CliDemo, SmallSizeRuns) {
  const DemoRun r = run_demo("--backend cpu --size 16");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("OK"), std::string::npos) << r.output;
}
