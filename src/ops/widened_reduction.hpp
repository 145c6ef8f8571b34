#pragma once
// The bound on the widened copy an integer sum, mean or variance makes
// (reduce.cpp): past it the input is reduced in slices. Tests lower it to
// run the sliced path on small tensors; 0 restores the default (16 MiB).
#include <cstdint>

namespace torsh::ops {
void set_widened_reduction_bytes(std::int64_t bytes);
}  // namespace torsh::ops
