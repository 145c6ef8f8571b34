#include "wgpu_error.hpp"

namespace torsh::webgpu {

const char* error_type_name(WGPUErrorType t) {
  switch (t) {
    case WGPUErrorType_NoError: return "no error";
    case WGPUErrorType_Validation: return "validation error";
    case WGPUErrorType_OutOfMemory: return "out of memory";
    case WGPUErrorType_Internal: return "internal error";
    default: return "unknown error";
  }
}

void throw_wgpu(ErrorCode code, const std::string& call, const std::string& message, const std::string& device) {
  std::vector<std::string> hints;
  if (code == ErrorCode::OutOfMemory) hints.emplace_back("Free tensors or use smaller ones on this device");
  if (code == ErrorCode::KernelCompile) hints.emplace_back("Fix the WGSL at the line and column the message names");
  throw Error(code, call + " failed on " + device + ": " + message, {.op = call, .device = device}, std::move(hints));
}

namespace {
void on_scope(WGPUPopErrorScopeStatus, WGPUErrorType type, WGPUStringView message, void* out, void*) {
  auto* r = static_cast<ScopeResult*>(out);
  r->type = type;
  r->message = to_string(message);
  r->done = true;
}
}  // namespace

ScopeResult pop_scope(WGPUInstance instance, WGPUDevice device) {
  ScopeResult r;
  WGPUPopErrorScopeCallbackInfo cb = WGPU_POP_ERROR_SCOPE_CALLBACK_INFO_INIT;
  cb.mode = WGPUCallbackMode_AllowProcessEvents;
  cb.callback = on_scope;
  cb.userdata1 = &r;
  wgpuDevicePopErrorScope(device, cb);
  while (!r.done) wgpuInstanceProcessEvents(instance);
  return r;
}

}  // namespace torsh::webgpu
