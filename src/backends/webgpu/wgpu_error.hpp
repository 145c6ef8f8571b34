#pragma once
// wgpu-native's C API (webgpu.h + wgpu.h, API generation 29) as this plugin
// uses it, string views both ways, and the one way a failure becomes a
// torsh::Error: what was called, what wgpu said and the device.
#include <webgpu.h>
#include <wgpu.h>

#include <string>
#include <string_view>

#include "torsh/core/error.hpp"

namespace torsh::webgpu {

inline std::string to_string(WGPUStringView s) {
  if (!s.data) return {};
  return s.length == WGPU_STRLEN ? std::string(s.data) : std::string(s.data, s.length);
}
inline WGPUStringView view(std::string_view s) { return WGPUStringView{s.data(), s.size()}; }

// "Validation", "OutOfMemory", ... for an error type wgpu reported.
const char* error_type_name(WGPUErrorType t);

// Throws Error(code) naming `call`, wgpu's message and `device` ("webgpu:0 (name)").
[[noreturn]] void throw_wgpu(ErrorCode code, const std::string& call, const std::string& message,
                             const std::string& device);

// What an error scope caught: its type (NoError when nothing) and wgpu's message.
struct ScopeResult {
  bool done = false;
  WGPUErrorType type = WGPUErrorType_NoError;
  std::string message;
};
// Pops the device's innermost error scope and waits for its answer.
ScopeResult pop_scope(WGPUInstance instance, WGPUDevice device);

}  // namespace torsh::webgpu
