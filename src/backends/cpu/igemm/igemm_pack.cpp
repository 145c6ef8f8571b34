// Packing for the int8 GEMM (igemm.hpp): operands normalised to a' unsigned
// and b' signed, laid out in lane format, with their row / column sums.
#include <algorithm>
#include <cstring>

#include "igemm.hpp"

namespace torsh::cpu::igemm {

std::size_t panel_bytes(const Kernel& kn, int rows, std::int64_t k) {
  const std::int64_t kpl = k_per_lane(kn.lane);
  return static_cast<std::size_t>((k + kpl - 1) / kpl) * static_cast<std::size_t>(rows) * 4;
}

void pack_a(const Kernel& kn, const unsigned char* a, std::int64_t m, std::int64_t k, bool a_signed, std::int64_t r0,
            unsigned char* dst, std::int32_t* sums) {
  const int kpl = k_per_lane(kn.lane), mr = kn.mr;
  const std::int64_t groups = (k + kpl - 1) / kpl;
  const unsigned flip = a_signed ? 0x80u : 0u;  // i8 + 128 == the byte XOR 0x80, as u8
  for (int r = 0; r < mr; ++r) {
    const std::int64_t row = r0 + r;
    std::int32_t sum = 0;
    if (kn.lane == Lane::U8x4) {
      unsigned char* d = dst + 4 * r;
      if (row < m) {
        const unsigned char* src = a + row * k;
        for (std::int64_t g = 0; g < groups; ++g, d += 4 * mr)
          for (int t = 0; t < 4; ++t) {
            const std::int64_t kk = g * 4 + t;
            const unsigned char v = kk < k ? static_cast<unsigned char>(src[kk] ^ flip) : 0;
            d[t] = v;
            sum += v;
          }
      } else {
        for (std::int64_t g = 0; g < groups; ++g, d += 4 * mr) std::memset(d, 0, 4);
      }
    } else {
      std::int16_t* d = reinterpret_cast<std::int16_t*>(dst) + 2 * r;
      if (row < m) {
        const unsigned char* src = a + row * k;
        for (std::int64_t g = 0; g < groups; ++g, d += 2 * mr)
          for (int t = 0; t < 2; ++t) {
            const std::int64_t kk = g * 2 + t;
            const std::int16_t v = kk < k ? static_cast<std::int16_t>(src[kk] ^ flip) : 0;
            d[t] = v;
            sum += v;
          }
      } else {
        for (std::int64_t g = 0; g < groups; ++g, d += 2 * mr) d[0] = d[1] = 0;
      }
    }
    sums[r] = sum;
  }
}

void pack_b(const Kernel& kn, const unsigned char* b, std::int64_t k, std::int64_t n, bool b_unsigned, std::int64_t c0,
            unsigned char* dst, std::int32_t* sums) {
  const int kpl = k_per_lane(kn.lane), nr = kn.nr;
  const std::int64_t groups = (k + kpl - 1) / kpl;
  const int cols = static_cast<int>(std::min<std::int64_t>(nr, n - c0));
  std::fill(sums, sums + nr, 0);
  std::memset(dst, 0, panel_bytes(kn, nr, k));
  // b' = b - 128 for u8 (as int8: the byte XOR 0x80); i8 as it is.
  const unsigned flip = b_unsigned ? 0x80u : 0u;
  for (std::int64_t g = 0; g < groups; ++g)
    for (int t = 0; t < kpl; ++t) {
      const std::int64_t kk = g * kpl + t;
      if (kk >= k) break;
      const unsigned char* row = b + kk * n + c0;
      if (kn.lane == Lane::U8x4) {
        unsigned char* d = dst + (g * nr) * 4 + t;
        for (int j = 0; j < cols; ++j) {
          const unsigned char v = static_cast<unsigned char>(row[j] ^ flip);
          d[4 * j] = v;
          sums[j] += static_cast<std::int8_t>(v);
        }
      } else {
        std::int16_t* d = reinterpret_cast<std::int16_t*>(dst) + (g * nr) * 2 + t;
        for (int j = 0; j < cols; ++j) {
          const std::int16_t v = static_cast<std::int8_t>(static_cast<unsigned char>(row[j] ^ flip));
          d[2 * j] = v;
          sums[j] += v;
        }
      }
    }
}

}  // namespace torsh::cpu::igemm
