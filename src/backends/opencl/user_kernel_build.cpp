// Building user kernels: options, clBuildProgram with the complete log on
// failure, the entry check, the program binary as the cacheable bytes, and
// loading those bytes back (user_kernel_params.cpp reads the parameters).
#include <cctype>
#include <cstring>
#include <memory>
#include <type_traits>

#include "user_kernel.hpp"

namespace torsh::opencl {

namespace {

struct ProgramRelease {
  void operator()(cl_program p) const { clReleaseProgram(p); }
};
using ProgramPtr = std::unique_ptr<std::remove_pointer_t<cl_program>, ProgramRelease>;

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ' || s.back() == '\n')) s.pop_back();
  return s;
}

std::string platform_text(cl_platform_id p, cl_platform_info what) {
  std::size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS) return "?";
  std::string s(n, '\0');
  if (clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return "?";
  return trimmed(std::move(s));
}

std::string device_text(cl_device_id d, cl_device_info what) {
  std::size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS) return "?";
  std::string s(n, '\0');
  if (clGetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return "?";
  return trimmed(std::move(s));
}

std::string build_log(cl_program prog, cl_device_id dev) {
  std::size_t n = 0;
  if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string log(n, '\0');
  if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr) != CL_SUCCESS) return {};
  return trimmed(std::move(log));
}

const std::string& shown_name(const rt::UserKernelSpec& spec) {
  return spec.src.name.empty() ? spec.src.entry : spec.src.name;
}

std::string describe(const rt::UserKernelSpec& spec) {
  if (!spec.label.empty()) return spec.label;
  return "kernel '" + shown_name(spec) + "' (" + std::string(kernel_dialect_name(spec.src.dialect)) + " dialect)";
}

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// The text to build and its clBuildProgram options. Defines are -D options;
// a value that option parsing would split (white space, quotes) becomes a
// #define in front of the source instead, which means the same to the
// preprocessor. -cl-kernel-arg-info lets load_kernel read the parameters.
struct Translation {
  std::string text, options;
};

Translation translate(const rt::UserKernelSpec& spec, const std::string& device) {
  if (spec.src.dialect != KernelDialect::Torsh && spec.src.dialect != KernelDialect::OpenCL)
    throw Error(ErrorCode::Unsupported,
                "the OpenCL backend does not build " + std::string(kernel_dialect_name(spec.src.dialect)) +
                    " kernels (" + describe(spec) + ")",
                {.op = "compile_kernel", .device = device},
                {"Write the kernel in the Torsh dialect or OpenCL C, or compile it on a backend that takes " +
                 std::string(kernel_dialect_name(spec.src.dialect))});
  Translation t;
  t.options = "-cl-kernel-arg-info";
  std::string prelude;
  for (const auto& [name, value] : spec.src.defines) {
    if (!is_identifier(name) || value.find_first_of("\r\n") != std::string::npos)
      throw Error(ErrorCode::InvalidArgument,
                  "define '" + name + "' of " + describe(spec) +
                      (is_identifier(name) ? " has a value that spans lines" : " is not a C identifier"),
                  {.op = "compile_kernel", .device = device},
                  {"Name defines with letters, digits and '_' and keep each value on one line"});
    if (value.find_first_of(" \t\"'\\") == std::string::npos)
      t.options += " -D " + name + (value.empty() ? std::string() : "=" + value);
    else
      prelude += "#define " + name + " " + value + "\n";
  }
  for (const std::string& o : spec.src.options) t.options += " " + o;
  t.text = prelude + rt::kernel_translation_unit(spec);
  return t;
}

[[noreturn]] void build_failed(cl_int err, cl_program prog, cl_device_id dev, const rt::UserKernelSpec& spec,
                               const std::string& options, const std::string& device, const char* from) {
  const std::string log = build_log(prog, dev);
  throw Error(
      ErrorCode::KernelCompile,
      "building " + describe(spec) + ", entry '" + spec.src.entry + "', " + from + " failed on " + device + " with " +
          cl_error_name(err) + " (options: " + options + ")\n--- build log ---\n" +
          (log.empty() ? std::string("<the driver gave no build log>") : log) + "\n--- end of build log ---",
      {.op = "compile_kernel", .device = device},
      {"Fix the kernel source at the line the build log names (lines count from the first line of your source)"});
}

ProgramPtr build_from_source(OpenClDevice& d, const rt::UserKernelSpec& spec, const std::string& text,
                             const std::string& options) {
  const char* src = text.c_str();
  const std::size_t len = text.size();
  cl_int err = CL_SUCCESS;
  ProgramPtr prog(clCreateProgramWithSource(d.context(), 1, &src, &len, &err));
  check_cl(err, "clCreateProgramWithSource", d.label());
  cl_device_id dev = d.id();
  err = clBuildProgram(prog.get(), 1, &dev, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) build_failed(err, prog.get(), dev, spec, options, d.label(), "from source");
  return prog;
}

