#pragma once
// The shared Philox kernel body compiled as host C++ (tests check it against
// the Random123 known-answer vectors), with its sampling functions, so the CPU
// draws the same bits as the GPU kernels (src/backends/gpu/kernels/random.kern.h).
#include <bit>
#include <cstdint>

namespace torsh::cpu::philox {
using uint = std::uint32_t;
using ulong = std::uint64_t;

// Keeps a value in a register as the compiler computed it: a product that
// passes through here cannot be fused with a later add (GCC contracts a * b + c
// across statements wherever the target has FMA).
inline void keep_rounded(float& v) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __asm__("" : "+x"(v));
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(v));
#elif defined(__GNUC__)
  __asm__("" : "+m"(v));
#else
  volatile float hold = v;
  v = hold;
#endif
}

// dialect.h's mul_add_unfused on the host: a * b rounded, then + c rounded.
inline float mul_add_unfused(float a, float b, float c) {
  float p = a * b;
  keep_rounded(p);
  keep_rounded(c);
  return p + c;
}

// dialect.h's dot2_unfused on the host: a * b + c * d, each step rounded.
inline float dot2_unfused(float a, float b, float c, float d) {
  float p = a * b, q = c * d;
  keep_rounded(p);
  keep_rounded(q);
  return p + q;
}

#define DEVICE_FN static inline
#define AS_FLOAT(u) std::bit_cast<float>(static_cast<std::uint32_t>(u))
#define AS_UINT(f) std::bit_cast<std::uint32_t>(static_cast<float>(f))
#include "../gpu/kernels/philox.kern.h"
#undef AS_UINT
#undef AS_FLOAT
#undef DEVICE_FN
}  // namespace torsh::cpu::philox
