// Repeats a 1-, 2-, 4- or 8-byte pattern over a byte range. cudaMemsetAsync
// only repeats single bytes, so wider patterns are written by a small kernel:
// as whole elements when the range is aligned to the pattern, byte by byte
// (each byte taking its place in the pattern) when it is not.
#include "launch.hpp"

#include <cstring>

namespace {

template <class T>
__global__ void fill_elements(T* dst, long n, T value) {
  for (long i = GLOBAL_ID0(); i < n; i += GLOBAL_SIZE0()) dst[i] = value;
}

// Byte i of the range is byte (i % psize) of the pattern, little-endian on host and device alike.
__global__ void fill_bytes_phased(unsigned char* dst, long n, unsigned long long pattern, int psize) {
  for (long i = GLOBAL_ID0(); i < n; i += GLOBAL_SIZE0())
    dst[i] = static_cast<unsigned char>(pattern >> (8 * (i % psize)));
}

}  // namespace

namespace torsh::cuda {

namespace {
template <class T>
void fill_as(CudaStream& s, unsigned char* dst, std::size_t n, const void* pattern) {
  T value;
  std::memcpy(&value, pattern, sizeof value);
  const long count = static_cast<long>(n / sizeof(T));
  const auto [grid, block] = grid_1d(s.device(), count);
  launch(s, TORSH_CUDA_KERNEL(fill_elements<T>), grid, block, reinterpret_cast<T*>(dst), count, value);
}
}  // namespace

void fill(CudaStream& s, unsigned char* dst, std::size_t n, const void* pattern, std::size_t psize) {
  const auto* p = static_cast<const unsigned char*>(pattern);
  bool one_byte = true;  // zeros and other byte-repeating patterns of any width
  for (std::size_t i = 1; i < psize; ++i) one_byte = one_byte && p[i] == p[0];
  if (one_byte) {
    check_cuda(cudaMemsetAsync(dst, p[0], n, s.handle()), "cudaMemsetAsync", s.device().label());
    return;
  }
  // cudaMalloc returns 256-byte aligned memory, so the address's alignment is the offset's.
  if (reinterpret_cast<std::uintptr_t>(dst) % psize == 0 && n % psize == 0) {
    switch (psize) {
      case 2: return fill_as<unsigned short>(s, dst, n, pattern);
      case 4: return fill_as<unsigned int>(s, dst, n, pattern);
      case 8: return fill_as<unsigned long long>(s, dst, n, pattern);
      default: break;
    }
  }
  if (psize != 2 && psize != 4 && psize != 8)
    throw Error(ErrorCode::InvalidArgument, "fill pattern of " + std::to_string(psize) + " bytes; use 1, 2, 4 or 8",
                {.op = "fill", .device = s.device().label()});
  unsigned long long bits = 0;
  std::memcpy(&bits, pattern, psize);
  const auto [grid, block] = grid_1d(s.device(), static_cast<std::int64_t>(n));
  launch(s, TORSH_CUDA_KERNEL(fill_bytes_phased), grid, block, dst, static_cast<long>(n), bits,
         static_cast<int>(psize));
}

}  // namespace torsh::cuda
