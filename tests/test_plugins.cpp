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

TEST(Plugins, UnterminatedErrorBufferIsCutAndMadeText) {
  // The fixture fills all 1024 bytes with no terminator, invalid UTF-8 and an escape sequence.
  const auto e = load_error("bad_error");
  EXPECT_EQ(e.rfind("bad fixture error", 0), 0u) << e;
  EXPECT_EQ(rt::valid_utf8(e), e);
  EXPECT_EQ(e.find('\x1b'), std::string::npos);
  EXPECT_EQ(e.find('\xff'), std::string::npos);
  EXPECT_NE(e.find("\xEF\xBF\xBD"), std::string::npos);  // U+FFFD where the bad bytes were
  EXPECT_LE(e.size(), 3u * 1023u);  // at most the buffer, each byte replaced by 3 at worst
  auto st = metal_status_with_path(std::string(TORSH_TEST_BIN_DIR) + "/fixtures/bad_error");
  EXPECT_EQ(rt::valid_utf8(st.reason), st.reason);
  EXPECT_NE(st.reason.find("bad fixture error"), std::string::npos);
  EXPECT_EQ(rt::valid_utf8(backend_summary()), backend_summary());
  unsetenv("TORSH_BACKEND_PATH");
  rt::Registry::get().rescan();
}

TEST(Plugins, TextFromOutsideBecomesValidUtf8) {
  EXPECT_EQ(rt::valid_utf8("plain, caf\xC3\xA9, \xE2\x82\xAC, \xF0\x9F\x98\x80\n\ttab"),
            "plain, caf\xC3\xA9, \xE2\x82\xAC, \xF0\x9F\x98\x80\n\ttab");
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(rt::valid_utf8("a\xFF" "b"), "a" + r + "b");
  EXPECT_EQ(rt::valid_utf8("\xC0\xAF"), r + r);          // overlong '/'
  EXPECT_EQ(rt::valid_utf8("\xED\xA0\x80"), r + r + r);  // a UTF-16 surrogate
  EXPECT_EQ(rt::valid_utf8("\xF4\x90\x80\x80"), r + r + r + r);  // above U+10FFFF
  EXPECT_EQ(rt::valid_utf8("cut \xE2\x82"), "cut " + r + r);
  EXPECT_EQ(rt::valid_utf8("\x1b[31mred"), r + "[31mred");
  EXPECT_EQ(rt::valid_utf8(std::string_view("nul\0byte", 8)), "nul" + r + "byte");
}
