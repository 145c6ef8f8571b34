#include "program.hpp"

#include <vector>

namespace torsh::opencl {

namespace {
std::string build_log(cl_program prog, cl_device_id dev) {
  std::size_t n = 0;
  if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) != CL_SUCCESS || n == 0)
    return "<no build log>";
  std::string log(n, '\0');
  if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr) != CL_SUCCESS)
    return "<build log unavailable>";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log.empty() ? "<empty build log>" : log;
}
}  // namespace

void Kernel::set_arg(cl_uint index, std::size_t size, const void* value) const {
  const cl_int err = clSetKernelArg(handle, index, size, value);
  if (err != CL_SUCCESS)
    throw_cl(err, (std::string("clSetKernelArg(") + name + ", arg " + std::to_string(index) + ")").c_str(),
             device ? *device : std::string());
}

Program::Program(cl_context ctx, cl_device_id dev, std::string label, const char* source, const char* options)
    : label_(std::move(label)) {
  cl_int err = CL_SUCCESS;
  prog_ = clCreateProgramWithSource(ctx, 1, &source, nullptr, &err);
  check_cl(err, "clCreateProgramWithSource", label_);
  err = clBuildProgram(prog_, 1, &dev, options ? options : "", nullptr, nullptr);
  if (err != CL_SUCCESS) {
    const std::string log = build_log(prog_, dev);
    clReleaseProgram(prog_);
    prog_ = nullptr;
    if (err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS || err == CL_COMPILER_NOT_AVAILABLE)
      throw Error(ErrorCode::KernelCompile,
                  "OpenCL program build failed with " + cl_error_name(err) + " on " + label_ +
                      (options && *options ? std::string(" (options: ") + options + ")" : std::string()) +
                      "\n--- build log ---\n" + log + "\n--- end of build log ---",
                  {.op = "clBuildProgram", .device = label_},
                  {"Fix the kernel source at the line the build log names"});
    throw_cl(err, "clBuildProgram", label_);
  }
}

Program::~Program() {
  for (auto& [name, k] : kernels_) clReleaseKernel(k);
  if (prog_) clReleaseProgram(prog_);
}

Kernel Program::kernel(const char* name) {
  std::lock_guard lk(mu_);
  auto it = kernels_.find(name);
  if (it == kernels_.end()) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(prog_, name, &err);
    check_cl(err, (std::string("clCreateKernel(") + name + ")").c_str(), label_);
    it = kernels_.emplace(name, k).first;
  }
  return Kernel{it->second, &launch_mu_, it->first.c_str(), &label_};
}

int Program::num_kernels() const {
  std::size_t n = 0;
  check_cl(clGetProgramInfo(prog_, CL_PROGRAM_NUM_KERNELS, sizeof n, &n, nullptr), "clGetProgramInfo", label_);
  return static_cast<int>(n);
}

}  // namespace torsh::opencl
