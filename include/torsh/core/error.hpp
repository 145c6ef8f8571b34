#pragma once
// The one error type: a code, a message, where it happened (op, shapes,
// dtypes, device) and what the caller can do about it.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace torsh {

enum class ErrorCode {
  InvalidArgument,
  ShapeMismatch,
  DTypeMismatch,
  DeviceMismatch,
  OutOfRange,
  OutOfMemory,
  BackendUnavailable,
  Unsupported,
  InvalidState,   // use after free, double free, destroyed stream
  KernelCompile,  // run-time kernel compilation failed; message holds the build log
  DeviceError,    // the driver reported a failure
  Internal,
};

std::string_view error_code_name(ErrorCode c);

struct ErrorContext {
  std::string op;
  std::vector<std::string> shapes;
  std::vector<std::string> dtypes;
  std::string device;
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, std::string message, ErrorContext ctx = {}, std::vector<std::string> suggestions = {});

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  const ErrorContext& context() const { return ctx_; }
  // Explicit suggestions first, then the defaults for the code.
  const std::vector<std::string>& suggestions() const { return suggestions_; }

 private:
  ErrorCode code_;
  std::string message_;
  ErrorContext ctx_;
  std::vector<std::string> suggestions_;
};

// Default recovery advice per error code.
std::vector<std::string> default_suggestions(ErrorCode c);

}  // namespace torsh
