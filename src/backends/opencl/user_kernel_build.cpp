// Building user kernels: options, clBuildProgram with the complete log on
// failure, the entry check, the program binary as the cacheable bytes, and
// loading those bytes back with the parameters the driver reports.
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
  throw Error(ErrorCode::KernelCompile,
              "building " + describe(spec) + ", entry '" + spec.src.entry + "', " + from + " failed on " + device +
                  " with " + cl_error_name(err) + " (options: " + options + ")\n--- build log ---\n" +
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

// FNV-1a: catches bytes cut short or flipped on disk; not a defence against forgery.
std::uint64_t fnv1a(std::span<const std::uint8_t> data) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::uint8_t b : data) h = (h ^ b) * 1099511628211ull;
  return h;
}

std::span<const std::uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

constexpr char kMagic[8] = {'T', 'O', 'R', 'S', 'H', 'C', 'L', '1'};
// magic, kind, payload size, payload checksum, checksum of kernel_compiler_id()
constexpr std::size_t kHeader = sizeof kMagic + 1 + 8 + 8 + 8;

std::string arg_text(cl_kernel k, cl_uint i, cl_kernel_arg_info what) {
  std::size_t n = 0;
  if (clGetKernelArgInfo(k, i, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (clGetKernelArgInfo(k, i, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
  return trimmed(std::move(s));
}

// Refuses the parameters a launch cannot bind: __local pointers (they take a
// size, not data) and images, pipes, samplers. False when the driver keeps no
// argument information, so nothing could be checked.
bool check_param_kinds(cl_kernel k, const std::string& what, const std::string& device) {
  cl_uint n = 0;
  check_cl(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof n, &n, nullptr), "clGetKernelInfo(CL_KERNEL_NUM_ARGS)",
           device);
  for (cl_uint i = 0; i < n; ++i) {
    cl_kernel_arg_address_qualifier addr = 0;
    const cl_int err = clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof addr, &addr, nullptr);
    if (err == CL_KERNEL_ARG_INFO_NOT_AVAILABLE) return false;
    check_cl(err, "clGetKernelArgInfo(CL_KERNEL_ARG_ADDRESS_QUALIFIER)", device);
    const std::string name = arg_text(k, i, CL_KERNEL_ARG_NAME);
    std::string shown = "'" + name + "'";
    if (name.empty()) shown = std::string("#").append(std::to_string(i));
    const std::string type = arg_text(k, i, CL_KERNEL_ARG_TYPE_NAME);
    if (addr == CL_KERNEL_ARG_ADDRESS_LOCAL)
      throw Error(ErrorCode::Unsupported,
                  "parameter " + shown + " of " + what +
                      " is a __local (work-group memory) pointer: local-memory parameters are not supported",
                  {.op = "compile_kernel", .device = device},
                  {"Declare the work-group array inside the kernel with LOCAL_ARRAY(type, name, n) "
                   "(__local type name[n]; in OpenCL C) and pass its size as a define"});
    if ((addr == CL_KERNEL_ARG_ADDRESS_GLOBAL || addr == CL_KERNEL_ARG_ADDRESS_CONSTANT) &&
        (type.empty() || type.back() != '*'))
      throw Error(ErrorCode::Unsupported,
                  "parameter " + shown + " of " + what + " is a " + type +
                      ": image, pipe and sampler parameters are not supported",
                  {.op = "compile_kernel", .device = device}, {"Pass the data as a __global pointer"});
  }
  return true;
}

}  // namespace

std::vector<std::uint8_t> pack_user_kernel(UserKernelBytes::Kind kind, std::span<const std::uint8_t> payload,
                                           const std::string& compiler_id) {
  std::vector<std::uint8_t> out(kHeader + payload.size());
  const std::uint64_t size = payload.size(), sum = fnv1a(payload), id = fnv1a(as_bytes(compiler_id));
  std::memcpy(out.data(), kMagic, sizeof kMagic);
  out[sizeof kMagic] = static_cast<std::uint8_t>(kind);
  std::memcpy(out.data() + sizeof kMagic + 1, &size, 8);
  std::memcpy(out.data() + sizeof kMagic + 9, &sum, 8);
  std::memcpy(out.data() + sizeof kMagic + 17, &id, 8);
  if (!payload.empty()) std::memcpy(out.data() + kHeader, payload.data(), payload.size());
  return out;
}

UserKernelBytes unpack_user_kernel(std::span<const std::uint8_t> bytes, const std::string& compiler_id,
                                   const std::string& device) {
  const auto refuse = [&](const std::string& why) -> Error {
    return Error(ErrorCode::InvalidArgument, "not a usable OpenCL user-kernel binary: " + why,
                 {.op = "load_kernel", .device = device}, {"Rebuild the kernel from its source"});
  };
  if (bytes.size() < kHeader || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw refuse("it does not start with the " + std::string(kMagic, sizeof kMagic) + " header (" +
                 std::to_string(bytes.size()) + " bytes)");
  UserKernelBytes out;
  const std::uint8_t kind = bytes[sizeof kMagic];
  if (kind != static_cast<std::uint8_t>(UserKernelBytes::Kind::Binary) &&
      kind != static_cast<std::uint8_t>(UserKernelBytes::Kind::Source))
    throw refuse("unknown payload kind " + std::to_string(kind));
  out.kind = static_cast<UserKernelBytes::Kind>(kind);
  std::uint64_t size = 0, sum = 0, id = 0;
  std::memcpy(&size, bytes.data() + sizeof kMagic + 1, 8);
  std::memcpy(&sum, bytes.data() + sizeof kMagic + 9, 8);
  std::memcpy(&id, bytes.data() + sizeof kMagic + 17, 8);
  if (id != fnv1a(as_bytes(compiler_id)))
    throw refuse("it was built by another OpenCL compiler, driver or device than " + compiler_id);
  if (size != bytes.size() - kHeader)
    throw refuse("the header announces " + std::to_string(size) + " bytes of payload but " +
                 std::to_string(bytes.size() - kHeader) + " follow (truncated or padded)");
  out.payload = bytes.subspan(kHeader);
  if (fnv1a(out.payload) != sum) throw refuse("the payload's checksum does not match (corrupted)");
  if (out.payload.empty()) throw refuse("the payload is empty");
  return out;
}

std::vector<KernelDialect> OpenClDevice::kernel_dialects() const {
  return {KernelDialect::Torsh, KernelDialect::OpenCL};
}

// Everything that decides what a build produces: the platform (PoCL's version
// string names its LLVM), the device and its OpenCL C, and the driver.
std::string OpenClDevice::kernel_compiler_id() const {
  return platform_text(platform_, CL_PLATFORM_NAME) + " " + platform_text(platform_, CL_PLATFORM_VERSION) +
         " / device " + device_text(dev_, CL_DEVICE_NAME) + " (" + device_text(dev_, CL_DEVICE_VERSION) +
         ") / driver " + device_text(dev_, CL_DRIVER_VERSION) + " / " +
         device_text(dev_, CL_DEVICE_OPENCL_C_VERSION);
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
    out.bytes = pack_user_kernel(UserKernelBytes::Kind::Source, as_bytes(t.text), kernel_compiler_id());
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
    prog = build_from_source(*this, spec,
                             std::string(reinterpret_cast<const char*>(bytes.payload.data()), bytes.payload.size()),
                             t.options);
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

// ---------------------------------------------------------------- UserKernel

namespace {

template <class T>
T kernel_value(cl_kernel k, cl_kernel_info what, const char* name, const std::string& device) {
  T v{};
  check_cl(clGetKernelInfo(k, what, sizeof v, &v, nullptr), name, device);
  return v;
}

struct ScalarName {
  const char* name;
  ParamType type;
};
constexpr ScalarName kScalars[] = {
    {"char", ParamType::I8},   {"uchar", ParamType::U8},       {"unsigned char", ParamType::U8},
    {"short", ParamType::I16}, {"ushort", ParamType::U16},     {"unsigned short", ParamType::U16},
    {"int", ParamType::I32},   {"uint", ParamType::U32},       {"unsigned int", ParamType::U32},
    {"long", ParamType::I64},  {"ulong", ParamType::U64},      {"unsigned long", ParamType::U64},
    {"half", ParamType::F16},  {"float", ParamType::F32},      {"double", ParamType::F64},
};

ParamType scalar_type(const std::string& name) {
  for (const ScalarName& s : kScalars)
    if (name == s.name) return s.type;
  return ParamType::Unknown;
}

// Bytes of an OpenCL C vector type ("float4": 16; a 3-vector is stored as 4), 0 when `name` is not one.
std::size_t vector_size(const std::string& name) {
  std::size_t digits = name.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
  if (digits == name.size() || digits == 0) return 0;
  const int n = std::atoi(name.c_str() + digits);
  if (n != 2 && n != 3 && n != 4 && n != 8 && n != 16) return 0;
  const std::size_t elem = param_type_size(scalar_type(name.substr(0, digits)));
  return elem * static_cast<std::size_t>(n == 3 ? 4 : n);
}

}  // namespace

UserKernel::UserKernel(OpenClDevice& dev, const rt::UserKernelSpec& spec, cl_program program, cl_kernel kernel)
    : dev_(dev), program_(program), kernel_(kernel), entry_(spec.src.entry) {
  // Until the constructor finishes, the caller still owns both handles.
  const std::string& label = dev.label();
  num_args_ = kernel_value<cl_uint>(kernel, CL_KERNEL_NUM_ARGS, "clGetKernelInfo(CL_KERNEL_NUM_ARGS)", label);
  refine_params(spec);

  cl_device_id id = dev.id();
  check_cl(clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof limits_.device_group, &limits_.device_group,
                           nullptr),
           "clGetDeviceInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE)", label);
  cl_uint dims = 3;
  check_cl(clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, sizeof dims, &dims, nullptr),
           "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS)", label);
  std::vector<std::size_t> items(std::max<cl_uint>(dims, 3), 1);
  check_cl(clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, dims * sizeof(std::size_t), items.data(), nullptr),
           "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES)", label);
  for (int d = 0; d < 3; ++d) limits_.item_sizes[d] = items[static_cast<std::size_t>(d)];
  check_cl(clGetKernelWorkGroupInfo(kernel, id, CL_KERNEL_WORK_GROUP_SIZE, sizeof limits_.kernel_group,
                                    &limits_.kernel_group, nullptr),
           "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)", label);
  check_cl(clGetKernelWorkGroupInfo(kernel, id, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof limits_.required,
                                    limits_.required, nullptr),
           "clGetKernelWorkGroupInfo(CL_KERNEL_COMPILE_WORK_GROUP_SIZE)", label);
  cl_uint bits = 64;
  check_cl(clGetDeviceInfo(id, CL_DEVICE_ADDRESS_BITS, sizeof bits, &bits, nullptr),
           "clGetDeviceInfo(CL_DEVICE_ADDRESS_BITS)", label);
  limits_.max_global = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  if constexpr (sizeof(std::size_t) < 8)
    limits_.max_global = std::min<std::uint64_t>(limits_.max_global, ~std::size_t{0});
}

