#pragma once
#include "torsh/runtime/device_info.hpp"

namespace torsh::cpu {
// Reads the host CPU's facts from the OS: model, cores, SIMD flags, memory.
DeviceInfo query_host_cpu();
bool has_feature(const DeviceInfo& info, const char* flag);
}  // namespace torsh::cpu
