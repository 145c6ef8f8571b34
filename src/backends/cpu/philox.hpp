#pragma once
// The shared Philox kernel body compiled as host C++ (tests check it against
// the Random123 known-answer vectors).
#include <cstdint>

namespace torsh::cpu::philox {
using uint = std::uint32_t;
using ulong = std::uint64_t;
#define DEVICE_FN static inline
#include "../../kernels/philox.kern.h"
#undef DEVICE_FN
}  // namespace torsh::cpu::philox
