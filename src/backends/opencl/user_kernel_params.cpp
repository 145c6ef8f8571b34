// A loaded user kernel: the parameters as the driver reports them
// (clGetKernelArgInfo) and the limits its launches are checked against.
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "user_kernel.hpp"

namespace torsh::opencl {

namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ' || s.back() == '\n')) s.pop_back();
  return s;
}

std::string arg_text(cl_kernel k, cl_uint i, cl_kernel_arg_info what) {
  std::size_t n = 0;
  if (clGetKernelArgInfo(k, i, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (clGetKernelArgInfo(k, i, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
  return trimmed(std::move(s));
}

}  // namespace

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
    {"char", ParamType::I8},   {"uchar", ParamType::U8},   {"unsigned char", ParamType::U8},
    {"short", ParamType::I16}, {"ushort", ParamType::U16}, {"unsigned short", ParamType::U16},
    {"int", ParamType::I32},   {"uint", ParamType::U32},   {"unsigned int", ParamType::U32},
    {"long", ParamType::I64},  {"ulong", ParamType::U64},  {"unsigned long", ParamType::U64},
    {"half", ParamType::F16},  {"float", ParamType::F32},  {"double", ParamType::F64},
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
  check_cl(
      clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof limits_.device_group, &limits_.device_group, nullptr),
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
  // Local memory past the device's is refused here: some implementations
  // (PoCL) abort the process when such a group starts instead of failing the launch.
  cl_ulong device_local = 0, kernel_local = 0;
  check_cl(clGetDeviceInfo(id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof device_local, &device_local, nullptr),
           "clGetDeviceInfo(CL_DEVICE_LOCAL_MEM_SIZE)", label);
  check_cl(clGetKernelWorkGroupInfo(kernel, id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof kernel_local, &kernel_local, nullptr),
           "clGetKernelWorkGroupInfo(CL_KERNEL_LOCAL_MEM_SIZE)", label);
  if (kernel_local > device_local)
    throw Error(ErrorCode::InvalidArgument,
                what() + ": its local arrays take " + std::to_string(kernel_local) +
                    " bytes of local memory, more than " + std::to_string(device_local) +
                    ", the device's CL_DEVICE_LOCAL_MEM_SIZE",
                {.op = entry_, .device = label},
                {"Use smaller LOCAL_ARRAYs: tile the work so one group needs at most " + std::to_string(device_local) +
                 " bytes"});
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
