#pragma once
// Host memory for the CPU backend's buffers and scratch: 64-byte aligned;
// from kHugeFrom on, 2 MiB aligned with transparent huge pages asked for
// over its whole 2 MiB pages (Linux's default THP mode, "madvise", gives
// them only to ranges that ask). A stream then walks pages the hardware
// prefetchers need not retrain at every 4 KiB, and runs faster. kHugeFrom is
// 16 MiB, not less: smaller buffers' partly used 2 MiB pages add resident
// memory (src/backends/cpu/README.md, platform). Where THP is off the advice
// is ignored. Free with std::free.
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>

namespace torsh::cpu {

inline constexpr std::size_t kHugePage = std::size_t{2} << 20;
inline constexpr std::size_t kHugeFrom = 8 * kHugePage;

// nullptr when the memory is not there.
inline void* allocate_host(std::size_t bytes) {
  if (bytes < kHugeFrom) return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  void* p = nullptr;
  if (posix_memalign(&p, kHugePage, bytes) != 0) return nullptr;
  madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);  // a hint: its failure changes nothing
  return p;
}

}  // namespace torsh::cpu
