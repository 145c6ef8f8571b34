/* Run-time compilation of user kernels for the CUDA plugin (NVRTC) and the
 * ROCm plugin (hiprtc), without a device: the PTX or code object for a named
 * architecture. Both plugins export it under TORSH_CUDA_COMPILE_SYMBOL so that
 * tests and tools can build for a GPU this machine does not have; callers look
 * it up with dlsym in the plugin. No CUDA or HIP header is needed here. */
#ifndef TORSH_BACKENDS_CUDA_COMPILE_API_H
#define TORSH_BACKENDS_CUDA_COMPILE_API_H

#include <cstdint>
#include <string>
#include <vector>

namespace torsh::rt {
struct UserKernelSpec;
}

namespace torsh::cuda {
// What the compiler produced for one entry.
struct CompiledKernel {
  std::vector<std::uint8_t> code;  // NVRTC: PTX text (NUL-terminated); hiprtc: an AMDGPU code object (ELF)
  std::string log;                 // the program log (warnings); empty when there were none
  std::string lowered_name;        // the entry's symbol in `code` (mangled for templates and C++ entries)
};
}  // namespace torsh::cuda

#define TORSH_CUDA_COMPILE_SYMBOL "torsh_cuda_compile_source"

/* Compiles `spec` (Torsh or Cuda dialect) for `arch`: "compute_90" (NVRTC,
 * -arch=compute_90) or "gfx90a" (hiprtc, --gpu-architecture=gfx90a) and fills
 * `out`. Throws torsh::Error: KernelCompile with the complete program log when
 * the source does not compile, Unsupported when NVRTC / hiprtc cannot be loaded,
 * InvalidArgument for a dialect this plugin does not build. */
typedef void (*torsh_cuda_compile_fn)(const torsh::rt::UserKernelSpec* spec, const char* arch,
                                      torsh::cuda::CompiledKernel* out);

#endif
