#pragma once
// What a user kernel is made of, shared by the public API (user_kernel.hpp)
// and the backend interface (backend_impl.hpp): the source, its dialect, the
// launch geometry and the entry's parameters as far as they can be known.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace torsh {

// The languages a kernel can be written in. Torsh is the project's portable
// C-family dialect (include/torsh/kernel_dialect.h, documented there): one
// source that builds as OpenCL C, CUDA, HIP and C++ for the CPU backend.
enum class KernelDialect : std::uint8_t {
  Torsh,   // every backend but WebGPU
  OpenCL,  // OpenCL C: the OpenCL backend
  Cuda,    // CUDA C++: the CUDA backend (NVRTC) and the ROCm backend (hiprtc, HIP spells it the same)
  Wgsl,    // WGSL: the WebGPU backend
};
inline constexpr KernelDialect kAllKernelDialects[] = {KernelDialect::Torsh, KernelDialect::OpenCL, KernelDialect::Cuda,
                                                       KernelDialect::Wgsl};
std::string_view kernel_dialect_name(KernelDialect d);  // "torsh", "opencl", "cuda", "wgsl"
// The dialect of a name as kernel_dialect_name() writes it ("cuda", "hip" and "wgsl" are accepted too);
// throws InvalidArgument listing the names.
KernelDialect kernel_dialect_from_name(std::string_view name);

// A kernel to compile. `defines` become -D options (OpenCL, CUDA, HIP, CPU)
// or `const` declarations at the top of a WGSL module; `options` go to the
// compiler as they are (clBuildProgram options, NVRTC / hiprtc options, the
// CPU backend's C++ compiler flags); WGSL takes none.
struct KernelSource {
  std::string source;
  std::string entry;
  KernelDialect dialect = KernelDialect::Torsh;
  std::vector<std::pair<std::string, std::string>> defines;
  std::vector<std::string> options;
  // Shown by the profiler and in errors; the entry's name when empty.
  std::string name;
};

// Work-group counts (grid) and work-group sizes (block), as CUDA's gridDim and
// blockDim: the kernel runs grid.x * block.x items along x, and so on.
struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  constexpr Dim3() = default;
  constexpr Dim3(std::uint32_t x_, std::uint32_t y_ = 1, std::uint32_t z_ = 1) : x(x_), y(y_), z(z_) {}  // NOLINT
  std::uint64_t volume() const { return std::uint64_t(x) * y * z; }
  std::string to_string() const;  // "(4, 1, 1)"
};

// The type of a scalar parameter or of a buffer's elements.
enum class ParamType : std::uint8_t { Unknown, I8, U8, I16, U16, I32, U32, I64, U64, F16, F32, F64, Struct };
std::string_view param_type_name(ParamType t);  // "i32", "f32", "struct", "unknown"
// Bytes of a ParamType (0 for Unknown and Struct).
std::size_t param_type_size(ParamType t);

// One parameter of a kernel entry.
struct KernelParam {
  enum class Kind : std::uint8_t {
    Buffer,  // a pointer / storage binding: takes a tensor
    Value,   // passed by value / a uniform binding: takes a scalar or a POD struct
  };
  Kind kind = Kind::Value;
  ParamType type = ParamType::Unknown;  // Buffer: element type (Unknown: any, as void*); Value: its type
  std::size_t size = 0;                 // Value: bytes (0: unknown); Buffer: element bytes (0: any)
  bool writable = true;                 // Buffer: false for const pointers and read-only bindings
  std::string name;                     // as declared ("" if unnamed)
  std::string spelling;                 // the declared type, "GLOBAL const float*"
  std::string to_string() const;        // "const float* x"
};

}  // namespace torsh