UserKernel::~UserKernel() {
  clReleaseKernel(kernel_);
  clReleaseProgram(program_);
}

// By its entry: the runtime shares one UserKernel between handles that differ only in KernelSource::name.
std::string UserKernel::what() const { return "kernel '" + entry_ + "' on " + dev_.label(); }

// The parameters as the compiler saw them (clGetKernelArgInfo), where the
// driver keeps that information; the runtime's parse of the source otherwise.
void UserKernel::refine_params(const rt::UserKernelSpec& spec) {
  if (!check_param_kinds(kernel_, what(), dev_.label())) {
    params_ = spec.params;
    params_known_ = spec.params_known && spec.params.size() == num_args_;
    return;
  }
  std::vector<KernelParam> found;
  for (cl_uint i = 0; i < num_args_; ++i) {
    cl_kernel_arg_address_qualifier addr = 0;
    check_cl(clGetKernelArgInfo(kernel_, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof addr, &addr, nullptr),
             "clGetKernelArgInfo(CL_KERNEL_ARG_ADDRESS_QUALIFIER)", dev_.label());
    cl_kernel_arg_type_qualifier qual = 0;
    clGetKernelArgInfo(kernel_, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof qual, &qual, nullptr);
    const std::string type = arg_text(kernel_, i, CL_KERNEL_ARG_TYPE_NAME);
    const KernelParam* parsed = i < spec.params.size() ? &spec.params[i] : nullptr;

    KernelParam p;
    p.name = arg_text(kernel_, i, CL_KERNEL_ARG_NAME);
    if (addr == CL_KERNEL_ARG_ADDRESS_GLOBAL || addr == CL_KERNEL_ARG_ADDRESS_CONSTANT) {
      p.kind = KernelParam::Kind::Buffer;
      p.type = scalar_type(type.substr(0, type.size() - 1));
      p.size = param_type_size(p.type);
      p.writable = addr == CL_KERNEL_ARG_ADDRESS_GLOBAL && !(qual & CL_KERNEL_ARG_TYPE_CONST);
      p.spelling = std::string(addr == CL_KERNEL_ARG_ADDRESS_GLOBAL ? "__global " : "__constant ") +
                   (p.writable ? "" : "const ") + type;
    } else {
      p.kind = KernelParam::Kind::Value;
      p.type = scalar_type(type);
      p.size = param_type_size(p.type);
      if (p.type == ParamType::Unknown) {
        // A vector, struct or typedef: its size from the type where it is a vector, else from the parse.
        p.type = ParamType::Struct;
        p.size = vector_size(type);
        if (p.size == 0 && parsed && parsed->kind == KernelParam::Kind::Value) {
          p.type = parsed->type == ParamType::Unknown ? ParamType::Struct : parsed->type;
          p.size = parsed->size;
        }
      }
      p.writable = false;
      p.spelling = type;  // size 0 (a struct the parse could not size): any size, which clSetKernelArg checks
    }
    if (parsed && parsed->kind == p.kind && !parsed->spelling.empty()) p.spelling = parsed->spelling;
    found.push_back(std::move(p));
  }
  params_ = std::move(found);
  params_known_ = true;
}

}  // namespace torsh::opencl
