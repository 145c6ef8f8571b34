// Plugin loading: every way a plugin can fail is reported with its reason and
// never takes the host down.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "runtime/registry_internal.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;

namespace {
std::string fixture(const std::string& name) {
  return std::string(TORSH_TEST_BIN_DIR) + "/fixtures/" + name + "/libtorsh_backend_metal.so";
}

std::string load_error(const std::string& name) {
  auto r = rt::load_plugin(fixture(name), BackendType::Metal);
  EXPECT_EQ(r.driver, nullptr);
  return r.error;
}

BackendStatus metal_status_with_path(const std::string& dir) {
  setenv("TORSH_BACKEND_PATH", dir.c_str(), 1);
  rt::Registry::get().rescan();
  for (const auto& s : backend_statuses())
    if (s.type == BackendType::Metal) return s;
  return {};
}
}  // namespace

TEST(Plugins, MissingFileIsReportedWithTheSearchPath) {
  auto r = rt::load_plugin("/nonexistent/libtorsh_backend_metal.so", BackendType::Metal);
  EXPECT_EQ(r.driver, nullptr);
  EXPECT_NE(r.error.find("cannot load"), std::string::npos);
  auto st = metal_status_with_path("/nonexistent-dir");
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("not found"), std::string::npos);
  EXPECT_NE(st.reason.find("/nonexistent-dir"), std::string::npos);
}

TEST(Plugins, NotASharedLibrary) { EXPECT_NE(load_error("not_elf").find("cannot load"), std::string::npos); }

TEST(Plugins, MissingEntrySymbol) {
  EXPECT_NE(load_error("no_entry").find("torsh_backend_plugin_entry"), std::string::npos);
}

TEST(Plugins, AbiVersionMismatch) {
  const auto e = load_error("bad_abi");
  EXPECT_NE(e.find("ABI version"), std::string::npos) << e;
  EXPECT_NE(e.find("rebuild"), std::string::npos);
}

TEST(Plugins, BuildIdMismatch) { EXPECT_NE(load_error("wrong_build").find("torsh-9.9.9"), std::string::npos); }

TEST(Plugins, DriverReportsNoDevice) {
  EXPECT_NE(load_error("no_device").find("no fixture device"), std::string::npos);
}

TEST(Plugins, DriverThrows) { EXPECT_NE(load_error("throws").find("fixture driver exploded"), std::string::npos); }

TEST(Plugins, WrongBackendKey) {
  auto r = rt::load_plugin(fixture("no_device"), BackendType::WebGpu);
  EXPECT_NE(r.error.find("expected 'webgpu'"), std::string::npos);
}

TEST(Plugins, RegistryReportsReasonAndKeepsWorking) {
  auto st = metal_status_with_path(std::string(TORSH_TEST_BIN_DIR) + "/fixtures/bad_abi");
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("ABI version"), std::string::npos);
  EXPECT_NE(st.source.find("bad_abi"), std::string::npos);
  try {
    Backend::create(BackendType::Metal);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BackendUnavailable);
    EXPECT_NE(std::string(e.what()).find("ABI version"), std::string::npos);
  }
  // The CPU backend is unaffected.
  Backend cpu = Backend::create(BackendType::Cpu);
  EXPECT_EQ(ops::add(cpu.zeros(Shape{2}, DType::F32), cpu.zeros(Shape{2}, DType::F32)).numel(), 2);
  unsetenv("TORSH_BACKEND_PATH");
  rt::Registry::get().rescan();
}
