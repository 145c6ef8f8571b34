// How the backends read their environment, checked on `torsh info --json` run
// with the environment changed (the OpenCL ICD loader and PoCL read it once
// per process): every way an environment hides a backend is reported with the
// variable or file responsible, never as a plain "no device".
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "subprocess.hpp"

using torsh::test::run;

namespace {

struct Status {
  bool found = false;
  bool available = false;
  std::string reason;
};

// The OpenCL entry of `torsh info --json` run under `env` (an `env` argument list).
Status opencl_status(const std::string& env) {
  const auto r = run("env " + env + " '" + torsh::test::torsh_cli() + "' info --json");
  Status s;
  EXPECT_EQ(r.status, 0) << r.out;
  nlohmann::json j;
  try {
    // PoCL may print its own diagnostics before the JSON line.
    j = nlohmann::json::parse(r.out.substr(r.out.find("{\"version\"")));
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << ": " << r.out;
    return s;
  }
  for (const auto& b : j["backends"])
    if (b["type"] == "opencl") {
      s.found = true;
      s.available = b["available"].get<bool>();
      s.reason = b["reason"].get<std::string>();
    }
  return s;
}

// Skips unless the CLI is built and OpenCL works in the unchanged environment.
#define REQUIRE_OPENCL()                                                              \
  if (torsh::test::torsh_cli().empty()) GTEST_SKIP() << "the torsh CLI is not built"; \
  if (const Status base = opencl_status(""); !base.available) GTEST_SKIP() << "no OpenCL here: " << base.reason

std::string temp_dir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "torsh_env_" + name + "_" + std::to_string(::getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace

// /dev/null is not a folder, so $HOME/.cache cannot be created there by anyone, root included.
TEST(Environment, UnwritableHomeDoesNotHideOpenClBehindPoclsCache) {
  REQUIRE_OPENCL();
  const std::string tmp = temp_dir("tmp");
  const Status s = opencl_status("-u XDG_CACHE_HOME -u POCL_CACHE_DIR HOME=/dev/null TMPDIR=" + tmp);
  EXPECT_TRUE(s.available) << s.reason;
  EXPECT_NE(s.reason.find("POCL_CACHE_DIR=" + tmp), std::string::npos) << s.reason;
  EXPECT_NE(s.reason.find("/dev/null/.cache/pocl/kcache"), std::string::npos) << s.reason;
  std::filesystem::remove_all(tmp);
}

TEST(Environment, UnusablePoclCacheDirIsNamed) {
  REQUIRE_OPENCL();
  const Status s = opencl_status("HOME=/dev/null POCL_CACHE_DIR=/dev/null/kcache");
  EXPECT_FALSE(s.available);
  EXPECT_NE(s.reason.find("POCL_CACHE_DIR=/dev/null/kcache"), std::string::npos) << s.reason;
  EXPECT_NE(s.reason.find("writable"), std::string::npos) << s.reason;
}

TEST(Environment, WrongOclIcdVendorsIsNamed) {
  REQUIRE_OPENCL();
  const std::string empty = temp_dir("vendors");
  for (const std::string& v : {empty, std::string("/no/such/vendors")}) {
    const Status s = opencl_status("OCL_ICD_VENDORS=" + v);
    EXPECT_FALSE(s.available);
    EXPECT_NE(s.reason.find("OCL_ICD_VENDORS=" + v), std::string::npos) << s.reason;
    EXPECT_NE(s.reason.find("unset OCL_ICD_VENDORS"), std::string::npos) << s.reason;
  }
  std::filesystem::remove_all(empty);
}

TEST(Environment, GarbagePluginSkippedOnTheWayIsReported) {
  REQUIRE_OPENCL();
  const std::string dir = temp_dir("garbage");
  std::ofstream(dir + "/libtorsh_backend_opencl.so") << "not a plugin\n";
  const Status s = opencl_status("TORSH_BACKEND_PATH=" + dir);
  EXPECT_TRUE(s.available) << "the real plugin next to libtorsh still loads: " << s.reason;
  EXPECT_NE(s.reason.find("skipped"), std::string::npos) << s.reason;
  EXPECT_NE(s.reason.find(dir + "/libtorsh_backend_opencl.so"), std::string::npos) << s.reason;
  EXPECT_NE(s.reason.find("no ELF header"), std::string::npos) << s.reason;
  const auto text = run("env TORSH_BACKEND_PATH=" + dir + " '" + torsh::test::torsh_cli() + "' info");
  EXPECT_NE(text.out.find("Note: skipped"), std::string::npos) << text.out;
  std::filesystem::remove_all(dir);
}
