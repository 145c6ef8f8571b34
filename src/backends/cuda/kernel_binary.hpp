#pragma once
// The bytes build_kernel() returns and load_kernel() takes (possibly read back
// from the disk cache by another process): a header, the entry's symbol
// (mangled for C++ entries, so it must travel with the code) and the code. The
// header and a checksum make truncated, damaged or foreign bytes an error here,
// before the driver parses them. No CUDA or HIP header is needed, so the tests
// check the format on machines without a GPU.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace torsh::cuda {

enum class CodeKind : std::uint8_t {
  Ptx,        // NVRTC: PTX text, NUL-terminated (cuModuleLoadData reads up to the NUL)
  AmdgpuElf,  // hiprtc: an AMDGPU code object
};

std::vector<std::uint8_t> pack_kernel_binary(CodeKind kind, const std::string& symbol,
                                             std::span<const std::uint8_t> code);

struct KernelImage {
  std::string symbol;
  std::vector<std::uint8_t> code;  // a copy: the driver wants it aligned, and the caller's bytes may go
};
// Throws Error(InvalidArgument) naming `what` and `device` when the bytes are
// not a complete, undamaged binary of `kind`.
KernelImage unpack_kernel_binary(CodeKind kind, std::span<const std::uint8_t> bytes, const std::string& what,
                                 const std::string& device);

// The byte size of each parameter of the entry `symbol`, read from its PTX
// declaration (".param .u64 ...", ".param .align 8 .b8 name[24]"): what the
// launch checks values against where the driver cannot say
// (cuFuncGetParamInfo came with CUDA 12.4). nullopt when it is not found.
std::optional<std::vector<std::size_t>> ptx_param_sizes(std::span<const std::uint8_t> ptx, const std::string& symbol);

// The same from an AMDGPU code object's metadata (its NT_AMDGPU_METADATA
// note: amdhsa.kernels[].args, the hidden arguments left out); hipModule has
// no call that tells them. nullopt when the note or the kernel is not found.
std::optional<std::vector<std::size_t>> amdgpu_param_sizes(std::span<const std::uint8_t> elf,
                                                           const std::string& symbol);

}  // namespace torsh::cuda
