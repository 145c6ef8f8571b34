#pragma once
// Tuned parameters of the CPU kernels. Each has a built-in default used when
// auto-tuning is off; with it on, the value is measured once per machine,
// thread count and size class and kept in the autotune cache.
#include <cstdint>
#include <string>

namespace torsh::cpu {

// The autotune cache's device for measurements on `threads` threads:
// "cpu:AMD EPYC family 25 model 1 (Zen 3) avx2 x2". The model name alone does
// not tell CPU generations apart (virtual machines report "AMD EPYC" for Zen 3
// and Zen 4 alike), and TORSH_CPU_ISA changes which kernels were timed.
std::string tuning_device_key(int threads);

// Smallest chunk worth giving a thread for a streaming elementwise kernel of
// n elements: n itself when one thread is fastest at that size.
std::int64_t elementwise_grain(std::int64_t n, std::int64_t default_grain);

// Whether an output larger than the last-level cache (llc_bytes) is written
// with streaming (non-temporal) stores. Built in: yes, the faster on the AMD
// and Intel cores measured (src/backends/cpu/README.md, platform); with
// auto-tuning on, an add of twice the cache's size is timed both ways once
// per machine and thread count.
bool streaming_stores_win(std::int64_t llc_bytes);
// What streaming_stores_win has decided, for reports, without measuring:
// "streaming", "plain", or "streaming (built-in)" before a measurement.
const char* store_kind();

}  // namespace torsh::cpu
