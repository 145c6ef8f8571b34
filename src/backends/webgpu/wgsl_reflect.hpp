#pragma once
// What a user's WGSL module declares, read from its text without a WGSL
// compiler: the resource bindings (`@group(0) @binding(i) var<...> name: T;`)
// and the @compute entry points with their @workgroup_size. A small parser of
// module-scope declarations (comments stripped, function bodies skipped):
// enough to turn the bindings into KernelParams and to check a launch's block
// against the work-group size. wgpu compiles the module and remains the
// judge of whether it is valid WGSL.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "torsh/runtime/kernel_source.hpp"

namespace torsh::webgpu {

struct WgslBinding {
  std::uint32_t group = 0, binding = 0;
  enum class Space : std::uint8_t { Storage, Uniform, Other } space = Space::Other;
  bool writable = false;  // var<storage, read_write>
  std::string name;
  std::string type;                            // as written, e.g. "array<f32>"
  ParamType elem = ParamType::Unknown;         // storage: the scalar type of the elements; uniform: the value's type
  std::size_t size = 0;                        // uniform: SizeOf(type) under WGSL's layout rules (0: not computed)
  std::uint32_t line = 0;                      // of the declaration in the text parsed (1-based)
  std::size_t space_begin = 0, space_end = 0;  // where `<storage, read>` is in the text (both 0: not written)
};

struct WgslEntry {
  std::string name;
  // The @workgroup_size per dimension; unset where it is not a constant this parser can evaluate
  // (override declarations, expressions of functions).
  std::optional<std::uint32_t> size[3];
  bool size_known() const { return size[0] && size[1] && size[2]; }
};

struct WgslModuleInfo {
  std::vector<WgslBinding> bindings;  // in declaration order
  std::vector<WgslEntry> entries;     // @compute functions
  // Bytes of the module's var<workgroup> declarations, each rounded up to 16
  // as WebGPU counts them; unset where a size is not a constant this parser
  // evaluates. Every declaration counts, used by the entry or not.
  std::optional<std::size_t> workgroup_bytes = 0;
  const WgslEntry* entry(const std::string& name) const;
};

// Reads the module's declarations. Never throws on malformed text: what it
// cannot make out is left out (wgpu reports the errors).
WgslModuleInfo reflect_wgsl(const std::string& text);

// `text` with every read-only storage binding declared `<storage, read_write>`
// instead, in place (the lines do not move); unchanged when there is none.
std::string storage_read_write(const std::string& text, const WgslModuleInfo& m);

// The bindings as the kernel's parameters, binding 0 first. Throws
// InvalidArgument (naming `what`) for bindings outside group 0, gaps in the
// binding numbers, and resources other than storage and uniform buffers.
std::vector<KernelParam> wgsl_params(const WgslModuleInfo& m, const std::string& what);

}  // namespace torsh::webgpu
