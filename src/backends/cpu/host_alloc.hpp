#pragma once
// Host memory for tensors and packing buffers. Blocks of 2 MiB and more are
// 2 MiB-aligned and marked for transparent huge pages: a GEMM touches its
// packed panels and the rows of C across thousands of 4 KiB pages, and the
// page walks of those TLB misses cost several percent of its time. Where the
// kernel has THP off (or only 'never'), madvise is a no-op hint.
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>

namespace torsh::cpu {

inline constexpr std::size_t kHugePage = std::size_t(2) << 20;

// 64-byte aligned (2 MiB for large blocks); release with std::free. Null on failure.
inline void* host_alloc(std::size_t bytes) {
  if (bytes < kHugePage) return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p) madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

}  // namespace torsh::cpu
