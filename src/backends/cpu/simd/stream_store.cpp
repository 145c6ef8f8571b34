#include "stream_store.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>

#include "../platform/isa.hpp"
#include "../platform/scratch.hpp"
#include "../platform/tuning.hpp"
#include "simd_avx2.hpp"
#include "simd_avx512.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace torsh::cpu {

namespace {

// The last-level cache this CPU shares, from sysfs: in a VM, sysconf (CPUID)
// can report the whole host socket's L3 (256 MiB) where the guest's cores
// share one 32 MiB slice.
std::int64_t last_level_cache_bytes() {
  std::int64_t best = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::int64_t kib = 0;
    char unit = 0;
    if (f >> kib >> unit && unit == 'K') best = std::max(best, kib * 1024);
  }
  if (best > 0) return best;
  const long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return v > 0 ? v : std::int64_t{32} << 20;
}

}  // namespace

std::int64_t stream_threshold_bytes() {
  static const std::int64_t threshold = last_level_cache_bytes();
  return threshold;
}

bool stream_worthwhile(std::int64_t bytes) {
  const std::int64_t threshold = stream_threshold_bytes();
  return bytes > threshold && streaming_stores_win(threshold);
}

#if defined(__x86_64__)
namespace {

// Wide stores: on some cores 16-byte streaming stores stream out markedly
// slower than 32- or 64-byte ones (src/backends/cpu/README.md, simd).
__attribute__((target("avx512f"))) void copy_streaming_avx512(const float* src, float* dst, std::int64_t n) {
  std::int64_t i = 0;
  for (; i < n && (reinterpret_cast<std::uintptr_t>(dst + i) & 63) != 0; ++i) dst[i] = src[i];
  for (; i + 16 <= n; i += 16) _mm512_stream_ps(dst + i, _mm512_loadu_ps(src + i));
  for (; i < n; ++i) dst[i] = src[i];
}

__attribute__((target("avx"))) void copy_streaming_avx(const float* src, float* dst, std::int64_t n) {
  std::int64_t i = 0;
  for (; i < n && (reinterpret_cast<std::uintptr_t>(dst + i) & 31) != 0; ++i) dst[i] = src[i];
  for (; i + 16 <= n; i += 16) {
    _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
    _mm256_stream_ps(dst + i + 8, _mm256_loadu_ps(src + i + 8));
  }
  for (; i < n; ++i) dst[i] = src[i];
}

}  // namespace
#endif

void copy_streaming(const float* src, float* dst, std::int64_t n) {
#if defined(__x86_64__)
  if (isa_usable(Isa::Avx512)) return copy_streaming_avx512(src, dst, n);
  if (isa_usable(Isa::Avx2)) return copy_streaming_avx(src, dst, n);
  std::int64_t i = 0;
  for (; i < n && (reinterpret_cast<std::uintptr_t>(dst + i) & 15) != 0; ++i) dst[i] = src[i];
  for (; i + 16 <= n; i += 16) {
    _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
    _mm_stream_ps(dst + i + 4, _mm_loadu_ps(src + i + 4));
    _mm_stream_ps(dst + i + 8, _mm_loadu_ps(src + i + 8));
    _mm_stream_ps(dst + i + 12, _mm_loadu_ps(src + i + 12));
  }
  for (; i + 4 <= n; i += 4) _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
  for (; i < n; ++i) dst[i] = src[i];
#else
  std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(float));
#endif
}

void stream_fence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

bool stream_rows_worthwhile(std::int64_t rows, std::int64_t n) {
  constexpr std::int64_t kMaxRow = 16384;
  return n <= kMaxRow && stream_worthwhile(rows * n * static_cast<std::int64_t>(sizeof(float)));
}

float* stream_row_buffer(std::int64_t n) {
  thread_local Scratch row;
  return static_cast<float*>(row.get(static_cast<std::size_t>(n) * sizeof(float)));
}

}  // namespace torsh::cpu
