// Portable tile (U8x4 lanes, 4 rows x 16 columns): CPUs without AVX2, and
// TORSH_CPU_ISA=generic. Plain integer loops the compiler may vectorize.
#include <cstdint>

#include "igemm.hpp"

namespace torsh::cpu::igemm {
namespace {

constexpr int kMr = 4, kNr = 16;

void tile(const unsigned char* a, const unsigned char* b, std::int64_t groups, const TileOut& out) {
  std::uint32_t acc[kMr][kNr] = {};
  for (std::int64_t g = 0; g < groups; ++g) {
    for (int r = 0; r < kMr; ++r)
      for (int j = 0; j < kNr; ++j) {
        std::int32_t s = 0;
        for (int t = 0; t < 4; ++t)
          s += static_cast<std::int32_t>(a[4 * r + t]) *
               static_cast<std::int32_t>(static_cast<std::int8_t>(b[4 * j + t]));
        acc[r][j] += static_cast<std::uint32_t>(s);  // wraps, as the vector tiles' int32 lanes
      }
    a += 4 * kMr;
    b += 4 * kNr;
  }
  for (int r = 0; r < kMr; ++r)
    for (int j = 0; j < kNr; ++j) {
      const std::uint32_t terms =
          out.col ? static_cast<std::uint32_t>(out.col[j]) + static_cast<std::uint32_t>(out.row[r]) : 0u;
      const std::uint32_t before = out.acc ? static_cast<std::uint32_t>(out.acc[r * out.ld_acc + j]) : 0u;
      out.c[r * out.ldc + j] = static_cast<std::int32_t>(acc[r][j] + terms + before);
    }
}

}  // namespace

const Kernel& kernel_generic() {
  static const Kernel k{"generic-4x16", Lane::U8x4, kMr, kNr, tile};
  return k;
}

}  // namespace torsh::cpu::igemm
