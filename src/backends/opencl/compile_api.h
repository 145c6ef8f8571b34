/* Run-time kernel compilation on an OpenCL device: the low-level path of the
 * OpenCL plugin. libtorsh_backend_opencl.so exports it under
 * TORSH_OPENCL_COMPILE_SYMBOL; callers (tests, tools) look it up with dlsym in
 * the plugin the registry already loaded. No OpenCL header is needed here. */
#ifndef TORSH_BACKENDS_OPENCL_COMPILE_API_H
#define TORSH_BACKENDS_OPENCL_COMPILE_API_H

namespace torsh::rt {
class DeviceImpl;
}

#define TORSH_OPENCL_COMPILE_SYMBOL "torsh_opencl_compile_source"

/* Builds `source` (OpenCL C) for `device`, an OpenCL backend's DeviceImpl, with
 * build `options` (may be null) and returns the number of kernels it defines.
 * Throws torsh::Error: KernelCompile carrying the complete build log when the
 * build fails, InvalidArgument when `device` is not an OpenCL device. */
typedef int (*torsh_opencl_compile_fn)(torsh::rt::DeviceImpl* device, const char* source, const char* options);

#endif
