#include "user_kernel_compile.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "dl_symbol.hpp"
#include "torsh/backend/plugin.h"
#include "vendor.hpp"

#if defined(TORSH_HIP)
#include <hip/hiprtc.h>
#define TORSH_RTC(f) hiprtc##f
#define TORSH_RTC_GET_CODE_SIZE hiprtcGetCodeSize
#define TORSH_RTC_GET_CODE hiprtcGetCode
#else
#include <nvrtc.h>
#define TORSH_RTC(f) nvrtc##f
#define TORSH_RTC_GET_CODE_SIZE nvrtcGetPTXSize
#define TORSH_RTC_GET_CODE nvrtcGetPTX
#endif

namespace torsh::cuda {

namespace {

#if defined(TORSH_HIP)
constexpr const char* kRtcName = "hiprtc";
constexpr auto kRtcSuccess = HIPRTC_SUCCESS;
// ROCm 5 has hiprtc inside the HIP runtime the plugin already links; ROCm 6
// moved it to libhiprtc. The first library that has it is used.
std::vector<std::string> rtc_libraries() {
  return {"libamdhip64.so.5", "libamdhip64.so.6", "libamdhip64.so", "libhiprtc.so.6", "libhiprtc.so.5", "libhiprtc.so"};
}
constexpr const char* kRtcPackage = "ROCm's hiprtc (Debian: libamdhip64-5; ROCm 6: hip-runtime-amd)";
#else
constexpr const char* kRtcName = "NVRTC";
constexpr auto kRtcSuccess = NVRTC_SUCCESS;
// The NVRTC of the toolkit the plugin was built with (its PTX is what the
// plugin's driver requirement already covers), then the unversioned name.
// Toolkits outside the loader's path are found through CUDA_HOME / CUDA_PATH
// or at the default install location.
std::vector<std::string> rtc_libraries() {
  const std::string file = "libnvrtc.so." + std::to_string(CUDART_VERSION / 1000);
  std::vector<std::string> files{file};
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(var); root && *root) files.push_back(std::string(root) + "/lib64/" + file);
  files.push_back("/usr/local/cuda/lib64/" + file);
  files.emplace_back("libnvrtc.so");
  return files;
}
constexpr const char* kRtcPackage = "the CUDA toolkit's NVRTC (cuda-nvrtc-<version> or the nvidia-cuda-nvrtc wheel)";
#endif

#define TORSH_STR2(x) #x
#define TORSH_STR(x) TORSH_STR2(x)
#define TORSH_RTC_FN(f) decltype(&TORSH_RTC(f)) f = nullptr
struct Rtc {
  TORSH_RTC_FN(Version);
  TORSH_RTC_FN(GetErrorString);
  TORSH_RTC_FN(CreateProgram);
  TORSH_RTC_FN(DestroyProgram);
  TORSH_RTC_FN(AddNameExpression);
  TORSH_RTC_FN(CompileProgram);
  TORSH_RTC_FN(GetProgramLogSize);
  TORSH_RTC_FN(GetProgramLog);
  TORSH_RTC_FN(GetLoweredName);
#if !defined(TORSH_HIP)
  TORSH_RTC_FN(GetNumSupportedArchs);
  TORSH_RTC_FN(GetSupportedArchs);
#endif
  decltype(&TORSH_RTC_GET_CODE_SIZE) GetCodeSize = nullptr;
  decltype(&TORSH_RTC_GET_CODE) GetCode = nullptr;
  std::string library;  // the file it came from
  std::string missing;  // why it could not be loaded; empty when loaded
};

Rtc load_rtc() {
  Rtc r;
  std::string tried;
  for (const std::string& file : rtc_libraries()) {
    void* lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      tried += (tried.empty() ? "" : "; ") + (e ? std::string(e) : file);
      continue;
    }
#define TORSH_RTC_FIND(f) bind_symbol(lib, r.f, TORSH_STR(TORSH_RTC(f)))
    const bool ok = TORSH_RTC_FIND(GetErrorString) && TORSH_RTC_FIND(CreateProgram) && TORSH_RTC_FIND(DestroyProgram) &&
                    TORSH_RTC_FIND(AddNameExpression) && TORSH_RTC_FIND(CompileProgram) &&
                    TORSH_RTC_FIND(GetProgramLogSize) && TORSH_RTC_FIND(GetProgramLog) &&
                    TORSH_RTC_FIND(GetLoweredName) &&
                    bind_symbol(lib, r.GetCodeSize, TORSH_STR(TORSH_RTC_GET_CODE_SIZE)) &&
                    bind_symbol(lib, r.GetCode, TORSH_STR(TORSH_RTC_GET_CODE));
    (void)TORSH_RTC_FIND(Version);  // optional: only names the compiler
#if !defined(TORSH_HIP)
    (void)(TORSH_RTC_FIND(GetNumSupportedArchs) && TORSH_RTC_FIND(GetSupportedArchs));  // optional (CUDA 11.2)
#endif
#undef TORSH_RTC_FIND
    if (ok) {
      r.library = file;
      return r;  // stays loaded for the life of the process, like the plugin
    }
    tried += std::string(tried.empty() ? "" : "; ") + file + " has no " + kRtcName + " API";
    dlclose(lib);
  }
  r.missing = tried;
  return r;
}

