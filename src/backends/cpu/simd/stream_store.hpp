#pragma once
// Outputs too large to stay in the last-level cache are written around it
// with non-temporal stores: a plain store first reads the line it fills (the
// write-allocate), so a streaming op moves a third more bytes than it needs
// to; going around the cache saves that read. Below the threshold plain
// stores win, since the next op finds the output in cache.
#include <algorithm>
#include <cstdint>

namespace torsh::cpu {

// True when an op writing `bytes` in one call should stream them: more than
// the last-level cache holds, on a CPU where streaming stores win
// (platform/tuning.hpp).
bool stream_worthwhile(std::int64_t bytes);
// The size past which outputs stream: the last-level cache this CPU shares.
std::int64_t stream_threshold_bytes();

// dst[0, n) = src[0, n); non-temporal stores where dst is 16-byte aligned.
// Those stores are weakly ordered: stream_fence() must follow the last of
// them before another thread may read dst (the fence waits for them, so it
// is issued once per call, not per block).
void copy_streaming(const float* src, float* dst, std::int64_t n);
void stream_fence();

// Row-wise ops (softmax, the norms) build each row in a per-thread buffer
// and stream it out: worth it when `rows` rows of n floats outgrow the cache
// and a row (at most 16384 floats) stays in L2 while it is built.
bool stream_rows_worthwhile(std::int64_t rows, std::int64_t n);
// The calling thread's buffer for one row of n floats.
float* stream_row_buffer(std::int64_t n);

// Runs produce(stage, offset, len) into a block that stays in L1, and streams
// each block to y[offset, offset + len).
template <class F>
void write_streaming(float* y, std::int64_t n, F&& produce) {
  constexpr std::int64_t kBlock = 1024;  // 4 KiB: L1-resident beside the inputs
  alignas(64) float stage[kBlock];
  for (std::int64_t i = 0; i < n; i += kBlock) {
    const std::int64_t len = std::min(kBlock, n - i);
    produce(stage, i, len);
    copy_streaming(stage, y + i, len);
  }
  stream_fence();
}

}  // namespace torsh::cpu
