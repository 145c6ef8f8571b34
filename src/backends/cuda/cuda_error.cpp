#include "cuda_error.hpp"

#include <vector>

namespace torsh::cuda {

std::string cuda_error_text(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")";
}

namespace {
// Errors after which the context is unusable: every later call fails the same way.
bool is_sticky(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
#if !defined(TORSH_HIP)  // HIP reports these faults as the ones above
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
#endif
      return true;
    default: return false;
  }
}
bool no_code_for_device(cudaError_t err) {
#if defined(TORSH_HIP)
  return err == cudaErrorNoKernelImageForDevice;
#else
  return err == cudaErrorNoKernelImageForDevice || err == cudaErrorUnsupportedPtxVersion;
#endif
}
}  // namespace

void throw_cuda(cudaError_t err, const std::string& call, const std::string& device) {
  // Clear the runtime's last-error slot so that a later, unrelated check does not report this failure again.
  (void)cudaGetLastError();
  const bool oom = err == cudaErrorMemoryAllocation;
  std::vector<std::string> hints;
  if (oom) hints.push_back("Free buffers or use smaller tensors; the device ran out of memory");
  if (is_sticky(err))
    hints.push_back(std::string("A kernel faulted and the ") + vendor::kRuntime +
                    " context is lost; restart the process to use this device again");
  if (no_code_for_device(err))
    hints.push_back(std::string("Rebuild the ") + vendor::kRuntime +
                    " plugin with this GPU among its architectures (CMAKE_CUDA_ARCHITECTURES, TORSH_HIP_ARCHS), "
                    "or update the driver");
  throw Error(oom ? ErrorCode::OutOfMemory : ErrorCode::DeviceError, call + " failed with " + cuda_error_text(err),
              {.op = call, .device = device}, std::move(hints));
}

DeviceGuard::DeviceGuard(int ordinal, const std::string& device) : ordinal_(ordinal) {
  check_cuda(cudaGetDevice(&previous_), "cudaGetDevice", device);
  if (previous_ != ordinal_) check_cuda(cudaSetDevice(ordinal_), "cudaSetDevice", device);
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0 && previous_ != ordinal_) (void)cudaSetDevice(previous_);
}

}  // namespace torsh::cuda
