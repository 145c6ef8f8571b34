/* Run-time WGSL compilation on a WebGPU device: the low-level path of the
 * WebGPU plugin. libtorsh_backend_webgpu.so exports it under
 * TORSH_WEBGPU_COMPILE_SYMBOL; callers (tests, tools) look it up with dlsym in
 * the plugin the registry already loaded. No WebGPU header is needed here. */
#ifndef TORSH_BACKENDS_WEBGPU_COMPILE_API_H
#define TORSH_BACKENDS_WEBGPU_COMPILE_API_H

namespace torsh::rt {
class DeviceImpl;
}

#define TORSH_WEBGPU_COMPILE_SYMBOL "torsh_webgpu_compile_source"

/* Compiles `source` (a whole WGSL module) for `device`, a WebGPU backend's
 * DeviceImpl, and returns 0. Throws torsh::Error: KernelCompile carrying
 * wgpu's diagnostic (line, column and the offending source line) when the
 * module does not compile, InvalidArgument when `device` is not a WebGPU
 * device. */
typedef int (*torsh_webgpu_compile_fn)(torsh::rt::DeviceImpl* device, const char* source);

#endif
