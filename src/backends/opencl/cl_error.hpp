#pragma once
// The OpenCL C API as this plugin uses it (1.2 entry points), and the one way
// a failed call becomes a torsh::Error: the call, the CL error name and the device.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <string>

#include "torsh/core/error.hpp"

namespace torsh::opencl {

// "CL_OUT_OF_RESOURCES" for -5; "CL_UNKNOWN_ERROR(<code>)" for codes outside the table.
std::string cl_error_name(cl_int err);

// Throws Error(code) naming `call`, the CL error and `device` ("opencl:0 (name)").
[[noreturn]] void throw_cl(cl_int err, const char* call, const std::string& device,
                           ErrorCode code = ErrorCode::DeviceError);

inline void check_cl(cl_int err, const char* call, const std::string& device) {
  if (err != CL_SUCCESS) throw_cl(err, call, device);
}

// Allocation failures are OutOfMemory; everything else is a DeviceError.
inline bool is_allocation_failure(cl_int err) {
  return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY;
}

}  // namespace torsh::opencl
