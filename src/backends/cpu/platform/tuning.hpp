#pragma once
// Tuned parameters of the CPU kernels. Each has a built-in default used when
// auto-tuning is off; with it on, the value is measured once per machine,
// thread count and size class and kept in the autotune cache.
#include <cstdint>

namespace torsh::cpu {

// Smallest chunk worth giving a thread for a streaming elementwise kernel of
// n elements: n itself when one thread is fastest at that size.
std::int64_t elementwise_grain(std::int64_t n, std::int64_t default_grain);

}  // namespace torsh::cpu
