#include "torsh/core/error.hpp"

#include <sstream>

namespace torsh {

std::string_view error_code_name(ErrorCode c) {
  switch (c) {
    case ErrorCode::InvalidArgument: return "InvalidArgument";
    case ErrorCode::ShapeMismatch: return "ShapeMismatch";
    case ErrorCode::DTypeMismatch: return "DTypeMismatch";
    case ErrorCode::DeviceMismatch: return "DeviceMismatch";
    case ErrorCode::OutOfRange: return "OutOfRange";
    case ErrorCode::OutOfMemory: return "OutOfMemory";
    case ErrorCode::BackendUnavailable: return "BackendUnavailable";
    case ErrorCode::Unsupported: return "Unsupported";
    case ErrorCode::InvalidState: return "InvalidState";
    case ErrorCode::KernelCompile: return "KernelCompile";
    case ErrorCode::DeviceError: return "DeviceError";
    case ErrorCode::Internal: return "Internal";
  }
  return "?";
}

std::vector<std::string> default_suggestions(ErrorCode c) {
  switch (c) {
    case ErrorCode::OutOfMemory:
      return {"Reduce batch size or tensor dimensions", "Free unused buffers or empty the cache",
              "Check the device's free memory with `torsh info`"};
    case ErrorCode::BackendUnavailable:
      return {"Run `torsh info` to see why the backend is unavailable",
              "Check that the driver / ICD and the backend plugin are installed",
              "Try a different backend, or BackendType::Auto"};
    case ErrorCode::ShapeMismatch: return {"Check the operand shapes; broadcasting follows NumPy rules"};
    case ErrorCode::DTypeMismatch: return {"Cast the operands to a common dtype first"};
    case ErrorCode::DeviceMismatch: return {"Copy the tensors to one device before the op (Tensor::to)"};
    case ErrorCode::InvalidState: return {"Do not use a buffer, stream or event after it was freed or destroyed"};
    case ErrorCode::KernelCompile: return {"Read the build log above; report it with `torsh info` output"};
    case ErrorCode::Unsupported: return {"Use a backend whose capabilities list this op or dtype, or the CPU backend"};
    case ErrorCode::InvalidArgument: return {"Check the argument against the op's documentation in torsh/ops/ops.hpp"};
    case ErrorCode::OutOfRange:
      return {"Axes run from -ndim to ndim - 1; sizes, offsets and indices must lie inside the tensor or buffer"};
    case ErrorCode::DeviceError:
      return {"The driver reported a failure: check `torsh info`, the driver version, or run on another backend"};
    case ErrorCode::Internal:
      return {"This is a bug in torsh: please report it with this message and the output of `torsh info`"};
    default: return {};
  }
}

namespace {
std::string format(ErrorCode code, const std::string& msg, const ErrorContext& ctx,
                   const std::vector<std::string>& sugg) {
  std::ostringstream os;
  os << error_code_name(code);
  if (!ctx.op.empty()) os << " in " << ctx.op;
  os << ": " << msg;
  auto join = [&](const char* label, const std::vector<std::string>& v) {
    if (v.empty()) return;
    os << "\n  " << label << ": ";
    for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  };
  join("shapes", ctx.shapes);
  join("dtypes", ctx.dtypes);
  if (!ctx.device.empty()) os << "\n  device: " << ctx.device;
  for (const auto& s : sugg) os << "\n  suggestion: " << s;
  return os.str();
}
}  // namespace

Error::Error(ErrorCode code, std::string message, ErrorContext ctx, std::vector<std::string> suggestions)
    : std::runtime_error(""),
      code_(code),
      message_(std::move(message)),
      ctx_(std::move(ctx)),
      suggestions_(std::move(suggestions)) {
  // The generic InvalidArgument advice points at the op documentation; a
  // caller's own advice (a model file, a CLI value, a kernel argument) replaces it.
  if (code_ != ErrorCode::InvalidArgument || suggestions_.empty())
    for (auto& s : default_suggestions(code_)) suggestions_.push_back(std::move(s));
  static_cast<std::runtime_error&>(*this) = std::runtime_error(format(code_, message_, ctx_, suggestions_));
}

}  // namespace torsh
