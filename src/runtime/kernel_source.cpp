#include "torsh/runtime/kernel_source.hpp"

#include <cctype>

#include "torsh/core/error.hpp"

namespace torsh {

std::string_view kernel_dialect_name(KernelDialect d) {
  switch (d) {
    case KernelDialect::Torsh: return "torsh";
    case KernelDialect::OpenCL: return "opencl";
    case KernelDialect::Cuda: return "cuda";
    case KernelDialect::Wgsl: return "wgsl";
  }
  return "?";
}

KernelDialect kernel_dialect_from_name(std::string_view name) {
  std::string s;
  for (char c : name) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (KernelDialect d : kAllKernelDialects)
    if (s == kernel_dialect_name(d)) return d;
  if (s == "hip") return KernelDialect::Cuda;
  if (s == "cl" || s == "opencl c") return KernelDialect::OpenCL;
  throw Error(ErrorCode::InvalidArgument, "unknown kernel dialect '" + std::string(name) + "'",
              {.op = "compile_kernel"}, {"Use one of: torsh, opencl, cuda (also for HIP), wgsl"});
}

std::string Dim3::to_string() const {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "(" + std::string&&.
  std::string s = "(";
  s += std::to_string(x);
  s += ", ";
  s += std::to_string(y);
  s += ", ";
  s += std::to_string(z);
  s += ")";
  return s;
}

std::string_view param_type_name(ParamType t) {
  switch (t) {
    case ParamType::Unknown: return "unknown";
    case ParamType::I8: return "i8";
    case ParamType::U8: return "u8";
    case ParamType::I16: return "i16";
    case ParamType::U16: return "u16";
    case ParamType::I32: return "i32";
    case ParamType::U32: return "u32";
    case ParamType::I64: return "i64";
    case ParamType::U64: return "u64";
    case ParamType::F16: return "f16";
    case ParamType::F32: return "f32";
    case ParamType::F64: return "f64";
    case ParamType::Struct: return "struct";
  }
  return "?";
}

std::size_t param_type_size(ParamType t) {
  switch (t) {
    case ParamType::I8:
    case ParamType::U8: return 1;
    case ParamType::I16:
    case ParamType::U16:
    case ParamType::F16: return 2;
    case ParamType::I32:
    case ParamType::U32:
    case ParamType::F32: return 4;
    case ParamType::I64:
    case ParamType::U64:
    case ParamType::F64: return 8;
    default: return 0;
  }
}

std::string KernelParam::to_string() const {
  std::string s = spelling.empty() ? std::string(kind == Kind::Buffer ? "buffer" : param_type_name(type)) : spelling;
  if (!name.empty()) s += " " + name;
  return s;
}

}  // namespace torsh

#include "torsh/backend/backend_impl.hpp"

extern const char* const torsh_kernel_dialect_header;

namespace torsh::rt {

const char* kernel_dialect_header() { return torsh_kernel_dialect_header; }

std::string kernel_translation_unit(const UserKernelSpec& spec, std::string_view target) {
  std::string tu;
  if (spec.src.dialect == KernelDialect::Torsh) {
    tu += target;
    tu += kernel_dialect_header();
    tu += '\n';
  }
  const std::string& name = spec.src.name.empty() ? spec.src.entry : spec.src.name;
  tu += "#line 1 \"";
  for (char c : name) tu += (c == '"' || c == '\\' || c == '\n') ? '_' : c;
  tu += "\"\n";
  tu += spec.src.source;
  tu += '\n';
  return tu;
}

}  // namespace torsh::rt
