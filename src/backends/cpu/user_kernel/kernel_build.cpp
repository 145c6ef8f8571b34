// Building a Torsh-dialect kernel: the translation unit (target macro, the
// dialect header, the user's source under #line, the entry trampoline) goes
// to a private temporary folder and the host compiler makes a shared object.
#include <stdlib.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "host_compiler.hpp"
#include "kernel_abi.hpp"
#include "torsh/core/error.hpp"
#include "user_kernel.hpp"

namespace torsh::cpu::uk {

namespace {

const char* const kDevice = "cpu:0";

// Fixed flags: -ffp-contract=off keeps a * b + c two roundings as on the
// other backends; hidden visibility lets the compiler inline the entry into
// the trampoline's loop (and exports only the trampoline).
std::vector<std::string> fixed_flags(const HostCompiler& c) {
  std::vector<std::string> f{"-std=c++17", "-O2",     "-march=native",       "-ffp-contract=off",
                             "-fPIC",      "-shared", "-fvisibility=hidden", "-pipe"};
  // GNU unique symbols would keep a shared object loaded after dlclose. The
  // loop over a group's items needs a runtime alias check to vectorize, which
  // GCC's -O2 cost model never makes.
  if (!c.clang) {
    f.push_back("-fno-gnu-unique");
    f.push_back("-fvect-cost-model=dynamic");
  }
  return f;
}

bool identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) return false;
  return true;
}

std::string label_of(const rt::UserKernelSpec& spec) {
  return spec.label.empty() ? "kernel '" + kernel_name(spec) + "'" : spec.label;
}

// mkdtemp's folder (0700), removed with its files.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/torsh-cpu-kernel-XXXXXX";
    if (!mkdtemp(tmpl.data()))
      throw Error(ErrorCode::DeviceError, "cannot create a temporary folder for the kernel build in " + tmpl,
                  {.op = "compile_kernel", .device = kDevice}, {"Set TMPDIR to a writable folder"});
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The source with comments, string and character literals blanked.
std::string code_only(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      const auto end = s.find("*/", i + 2);
      i = end == std::string::npos ? s.size() : end + 2;
      out += ' ';
    } else if (s[i] == '"' || s[i] == '\'') {
      const char q = s[i++];
      while (i < s.size() && s[i] != q && s[i] != '\n') i += s[i] == '\\' ? 2 : 1;
      ++i;
      out += ' ';
    } else {
      out += s[i++];
    }
  }
  return out;
}

bool names_barrier(const std::string& code) {
  static const std::string word = "BARRIER";
  for (auto p = code.find(word); p != std::string::npos; p = code.find(word, p + 1)) {
    const auto is_id = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
    const bool left = p == 0 || !is_id(code[p - 1]);
    const bool right = p + word.size() >= code.size() || !is_id(code[p + word.size()]);
    if (left && right) return true;
  }
  return false;
}

std::string cpu_flags_line() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0) return line;
  return {};
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

}  // namespace

std::string kernel_name(const rt::UserKernelSpec& spec) {
  return spec.src.name.empty() ? spec.src.entry : spec.src.name;
}

bool uses_barriers(const rt::UserKernelSpec& spec) {
  if (names_barrier(code_only(spec.src.source))) return true;
  for (const auto& [name, value] : spec.src.defines)
    if (names_barrier(value)) return true;
  return false;
}

std::string compiler_id() {
  std::string why;
  const auto c = find_host_compiler(&why);
  if (!c) return "none (" + why + ")";
  std::string id = c->path;
  for (const auto& a : c->leading) id += " " + a;
  id += " (" + compiler_version(*c) + ")";
  for (const auto& f : fixed_flags(*c)) id += " " + f;
  // What -march=native resolves to: the processor and every feature flag.
  static const std::string cpu = [] {
    const std::string flags = cpu_flags_line();
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char ch : flags) h = (h ^ ch) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return cpu_model() + " [cpu flags " + hex + "]";
  }();
  return id + " on " + cpu + " abi " + std::to_string(kAbiVersion);
}

rt::KernelBinary build_kernel(const rt::UserKernelSpec& spec) {
  const std::string name = kernel_name(spec);
  const ErrorContext ctx{.op = "compile_kernel", .device = kDevice};
  if (spec.src.dialect != KernelDialect::Torsh)
    throw Error(ErrorCode::Unsupported,
                "the CPU backend builds kernels of the torsh dialect only; " + label_of(spec) + " is " +
                    std::string(kernel_dialect_name(spec.src.dialect)),
                ctx, {"Write the kernel in the Torsh dialect (include/torsh/kernel_dialect.h) to run it on the CPU"});
  if (!identifier(spec.src.entry))
    throw Error(ErrorCode::InvalidArgument,
                "the entry '" + spec.src.entry + "' of " + label_of(spec) + " is not a C identifier", ctx);
  for (const auto& [def, value] : spec.src.defines)
    if (!identifier(def))
      throw Error(ErrorCode::InvalidArgument, "define '" + def + "' of " + label_of(spec) + " is not a C identifier",
                  ctx);
  std::string why;
  const auto cxx = find_host_compiler(&why);
  if (!cxx)
    throw Error(ErrorCode::Unsupported,
                "the CPU backend compiles user kernels with the system C++ compiler, and there is " + why + ", so " +
                    label_of(spec) + " cannot be built",
                ctx, {"Install g++ or clang++, or set TORSH_CXX to a C++17 compiler"});

  TempDir dir;
  const std::string src = dir.path() + "/kernel.cpp", out = dir.path() + "/kernel.so";
  {
    std::ofstream f(src, std::ios::binary);
    f << rt::kernel_translation_unit(spec, target_prefix()) << trampoline_source(spec.src.entry);
    if (!f.flush())
      throw Error(ErrorCode::DeviceError, "cannot write the kernel source to " + src, ctx,
                  {"Set TMPDIR to a writable folder with free space"});
  }
  std::vector<std::string> argv{cxx->path};
  argv.insert(argv.end(), cxx->leading.begin(), cxx->leading.end());
  for (auto& f : fixed_flags(*cxx)) argv.push_back(std::move(f));
  for (const auto& [def, value] : spec.src.defines) argv.push_back("-D" + def + (value.empty() ? "" : "=" + value));
  argv.insert(argv.end(), spec.src.options.begin(), spec.src.options.end());
  argv.insert(argv.end(), {"-o", out, src});

  ProcessResult r = run_process(argv);
  std::ifstream so(out, std::ios::binary);
  if (r.exit_status != 0 || !so) {
    std::string status = r.exit_status < 0 ? "did not run" : "exit status " + std::to_string(r.exit_status);
    throw Error(ErrorCode::KernelCompile,
                label_of(spec) + " (entry '" + spec.src.entry + "') failed to compile for " + kDevice + " with " +
                    cxx->path + " (" + compiler_version(*cxx) + ", " + status + "):\n" + r.output,
                ctx, {"Lines named after the kernel are lines of its source"});
  }
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(so)), std::istreambuf_iterator<char>());
  return rt::KernelBinary{seal(std::move(bytes)), std::move(r.output), true};
}

}  // namespace torsh::cpu::uk