// The entry as a cl_kernel; a name the program does not define is refused with the names it does.
cl_kernel entry_kernel(OpenClDevice& d, cl_program prog, const rt::UserKernelSpec& spec) {
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(prog, spec.src.entry.c_str(), &err);
  if (err == CL_SUCCESS) return k;
  if (err != CL_INVALID_KERNEL_NAME && err != CL_INVALID_KERNEL_DEFINITION)
    throw_cl(err, ("clCreateKernel(" + spec.src.entry + ")").c_str(), d.label());
  std::string names;
  std::size_t n = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &n) == CL_SUCCESS && n > 0) {
    names.assign(n, '\0');
    if (clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, n, names.data(), nullptr) != CL_SUCCESS) names.clear();
    names = trimmed(std::move(names));
  }
  // CL_PROGRAM_KERNEL_NAMES separates the names with ';'.
  std::string listed = names.empty() ? "it defines no kernels" : "it defines: ";
  for (char c : names) listed += c == ';' ? std::string(", ") : std::string(1, c);
  throw Error(ErrorCode::InvalidArgument,
              "entry '" + spec.src.entry + "' of " + describe(spec) + " is not a kernel of the program (" +
                  cl_error_name(err) + "); " + listed,
              {.op = "compile_kernel", .device = d.label()},
              {"Set KernelSource::entry to the name of a __kernel / KERNEL function of the source"});
}

// The built program's binary for this device; empty where the driver has none to give.
std::vector<std::uint8_t> program_binary(cl_program prog) {
  std::size_t size = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0)
    return {};
  std::vector<std::uint8_t> bin(size);
  unsigned char* ptr = bin.data();
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) != CL_SUCCESS) return {};
  return bin;
}

}  // namespace

std::vector<KernelDialect> OpenClDevice::kernel_dialects() const {
  return {KernelDialect::Torsh, KernelDialect::OpenCL};
}

// Everything that decides what a build produces: the platform (PoCL's version
// string names its LLVM), the device and its OpenCL C, and the driver.
std::string OpenClDevice::kernel_compiler_id() const {
  return platform_text(platform_, CL_PLATFORM_NAME) + " " + platform_text(platform_, CL_PLATFORM_VERSION) +
         " / device " + device_text(dev_, CL_DEVICE_NAME) + " (" + device_text(dev_, CL_DEVICE_VERSION) +
         ") / driver " + device_text(dev_, CL_DRIVER_VERSION) + " / " + device_text(dev_, CL_DEVICE_OPENCL_C_VERSION);
}

rt::KernelBinary OpenClDevice::build_kernel(const rt::UserKernelSpec& spec) {
  const Translation t = translate(spec, label_);
  ProgramPtr prog = build_from_source(*this, spec, t.text, t.options);
  {
    cl_kernel k = entry_kernel(*this, prog.get(), spec);
    try {
      check_param_kinds(k, "kernel '" + shown_name(spec) + "' on " + label_, label_);
    } catch (...) {
      clReleaseKernel(k);
      throw;
    }
    clReleaseKernel(k);
  }
  rt::KernelBinary out;
  out.log = build_log(prog.get(), dev_);
  const std::vector<std::uint8_t> bin = program_binary(prog.get());
  if (!bin.empty()) {
    out.bytes = pack_user_kernel(UserKernelBytes::Kind::Binary, bin, kernel_compiler_id());
  } else {
    // No binary from this driver: the source stands in, and load_kernel builds it again.
    out.bytes = pack_user_kernel(UserKernelBytes::Kind::Source, text_bytes(t.text), kernel_compiler_id());
    out.cacheable = false;
  }
  return out;
}

std::unique_ptr<rt::UserKernelImpl> OpenClDevice::load_kernel(const rt::UserKernelSpec& spec,
                                                              std::span<const std::uint8_t> binary) {
  const UserKernelBytes bytes = unpack_user_kernel(binary, kernel_compiler_id(), label_);
  const Translation t = translate(spec, label_);
  ProgramPtr prog;
  if (bytes.kind == UserKernelBytes::Kind::Source) {
    prog = build_from_source(
        *this, spec, std::string(reinterpret_cast<const char*>(bytes.payload.data()), bytes.payload.size()), t.options);
  } else {
    const unsigned char* data = bytes.payload.data();
    const std::size_t len = bytes.payload.size();
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    prog.reset(clCreateProgramWithBinary(ctx_, 1, &dev_, &len, &data, &status, &err));
    if (err != CL_SUCCESS || status != CL_SUCCESS)
      throw Error(ErrorCode::InvalidArgument,
                  "the driver refused the program binary of " + describe(spec) + " (" +
                      cl_error_name(err != CL_SUCCESS ? err : status) + ")",
                  {.op = "load_kernel", .device = label_},
                  {"The binary was built for another device or driver; rebuild the kernel from its source"});
    const cl_int built = clBuildProgram(prog.get(), 1, &dev_, t.options.c_str(), nullptr, nullptr);
    if (built != CL_SUCCESS) build_failed(built, prog.get(), dev_, spec, t.options, label_, "from its binary");
  }
  cl_kernel k = entry_kernel(*this, prog.get(), spec);
  std::unique_ptr<UserKernel> kernel;
  try {
    kernel = std::make_unique<UserKernel>(*this, spec, prog.get(), k);
  } catch (...) {
    clReleaseKernel(k);
    throw;
  }
  prog.release();  // the UserKernel owns it now
  return kernel;
}

}  // namespace torsh::opencl