// Never destroyed: builds may run from other threads while the process exits.
const Rtc& rtc() {
  static const Rtc* r = new Rtc(load_rtc());
  return *r;
}

std::string rtc_error(const Rtc& r, int code) {
  const char* s = r.GetErrorString(static_cast<std::remove_const_t<decltype(kRtcSuccess)>>(code));
  return s ? s : std::to_string(code);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Destroys the program however the build ends.
struct ProgramGuard {
  const Rtc& r;
  TORSH_RTC(Program) p = nullptr;
  ~ProgramGuard() {
    if (p) (void)r.DestroyProgram(&p);
  }
};

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\0' || s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

#if defined(TORSH_HIP)
// The processors the code object manager (comgr, which hiprtc compiles
// through) knows, e.g. "gfx90a"; empty when it cannot be asked. hiprtc of ROCm
// 5.2 aborts the process (a double free in comgr) when asked for a processor
// outside this list, so the list is checked first.
std::vector<std::string> comgr_processors() {
  void* lib = dlopen("libamd_comgr.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libamd_comgr.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return {};
  using Count = int (*)(std::size_t*);
  using Name = int (*)(std::size_t, const char**);
  const auto count = reinterpret_cast<Count>(dlsym(lib, "amd_comgr_get_isa_count"));
  const auto name = reinterpret_cast<Name>(dlsym(lib, "amd_comgr_get_isa_name"));
  std::vector<std::string> out;
  std::size_t n = 0;
  if (count && name && count(&n) == 0) {
    for (std::size_t i = 0; i < n; ++i) {
      const char* isa = nullptr;  // "amdgcn-amd-amdhsa--gfx90a:xnack+"
      if (name(i, &isa) != 0 || !isa) continue;
      std::string p = isa;
      if (const auto dash = p.rfind("--"); dash != std::string::npos) p = p.substr(dash + 2);
      p = p.substr(0, p.find(':'));
      if (out.empty() || out.back() != p) out.push_back(p);
    }
  }
  return out;  // the library stays loaded: hiprtc uses it too
}

// Throws Unsupported for a processor comgr does not know (see comgr_processors).
void check_processor(const std::string& arch, const std::string& what, const ErrorContext& ctx) {
  static const std::vector<std::string>* known = new std::vector<std::string>(comgr_processors());
  if (known->empty()) return;
  const std::string processor = arch.substr(0, arch.find(':'));
  for (const std::string& k : *known)
    if (k == processor) return;
  std::string list;
  for (const std::string& k : *known) list += (list.empty() ? "" : " ") + k;
  throw Error(ErrorCode::Unsupported,
              "cannot build " + what + " for " + arch + ": this ROCm's code object manager has no " + processor +
                  " (it knows " + list + ")",
              ctx, {"Install a ROCm release that supports " + processor});
}
#else
// A GPU newer than NVRTC gets PTX for the newest architecture NVRTC knows,
// which the driver compiles for it (PTX is forward compatible).
std::string supported_arch(const Rtc& r, const std::string& arch) {
  if (!r.GetNumSupportedArchs || !r.GetSupportedArchs || !starts_with(arch, "compute_")) return arch;
  int n = 0;
  if (r.GetNumSupportedArchs(&n) != kRtcSuccess || n <= 0) return arch;
  std::vector<int> archs(static_cast<std::size_t>(n));
  if (r.GetSupportedArchs(archs.data()) != kRtcSuccess) return arch;
  const int want = std::atoi(arch.c_str() + 8);
  int best = 0;
  for (int a : archs) {
    if (a == want) return arch;
    if (a < want && a > best) best = a;
  }
  return best > 0 ? "compute_" + std::to_string(best) : arch;
}
#endif

}  // namespace

std::string rtc_version() {
  const Rtc& r = rtc();
  if (!r.missing.empty()) return std::string(kRtcName) + " unavailable";
#if defined(TORSH_HIP)
  // hiprtcVersion answers a fixed 9.0 (NVRTC's numbering) in ROCm 5; the HIP
  // runtime's version names the compiler that comes with it.
  int v = 0;
  if (hipRuntimeGetVersion(&v) != hipSuccess || v <= 0) v = HIP_VERSION;
  (void)hipGetLastError();
  return std::string(kRtcName) + " of HIP " + std::to_string(v / 10000000) + "." + std::to_string(v / 100000 % 100) +
         "." + std::to_string(v % 100000);
#else
  int major = 0, minor = 0;
  if (r.Version && r.Version(&major, &minor) == kRtcSuccess)
    return std::string(kRtcName) + " " + std::to_string(major) + "." + std::to_string(minor);
  return std::string(kRtcName) + " (" + r.library + ")";
#endif
}

CompiledKernel compile_cuda_source(const std::string& tu, const std::string& entry,
                                   const std::vector<std::pair<std::string, std::string>>& defines,
                                   const std::vector<std::string>& options, const std::string& arch,
                                   const std::string& what, const std::string& device) {
  const ErrorContext ctx{.op = "compile_kernel", .device = device};
  const Rtc& r = rtc();
  if (!r.missing.empty())
    throw Error(ErrorCode::Unsupported,
                std::string("cannot build ") + what + ": " + kRtcName + " could not be loaded (" + r.missing + ")", ctx,
                {std::string("Install ") + kRtcPackage + " or add its folder to LD_LIBRARY_PATH",
                 "Kernels already in the disk cache still load without it"});
  if (entry.empty()) throw Error(ErrorCode::InvalidArgument, "cannot build " + what + ": no entry named", ctx);

  // The architecture and language level unless the caller's options set them.
  bool has_arch = false, has_std = false;
  for (const std::string& o : options) {
    has_arch = has_arch || starts_with(o, "-arch") || starts_with(o, "--gpu-architecture") ||
               starts_with(o, "-gpu-architecture") || starts_with(o, "--offload-arch");
    has_std = has_std || starts_with(o, "-std") || starts_with(o, "--std");
  }
  std::vector<std::string> opts;
#if defined(TORSH_HIP)
  if (!has_arch) {
    check_processor(arch, what, ctx);
    opts.push_back("--gpu-architecture=" + arch);
  }
#else
  if (!has_arch) opts.push_back("-arch=" + supported_arch(r, arch));
  opts.emplace_back("-default-device");  // undecorated helpers are device code, as in the Torsh dialect
#endif
  if (!has_std) opts.emplace_back("--std=c++17");
  opts.insert(opts.end(), options.begin(), options.end());
#if defined(TORSH_HIP)
  // hiprtc of ROCm 5.2 aborts the process for a processor it lacks, whoever names it.
  for (const std::string& o : options)
    for (const char* key : {"--gpu-architecture=", "-gpu-architecture=", "--offload-arch="})
      if (starts_with(o, key)) check_processor(o.substr(std::strlen(key)), what, ctx);
#endif

  // Defines are #define lines in front of the source rather than -D options:
  // NVRTC and hiprtc put their own headers (HIP's whole runtime header for
  // hiprtc) in front of the source, and a -D macro named like one of their
  // identifiers (T, V, size_t) breaks them. The #line that follows keeps the
  // user's line numbers.
  std::string program, shown;
  for (const auto& [name, value] : defines) {
    const bool ok = !name.empty() && name.find_first_of(" \t\r\n") == std::string::npos &&
                    value.find_first_of("\r\n") == std::string::npos;
    if (!ok)
      throw Error(ErrorCode::InvalidArgument,
                  "cannot build " + what + ": the define '" + name + "' = '" + value +
                      "' is not a macro name and a one-line value",
                  ctx);
    program += "#define " + name + " " + (value.empty() ? std::string("1") : value) + "\n";
    shown += " -D" + name + (value.empty() ? "" : "=" + value);
  }
  program += tu;
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());

#if defined(TORSH_HIP)
  // hiprtc (through comgr) of ROCm 5 is not safe to call from several threads at once.
  static std::mutex serial;
  std::lock_guard lock(serial);
#endif
  ProgramGuard prog{r};
  int rc = r.CreateProgram(&prog.p, program.c_str(), entry.c_str(), 0, nullptr, nullptr);
  if (rc != kRtcSuccess)
    throw Error(ErrorCode::KernelCompile,
                std::string(kRtcName) + " could not create a program for " + what + ": " + rtc_error(r, rc), ctx);
  // Through a name expression the entry may be any C++ function (a template
  // instance, a namespaced or non-extern "C" function); its symbol comes back below.
  rc = r.AddNameExpression(prog.p, entry.c_str());
  if (rc != kRtcSuccess)
    throw Error(ErrorCode::KernelCompile,
                std::string(kRtcName) + " refused the entry '" + entry + "' of " + what + ": " + rtc_error(r, rc), ctx);
  const int built = r.CompileProgram(prog.p, static_cast<int>(argv.size()), argv.data());

  CompiledKernel out;
  std::size_t log_size = 0;
  if (r.GetProgramLogSize(prog.p, &log_size) == kRtcSuccess && log_size > 1) {
    std::string log(log_size, '\0');
    if (r.GetProgramLog(prog.p, log.data()) == kRtcSuccess) out.log = trimmed(std::move(log));
  }
  std::string flags;
  for (const std::string& o : opts) flags += (flags.empty() ? "" : " ") + o;
  if (built != kRtcSuccess)
    throw Error(ErrorCode::KernelCompile,
                what + " (entry '" + entry + "') did not compile with " + rtc_version() + " for " + arch + " (" +
                    rtc_error(r, built) + "); options: " + flags + shown + "\nprogram log:\n" +
                    (out.log.empty() ? std::string("(empty)") : out.log),
                ctx, {"Line numbers in the log are the kernel source's own lines"});

  const char* lowered = nullptr;
  rc = r.GetLoweredName(prog.p, entry.c_str(), &lowered);
  if (rc != kRtcSuccess || !lowered || !*lowered)
    throw Error(
        ErrorCode::KernelCompile,
        what + ": the entry '" + entry + "' is not a __global__ function of the program (" + rtc_error(r, rc) + ")",
        ctx, {"Name the entry as it is declared, with template arguments for a template: \"axpy<float>\""});
  out.lowered_name = lowered;

  std::size_t size = 0;
  rc = r.GetCodeSize(prog.p, &size);
  if (rc == kRtcSuccess && size > 0) {
    out.code.resize(size);
    rc = r.GetCode(prog.p, reinterpret_cast<char*>(out.code.data()));
  }
  if (rc != kRtcSuccess || size == 0)
    throw Error(ErrorCode::KernelCompile, what + ": " + kRtcName + " built no code (" + rtc_error(r, rc) + ")", ctx);
  return out;
}

