// Plugin loading: every way a plugin can fail is reported with its reason and
// never takes the host down.
#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/registry_internal.hpp"
#include "torsh/cuda_plugin_config.h"
#include "torsh/opencl_plugin_config.h"
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

namespace {
// A copy of a fixture plugin with its ELF header rewritten: `cls` at
// e_ident[EI_CLASS] and `machine` in e_machine (little-endian, as on the hosts
// we build for).
std::string patched_fixture(const std::string& name, unsigned char cls, unsigned machine) {
  std::ifstream in(fixture("no_device"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GT(bytes.size(), 20u);
  bytes[4] = static_cast<char>(cls);
  bytes[18] = static_cast<char>(machine & 0xff);
  bytes[19] = static_cast<char>(machine >> 8);
  const std::string dir = ::testing::TempDir() + "torsh_elf_" + name + "_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/libtorsh_backend_metal.so";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}
}  // namespace

TEST(Plugins, ForeignArchitectureIsNamedNotNoSuchFile) {
  std::ifstream self(fixture("no_device"), std::ios::binary);
  unsigned char h[20] = {};
  self.read(reinterpret_cast<char*>(h), sizeof h);
  const unsigned native = h[18] | h[19] << 8;
  const unsigned foreign = native == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
  const auto r = rt::load_plugin(patched_fixture("machine", h[4], foreign), BackendType::Metal);
  EXPECT_EQ(r.driver, nullptr);
  EXPECT_NE(r.error.find("wrong architecture"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(foreign == EM_AARCH64 ? "AArch64" : "x86-64"), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find("No such file"), std::string::npos) << r.error;

  const auto c = rt::load_plugin(patched_fixture("class", ELFCLASS32, native), BackendType::Metal);
  EXPECT_NE(c.error.find("wrong architecture"), std::string::npos) << c.error;
  EXPECT_NE(c.error.find("32-bit"), std::string::npos) << c.error;
}

TEST(Plugins, NotAnElfFileSaysSo) {
  const auto e = load_error("not_elf");
  EXPECT_NE(e.find("no ELF header"), std::string::npos) << e;
}

TEST(Plugins, MissingPluginSaysNotBuiltOrNotShipped) {
  // This libtorsh's build decided each plugin; a missing file is one or the other, with what to do.
  const std::string cuda = rt::missing_plugin_reason(BackendType::Cuda, "libtorsh_backend_cuda.so", "/somewhere");
  const std::string opencl = rt::missing_plugin_reason(BackendType::OpenCl, "libtorsh_backend_opencl.so", "/somewhere");
  for (const auto& [reason, built, option] : {std::tuple{cuda, TORSH_CUDA_PLUGIN_BUILT != 0, "TORSH_CUDA"},
                                              std::tuple{opencl, TORSH_OPENCL_PLUGIN_BUILT != 0, "TORSH_OPENCL"}}) {
    EXPECT_NE(reason.find("/somewhere"), std::string::npos) << reason;
    if (built) {
      EXPECT_NE(reason.find("not shipped"), std::string::npos) << reason;
      EXPECT_NE(reason.find("TORSH_BACKEND_PATH"), std::string::npos) << reason;
    } else {
      EXPECT_NE(reason.find("not built"), std::string::npos) << reason;
      EXPECT_NE(reason.find(std::string("-D") + option + "=ON"), std::string::npos) << reason;
    }
  }
}

TEST(Plugins, UnterminatedErrorBufferIsCutAndMadeText) {
  // The fixture fills all 1024 bytes with no terminator, invalid UTF-8 and an escape sequence.
  const auto e = load_error("bad_error");
  EXPECT_EQ(e.rfind("bad fixture error", 0), 0u) << e;
  EXPECT_EQ(rt::valid_utf8(e), e);
  EXPECT_EQ(e.find('\x1b'), std::string::npos);
  EXPECT_EQ(e.find('\xff'), std::string::npos);
  EXPECT_NE(e.find("\xEF\xBF\xBD"), std::string::npos);  // U+FFFD where the bad bytes were
  EXPECT_LE(e.size(), 3u * 1023u);                       // at most the buffer, each byte replaced by 3 at worst
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
  EXPECT_EQ(rt::valid_utf8("a\xFF"
                           "b"),
            "a" + r + "b");
  EXPECT_EQ(rt::valid_utf8("\xC0\xAF"), r + r);                  // overlong '/'
  EXPECT_EQ(rt::valid_utf8("\xED\xA0\x80"), r + r + r);          // a UTF-16 surrogate
  EXPECT_EQ(rt::valid_utf8("\xF4\x90\x80\x80"), r + r + r + r);  // above U+10FFFF
  EXPECT_EQ(rt::valid_utf8("cut \xE2\x82"), "cut " + r + r);
  EXPECT_EQ(rt::valid_utf8("\x1b[31mred"), r + "[31mred");
  EXPECT_EQ(rt::valid_utf8(std::string_view("nul\0byte", 8)), "nul" + r + "byte");
}

namespace {
// Whether a file whose path contains `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(name) != std::string::npos) return true;
  return false;
}

// Everything `torsh info` shows of the statuses but free memory, which moves.
std::string status_text(const std::vector<BackendStatus>& statuses) {
  std::ostringstream os;
  for (const auto& s : statuses) {
    os << backend_key(s.type) << " available=" << s.available << " source=" << s.source << " version=" << s.version
       << " reason=" << s.reason << "\n";
    for (const auto& d : s.devices) os << "  [" << d.index << "] " << d.name << " " << d.total_memory << "\n";
  }
  return os.str();
}

std::string lazy_statuses_file(pid_t test_process) {
  return ::testing::TempDir() + "torsh_lazy_statuses_" + std::to_string(test_process);
}

// Runs in a fresh process: asks for the CPU, then OpenCL, then for everything.
[[noreturn]] void cpu_then_statuses() {
  Backend cpu = Backend::create(BackendType::Cpu);
  if (ops::add(cpu.zeros(Shape{2}, DType::F32), cpu.zeros(Shape{2}, DType::F32)).numel() != 2) std::_Exit(3);
  if (mapped("libtorsh_backend_")) {
    std::fprintf(stderr, "creating the CPU backend mapped a plugin\n");
    std::_Exit(1);
  }
  auto& reg = rt::Registry::get();
  if (reg.probed(BackendType::OpenCl) || reg.probed(BackendType::Cuda)) {
    std::fprintf(stderr, "creating the CPU backend looked for other plugins\n");
    std::_Exit(1);
  }
  // Naming one other backend looks for that one's plugin alone.
  try {
    Backend::create(BackendType::OpenCl);
  } catch (const Error&) {
  }
  if (!reg.probed(BackendType::OpenCl) || reg.probed(BackendType::Cuda) || reg.probed(BackendType::WebGpu)) {
    std::fprintf(stderr, "creating the OpenCL backend did not look for its plugin alone\n");
    std::_Exit(1);
  }
  // Statuses need every plugin; written for the test process to compare with its own.
  std::ofstream(lazy_statuses_file(::getppid())) << status_text(backend_statuses());
  std::_Exit(0);
}
}  // namespace

TEST(Plugins, NamingABackendLoadsOnlyItsPlugin) {
  // Re-executed rather than forked: the child must start with no plugin
  // loaded, and this binary's other tests load them all.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(cpu_then_statuses(), ::testing::ExitedWithCode(0), "");
  const std::string file = lazy_statuses_file(::getpid());
  std::ifstream in(file);
  const std::string lazy((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(file.c_str());
  // Loaded one at a time, the statuses read as when all load together.
  EXPECT_EQ(lazy, status_text(backend_statuses()));
  EXPECT_NE(lazy.find("opencl available="), std::string::npos) << lazy;
}