CompiledKernel compile_user_kernel(const rt::UserKernelSpec& spec, const std::string& arch, const std::string& device) {
  const std::string what = spec.label.empty() ? "kernel '" + spec.src.entry + "'" : spec.label;
  if (spec.src.dialect != KernelDialect::Torsh && spec.src.dialect != KernelDialect::Cuda)
    throw Error(ErrorCode::InvalidArgument,
                "cannot build " + what + ": the " + vendor::kRuntime +
                    " backend builds the torsh and cuda dialects, not " +
                    std::string(kernel_dialect_name(spec.src.dialect)),
                {.op = "compile_kernel", .device = device});
  // The Torsh dialect's header recognises NVRTC (__CUDACC_RTC__) and hiprtc (__HIPCC_RTC__) itself.
  std::vector<std::string> options;
#if !defined(TORSH_HIP)
  // NVRTC warns about every helper of the dialect's header that a kernel does not call.
  if (spec.src.dialect == KernelDialect::Torsh) options.emplace_back("-diag-suppress=177");
#endif
  options.insert(options.end(), spec.src.options.begin(), spec.src.options.end());
  return compile_cuda_source(rt::kernel_translation_unit(spec), spec.src.entry, spec.src.defines, options, arch, what,
                             device);
}

}  // namespace torsh::cuda

TORSH_PLUGIN_EXPORT void torsh_cuda_compile_source(const torsh::rt::UserKernelSpec* spec, const char* arch,
                                                   torsh::cuda::CompiledKernel* out) {
  using namespace torsh;
  if (!spec || !arch || !*arch || !out)
    throw Error(ErrorCode::InvalidArgument, "torsh_cuda_compile_source needs a spec, an architecture and a result",
                {.op = "compile_kernel"});
  *out = cuda::compile_user_kernel(*spec, arch, std::string(cuda::vendor::kKey) + " (" + arch + ", no device)");
}
static_assert(std::is_same_v<decltype(&torsh_cuda_compile_source), torsh_cuda_compile_fn>);
